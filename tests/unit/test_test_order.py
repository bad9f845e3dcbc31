"""HARNESS_TEST_ORDER: the tests' own shuffle (tests/__init__.py)."""

import io
import unittest
from unittest import mock

import fixtures
import testtools

import tests


def _suite():
    # Twelve cases (12! orders: two seeds giving one order is no luck),
    # of a class made here, so that no runner collects them.
    cases_class = type('Cases', (unittest.TestCase,), {
        'test_%02d' % n: lambda self: None for n in range(12)})
    loader = unittest.TestLoader()
    # Nested as discovery nests them, and not in ID order.
    cases = list(loader.loadTestsFromTestCase(cases_class))
    return unittest.TestSuite([unittest.TestSuite(cases[6:]),
                               unittest.TestSuite(cases[:6])])


def _ids(suite):
    return [case.id() for case in testtools.iterate_tests(suite)]


class TestTestOrder(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # The seed's line.
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))

    def test_no_order_leaves_the_suite_alone(self):
        suite = _suite()
        self.assertIs(suite, tests.in_order(suite, None))
        self.assertIs(suite, tests.in_order(suite, ''))

    def test_a_seed_gives_one_order_however_the_suite_came(self):
        first = _ids(tests.in_order(_suite(), '7'))
        backwards = unittest.TestSuite(
            reversed(list(testtools.iterate_tests(_suite()))))
        self.assertEqual(first, _ids(tests.in_order(backwards, '7')))
        self.assertEqual(sorted(_ids(_suite())), sorted(first))
        self.assertNotEqual(first, _ids(tests.in_order(_suite(), '8')))
        self.assertNotEqual(sorted(first), first)

    def test_random_draws_a_seed_and_says_which(self):
        with mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            shuffled = _ids(tests.in_order(_suite(), 'random'))
        line = err.getvalue().strip()
        self.assertTrue(line.startswith(
            'tests in random order: HARNESS_TEST_ORDER='), line)
        seed = line.rsplit('=', 1)[1]
        self.assertEqual(shuffled, _ids(tests.in_order(_suite(), seed)))

    def test_testtools_keeps_the_shuffled_order(self):
        # testtools sorts discovered suites by ID, except suites of other
        # types, which it keeps as they are.
        shuffled = tests.in_order(_suite(), '7')
        self.assertEqual(_ids(shuffled),
                         _ids(testtools.testsuite.sorted_tests(
                             unittest.TestSuite([shuffled]))))

    def test_not_a_seed(self):
        error = self.assertRaises(SystemExit, tests.in_order, _suite(),
                                  'sometimes')
        self.assertIn('HARNESS_TEST_ORDER is "random" or a seed',
                      str(error))
