"""Where the scenario tests' time goes on kept clouds, and why clouds go.

Runs the functional suite's scenario tests (``tests.functional.
test_scenarios``, in the suite's shape order, the first of each file
compared without checks as the gate does) in this one process, on its
shared pool of kept clouds, and prints the wall time of each phase with
its share of the whole: the steps, the checks after them (and of those
the periodic-idempotence check), the stand-ups of new clouds, the runs
compared without checks, snapshots, settling, checkpoints taken and put
back, the catalogue (flavors and images) and the leak check. Phases
nest (a check takes a snapshot), so the shares do not add up. Then how
many clouds stood up and were reused, and why the pool gave its clouds
up (``reuse.CloudPool.given_up``).

    python benchmarks/suite_phases.py [--every N] [--limit N]
        [--filter REGEX]

``--every 3`` takes every third test (a sample with the suite's mix of
shapes, though more shape changes than the whole suite has); ``--filter``
keeps the tests whose ID it finds. Nothing of Nova is touched; the
harness's own entry points are wrapped with timers.
"""

import argparse
import collections
import functools
import os
import re
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TOTALS = collections.defaultdict(float)
COUNTS = collections.Counter()
_DEPTH = collections.Counter()


def _timed(owner, name, label):
    """Time ``owner.name`` under ``label``; a call inside one not again."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        _DEPTH[label] += 1
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            _DEPTH[label] -= 1
            if not _DEPTH[label]:
                TOTALS[label] += time.perf_counter() - started
                COUNTS[label] += 1
    setattr(owner, name, wrapper)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--every', type=int, default=1, metavar='N')
    parser.add_argument('--limit', type=int, default=None, metavar='N')
    parser.add_argument('--filter', default=None, metavar='REGEX')
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error('--every must be 1 or more')
    if args.limit is not None and args.limit < 1:
        parser.error('--limit must be 1 or more')
    # As the gate's functional job runs them (tox.ini).
    os.environ['HARNESS_COMPARE_WITHOUT_CHECKS'] = 'one-per-file'

    import testtools

    from harness.cloud import checkpoint
    from harness.cloud import fixture as cloud_mod
    from harness.cloud import reuse
    from harness.core import invariants
    from harness.runners import runner
    from harness.testing import cases
    from harness.testing import leaks
    from tests.functional import test_scenarios

    _timed(runner, 'execute', 'steps')
    _timed(invariants.Checker, '__call__', 'checks')
    _timed(invariants, 'periodics_idempotent',
           'checks: periodic idempotence')
    _timed(reuse.CloudPool, '_stand_up', 'stand-ups')
    _timed(cases.ScenarioTestCase, '_compare_without_checks',
           'runs compared without checks')
    _timed(cloud_mod.Cloud, 'snapshot', 'snapshots')
    _timed(reuse, 'settle', 'settling')
    _timed(checkpoint.Checkpoint, '__init__', 'checkpoints taken')
    _timed(checkpoint.Checkpoint, 'restore', 'checkpoints put back')
    _timed(reuse, 'add_catalogue', 'catalogues')
    _timed(leaks.LeakCheck, '_setUp', 'leak check (inventory)')
    _timed(leaks.LeakCheck, '_check', 'leak check')

    loader = unittest.TestLoader()
    tests = list(testtools.iterate_tests(test_scenarios.load_tests(
        loader, loader.loadTestsFromModule(test_scenarios), None)))
    if args.filter:
        pattern = re.compile(args.filter)
        tests = [test for test in tests if pattern.search(test.id())]
    tests = tests[::args.every][:args.limit]
    if not tests:
        parser.error('no scenario test selected')
    result = testtools.TestResult()
    started = time.perf_counter()
    unittest.TestSuite(tests).run(result)
    wall = time.perf_counter() - started
    print('%d scenario tests in %.1f s (%.2f s each); %d failed, %d errors'
          % (result.testsRun, wall, wall / result.testsRun,
             len(result.failures), len(result.errors)))
    for label, seconds in sorted(TOTALS.items(), key=lambda kv: -kv[1]):
        print('%8.1f s %5.1f%%  %5d calls  %s' % (
            seconds, 100 * seconds / wall, COUNTS[label], label))
    pool = reuse.shared_pool()
    print('clouds: %d stood up, %d runs on one put back, %d after which '
          'stopped or restarted computes started anew' % (
              pool.made, pool.reused, pool.replaced))
    for reason, count in pool.given_up.most_common():
        print('given up %3d x: %s' % (count, reason))
    return 1 if result.failures or result.errors else 0


if __name__ == '__main__':
    # Nova's choices between equals follow the hash seed.
    from harness.runners import cli
    cli.pin_hash_seed()
    sys.exit(main())
