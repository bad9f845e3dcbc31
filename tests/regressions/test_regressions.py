"""Every registered bug's scenarios, as one test class per bug.

The classes are generated from the bug files (``harness/bugs/lp<ID>.yaml``):
adding a bug adds its class. One class per file keeps a bug's scenarios
in one stestr worker (``group_regex``); with ddt, one test method per
scenario, named ``test_bug_<ID>_<n>_<scenario>`` and tied to the bug with
``related_bug``, so ``stestr run 1944759`` selects it and a failure links
the bug. Each runs with the invariants on, as ``ScenarioTestCase`` runs
them, less those the bug's ``invariants_off`` names (with its reason
there), honouring the scenario's ``expected_breaks``. They run in shape
order across bugs (``load_tests``), as the scenario tests do, so a
worker's kept cloud serves a shape's tests in a row.

Which outcome a test expects depends on the Nova installed: on a release
with the bug's fix (``fixed_in``, ``Bug.fixed_on``) the scenario passes;
on one that predates it, the scenario must show the bug itself, wrong
accounting as the bug put back shows it (``Problem.accounting``), with
no reintroduction: the release matrix (``tox -e functional-nova33``)
proves each fix on real code, before and after.
"""

import os
import re

import ddt

from harness import bugs
from harness.cloud import install
from harness.core import errors
from harness import testing
import tests


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
        version = install.nova_version()
        if bug.fixed_on(version):
            self.run_scenario(scenario)
        else:
            _shows_the_bug(self, bug, scenario, version)

    test.__name__ = test.__qualname__ = 'test_bug_%s' % bug.id

    cls = type(name, (testing.ScenarioTestCase,), {
        '__doc__': 'LP#%s: %s (%s)' % (bug.id, bug.title, bug.link),
        '__module__': __name__,
        'invariants': bug.invariants,
        # In ddt's order: test N runs scenarios[N - 1].
        'scenarios': bug.scenarios,
        test.__name__: ddt.data(*bug.scenarios)(
            bugs.related_bug(bug.id)(test)),
    })
    return name, ddt.ddt(cls)


def _shows_the_bug(test, bug, scenario, version):
    """On a Nova without the fix, the scenario fails as the bug does."""
    from harness.cloud import reuse
    from harness.core import invariants
    from harness.runners import runner
    checker = invariants.Checker(enabled=bug.invariants)
    timeline = runner.run(
        scenario, keep_going=True, checks=[checker],
        pool=test.useFixture(reuse.CloudPool()), test_id=test.id())
    problems = [p for entry in timeline for p in entry.problems]
    test.assertTrue(
        any(p.accounting for p in problems),
        'LP#%s: Nova %s predates the fix (fixed in %s), so %s must show '
        'the bug as wrong accounting, but it did not (checks that failed: '
        '%s)' % (bug.id, '.'.join(map(str, version)), bug.fixed_in_text,
                 scenario.name,
                 sorted({p.check for p in problems}) or 'none'))


_NUMBER = re.compile(r'^test_bug_[^_]+_(\d+)_')


def load_tests(loader, standard_tests, pattern):
    """The bugs' tests with those of one cloud shape together.

    As the scenario tests (``tests.by_shape``): a worker's kept cloud
    serves the tests of a shape in a row, whatever bugs they are of.
    """
    return tests.by_shape(standard_tests, scenario_of)


def scenario_of(case):
    """The scenario a test of this module runs (None: a file's load)."""
    return tests.numbered_scenario(case, _NUMBER)


def _load_all():
    for path in bugs.paths():
        name, cls = _class_for(path)
        globals()[name] = cls


_load_all()
