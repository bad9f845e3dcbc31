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

import testtools

from harness import testing

ORDER_ENV = 'HARNESS_TEST_ORDER'


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
    cases = sorted(testtools.iterate_tests(suite),
                   key=lambda case: case.id())
    random.Random(seed).shuffle(cases)
    return testing.OrderedSuite(cases)
