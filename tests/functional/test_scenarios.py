"""Every scenario file in tests/functional/scenarios, as test methods.

One test class per file (so stestr's group_regex keeps a file in one
worker) and, with ddt, one test method per scenario in it. Test IDs carry
the file name, the scenario name and its bug IDs, so ``stestr run
resize_confirm`` or ``stestr run 1944759`` selects them.

A file's scenarios are numbered with those of one cloud shape together
(``shapes.in_shape_order``; the number in a test's name is its place in
that order). The first one stands for its file when the gate compares
runs with and without checks for one scenario per file
(``cases.COMPARE_ENV``). And they run in shape order across files
(``load_tests``): consecutive scenarios of a shape share the worker's
kept cloud, so each shape's cloud stands up about once per worker, not
once per file (files share shapes: two fake hosts, two developer hosts).
"""

import glob
import os
import re

import ddt

from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.core import shapes
from harness import testing
import tests

SCENARIO_DIR = os.path.join(os.path.dirname(__file__), 'scenarios')


def _class_for(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = ''.join(part.title() for part in stem.split('_'))
    try:
        scenarios = shapes.in_shape_order(scenario_mod.load(path))
    except errors.ScenarioError as exc:
        message = str(exc)

        def test_load(self):
            self.fail(message)

        return name, type(name, (testing.TestCase,),
                          {'test_load': test_load})
    for scenario in scenarios:
        # ddt names each test after its datum's __name__.
        scenario.__name__ = scenario.id

    @ddt.ddt
    class FileScenarios(testing.ScenarioTestCase):

        @ddt.data(*scenarios)
        def test(self, scenario):
            self.run_scenario(scenario,
                              stands_for_file=scenario is scenarios[0])

    FileScenarios.__name__ = FileScenarios.__qualname__ = name
    # In ddt's order: test N runs scenarios[N - 1].
    FileScenarios.scenarios = scenarios
    return name, FileScenarios


_NUMBER = re.compile(r'^test_(\d+)_')


def load_tests(loader, standard_tests, pattern):
    """The scenario tests with those of one cloud shape together.

    Shapes in the order of their first scenario (files in name order);
    within a shape, files in name order and each file's own order
    (``tests.by_shape``).
    """
    return tests.by_shape(standard_tests, scenario_of)


def scenario_of(case):
    """The scenario a test of this module runs (None: a file's load)."""
    return tests.numbered_scenario(case, _NUMBER)


def _load_all():
    for path in sorted(glob.glob(os.path.join(SCENARIO_DIR, '*.yaml'))):
        name, cls = _class_for(path)
        globals()[name] = cls


_load_all()
