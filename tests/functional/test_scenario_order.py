"""The scenario tests run with those of one cloud shape together.

``tests.functional.test_scenarios.load_tests`` and
``tests.regressions.test_regressions.load_tests`` build their tests with
``harness.testing.build_tests`` and ``build_bug_tests``, which order them
by shape (``harness.testing.in_shape_order``), so that a worker's kept
cloud serves every scenario of a shape in a row
(``harness.cloud.reuse``).
"""

import unittest

import testtools

from harness.core import shapes
from harness import testing
from tests.functional import test_scenarios
from tests.regressions import test_regressions


class TestScenarioOrder(testing.TestCase):

    def _stretches(self, module, named):
        """(stretches of one shape, shapes per class) of ``module``'s run.

        ``named(case, scenario)``: whether the test is named after the
        scenario it runs.
        """
        loader = unittest.TestLoader()
        ordered = list(testtools.iterate_tests(
            loader.loadTestsFromModule(module)))
        classes = [value for value in vars(module).values()
                   if isinstance(value, type)
                   and hasattr(value, 'scenarios')]
        # Every scenario test, once.
        plain = [case for cls in classes
                 for case in loader.loadTestsFromTestCase(cls)]
        self.assertEqual(sorted(case.id() for case in plain),
                         sorted(case.id() for case in ordered))
        order = []
        for case in ordered:
            scenario = testing.scenario_of(case)
            # The test is the scenario's: ddt names it after the scenario.
            self.assertTrue(named(case, scenario), case.id())
            order.append(repr(shapes.cloud_shape(scenario)))
        # A shape's tests come in one stretch: it never comes back.
        stretches = [key for number, key in enumerate(order)
                     if number == 0 or order[number - 1] != key]
        self.assertEqual(len(set(order)), len(stretches))
        by_class = sum(len({repr(shapes.cloud_shape(s))
                            for s in cls.scenarios}) for cls in classes)
        return stretches, by_class

    def test_each_shape_runs_in_one_stretch(self):
        stretches, by_file = self._stretches(
            test_scenarios,
            lambda case, scenario: case.id().endswith('_' + scenario.id))
        # Files share shapes: fewer stretches than file by file.
        self.assertLess(len(stretches), by_file)

    def test_each_shape_of_the_bugs_runs_in_one_stretch(self):
        stretches, by_bug = self._stretches(
            test_regressions,
            lambda case, scenario: case.id().endswith(
                '_' + scenario.__name__))
        # Bugs share shapes: fewer stretches than bug by bug.
        self.assertLess(len(stretches), by_bug)
