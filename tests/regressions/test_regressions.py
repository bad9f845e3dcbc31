"""Every registered bug's scenarios, as one test class per bug.

The classes are generated from the bug files (``harness/bugs/lp<ID>.yaml``):
adding a bug adds its class. One class per file keeps a bug's scenarios
in one stestr worker (``group_regex``); with ddt, one test method per
scenario, named ``test_bug_<ID>_<n>_<scenario>`` and tied to the bug with
``related_bug``, so ``stestr run 1944759`` selects it and a failure links
the bug. Each runs with the invariants on, as ``ScenarioTestCase`` runs
them, less those the bug's ``invariants_off`` names (with its reason
there), honouring the scenario's ``expected_breaks``.
"""

import os
import re

import ddt

from harness import bugs
from harness.core import errors
from harness import testing


def _class_for(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = 'TestBug%s' % stem[len('lp'):]
    try:
        bug = bugs.load(path)
    except errors.HarnessError as exc:
        # A malformed bug file fails its own test, not the whole module.
        message = str(exc)

        def test_load(self):
            self.fail(message)

        return name, type(name, (testing.TestCase,),
                          {'test_load': test_load})
    for scenario in bug.scenarios:
        # ddt names each test after its datum's __name__.
        scenario.__name__ = re.sub(r'[^a-z0-9]+', '_',
                                   scenario.name.lower()).strip('_')

    def test(self, scenario):
        self.run_scenario(scenario)

    test.__name__ = test.__qualname__ = 'test_bug_%s' % bug.id

    cls = type(name, (testing.ScenarioTestCase,), {
        '__doc__': 'LP#%s: %s (%s)' % (bug.id, bug.title, bug.link),
        '__module__': __name__,
        'invariants': bug.invariants,
        test.__name__: ddt.data(*bug.scenarios)(
            bugs.related_bug(bug.id)(test)),
    })
    return name, ddt.ddt(cls)


def _load_all():
    for path in bugs.paths():
        name, cls = _class_for(path)
        globals()[name] = cls


_load_all()
