"""The harness's tests; ``load_tests`` can shuffle them.

``stestr run --random`` shuffles the list of tests it gives each worker,
but stestr's runner runs a worker's tests in the order it discovered
them, whatever the list's: the shuffle never reached the run. With
``HARNESS_TEST_ORDER=random`` (``tox -e functional-random``) each test
process runs its tests in an order of its own, drawn from a seed it
prints on standard error; ``HARNESS_TEST_ORDER=<seed>`` runs that order
again (with the same tests in the process: ``stestr run --load-list``).
"""

import os
import random
import sys
import unittest

ORDER_ENV = 'HARNESS_TEST_ORDER'


class OrderedSuite(unittest.TestSuite):
    """Tests in the order given: testtools sorts only plain suites."""

    def sort_tests(self):
        pass


def load_tests(loader, standard_tests, pattern):
    here = os.path.dirname(os.path.abspath(__file__))
    # With a load_tests of its own a package is not searched further:
    # search it here (the loader skips this package itself).
    standard_tests.addTests(loader.discover(
        start_dir=here, pattern=pattern or 'test*.py',
        top_level_dir=os.path.dirname(here)))
    return in_order(standard_tests, os.environ.get(ORDER_ENV))


def in_order(suite, order):
    """``suite`` as it is (``order`` empty), or shuffled (see above)."""
    if not order:
        return suite
    try:
        seed = (random.SystemRandom().randrange(2 ** 32)
                if order == 'random' else int(order))
    except ValueError:
        raise SystemExit('%s is "random" or a seed (an integer), not %r'
                         % (ORDER_ENV, order))
    sys.stderr.write('tests in random order: %s=%d\n' % (ORDER_ENV, seed))
    # From the IDs' order: a seed gives one order, however found.
    cases = sorted(_cases(suite), key=lambda case: case.id())
    random.Random(seed).shuffle(cases)
    return OrderedSuite(cases)


def numbered_scenario(case, number):
    """The scenario a test of a generated class runs, or None.

    ddt numbers a class's tests in its data's order: test N runs the
    class's ``scenarios[N - 1]``. ``number`` finds N in the test's name
    (its first group). None for a test of no scenario (a file's load).
    """
    found = number.match(case.id().rsplit('.', 1)[-1])
    scenarios = getattr(type(case), 'scenarios', None)
    if found is None or scenarios is None:
        return None
    return scenarios[int(found.group(1)) - 1]


def by_shape(suite, scenario_of):
    """``suite``'s tests with those of one cloud shape together.

    Shapes in the order of their first test (by ID); within a shape, by
    ID. ``scenario_of(case)`` is the scenario a test runs, or None for a
    test of no scenario (a file that did not load), which comes first. A
    worker runs its share in this order, so its kept cloud
    (``harness.cloud.reuse``) serves every test of a shape in a row.
    """
    from harness.core import shapes
    first = {}
    keyed = []
    for case in sorted(_cases(suite), key=lambda case: case.id()):
        scenario = scenario_of(case)
        if scenario is None:
            keyed.append(((-1, case.id()), case))
            continue
        shape = repr(shapes.cloud_shape(scenario))
        keyed.append(((first.setdefault(shape, len(first)), case.id()),
                      case))
    return OrderedSuite(case for key, case in sorted(
        keyed, key=lambda pair: pair[0]))


def _cases(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _cases(test)
        else:
            yield test
