"""The scenario tests run with those of one cloud shape together.

``tests.functional.test_scenarios.load_tests`` orders them by shape
across files, so that a worker's kept cloud serves every scenario of a
shape in a row (``harness.cloud.reuse``).
"""

import unittest

import testtools

from harness.core import shapes
from harness import testing
from tests.functional import test_scenarios


class TestScenarioOrder(testing.TestCase):

    def test_each_shape_runs_in_one_stretch(self):
        loader = unittest.TestLoader()
        ordered = list(testtools.iterate_tests(
            loader.loadTestsFromModule(test_scenarios)))
        classes = [value for value in vars(test_scenarios).values()
                   if isinstance(value, type)
                   and hasattr(value, 'scenarios')]
        # Every scenario test, once.
        plain = [case for cls in classes
                 for case in loader.loadTestsFromTestCase(cls)]
        self.assertEqual(sorted(case.id() for case in plain),
                         sorted(case.id() for case in ordered))
        order = []
        for case in ordered:
            scenario = test_scenarios.scenario_of(case)
            # The test is the scenario's: ddt names it after the scenario.
            self.assertTrue(case.id().endswith('_' + scenario.id),
                            case.id())
            order.append(repr(shapes.cloud_shape(scenario)))
        # A shape's tests come in one stretch: it never comes back.
        stretches = [key for number, key in enumerate(order)
                     if number == 0 or order[number - 1] != key]
        self.assertEqual(len(set(order)), len(stretches))
        # Files share shapes: fewer stretches than file by file.
        by_file = sum(len({repr(shapes.cloud_shape(s))
                           for s in cls.scenarios}) for cls in classes)
        self.assertLess(len(stretches), by_file)
