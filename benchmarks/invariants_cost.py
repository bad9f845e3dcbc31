"""What the invariant checks cost per step, against a scenario's wall time.

Runs scenario files with the invariant Checker and prints, per scenario
and in total: wall time, steps, the time of invariants 1-4, 6 and 7 (they
read the snapshot the step already took) and, separately, of invariant 5
(periodic idempotence: the periodics themselves).

    python benchmarks/invariants_cost.py tests/functional/scenarios
    python benchmarks/invariants_cost.py --no-periodic FILE...
    python benchmarks/invariants_cost.py --capacity-probe FILE...

With ``--capacity-probe`` the capacity probe runs too, and its time is
printed apart (``probe``): where the gate runs it (after a step that
leaves a tracker window open and after a scenario's last step), or with
``--capacity-probe --every-step`` after every step (the periodic job's
``HARNESS_CAPACITY_PROBE=every``). The load average is printed before
and after: the figures are wall time on a shared machine.

    python benchmarks/invariants_cost.py --capacity-probe --every-step FILE...
"""

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from harness.core import invariants  # noqa: E402
from harness.core import scenario as scenario_mod  # noqa: E402
from harness.runners import runner  # noqa: E402


def scenario_files(paths):
    for path in paths:
        if os.path.isdir(path):
            yield from sorted(glob.glob(os.path.join(path, '*.yaml')))
        else:
            yield path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('paths', nargs='+')
    parser.add_argument('--no-periodic', action='store_true',
                        help='leave invariant 5 off')
    parser.add_argument('--capacity-probe', action='store_true',
                        help='run the capacity probe too, timed apart, '
                        'where the gate does')
    parser.add_argument('--every-step', action='store_true',
                        help='with --capacity-probe: after every step '
                        '(the periodic job\'s HARNESS_CAPACITY_PROBE=every)')
    args = parser.parse_args(argv)
    if args.every_step:
        os.environ[invariants.PROBE_ENV] = 'every'
    print(load_average('before'), flush=True)
    wall = cheap = periodic = probe = 0.0
    steps = 0
    for path in scenario_files(args.paths):
        for scenario in scenario_mod.load(path):
            checker = invariants.Checker(
                periodic_idempotence=not args.no_periodic,
                capacity_probe=args.capacity_probe)
            started = time.perf_counter()
            timeline = runner.run(scenario, checks=[checker],
                                  keep_going=True)
            elapsed = time.perf_counter() - started
            spent = sum(seconds for name, seconds in checker.timings.items()
                        if name not in ('periodics_idempotent',
                                        'capacity_probe'))
            probed = checker.timings['capacity_probe']
            probe += probed
            p5 = checker.timings['periodics_idempotent']
            wall, cheap, periodic = wall + elapsed, cheap + spent, \
                periodic + p5
            steps += checker.calls
            print('%-70s %6.2f s %3d steps  inv1-4,6,7 %6.1f ms (%.2f%%)  '
                  'inv5 %5.2f s (%4.1f%%)  probe %6.1f ms%s' % (
                      scenario.id[:70], elapsed, checker.calls,
                      spent * 1000, 100 * spent / elapsed, p5,
                      100 * p5 / elapsed, probed * 1000,
                      problems_text(timeline)), flush=True)
    print('total: %.1f s, %d steps; invariants 1-4, 6, 7: %.3f s (%.2f%% '
          'of wall, %.2f ms/step); invariant 5: %.1f s (%.1f%% of wall, '
          '%.0f ms/step); capacity probe: %.3f s (%.2f%% of wall, %.2f '
          'ms/step)' % (
              wall, steps, cheap, 100 * cheap / max(wall, 1e-9),
              1000 * cheap / max(steps, 1), periodic,
              100 * periodic / max(wall, 1e-9),
              1000 * periodic / max(steps, 1), probe,
              100 * probe / max(wall, 1e-9), 1000 * probe / max(steps, 1)))
    print(load_average('after'))


def problems_text(timeline):
    """``  PROBLEMS step 3 capacity_probe (host dst, dedicated); ...``."""
    if not timeline.failed:
        return ''
    return '  PROBLEMS ' + '; '.join(
        'step %d %s (%s)' % (entry.index, problem.check, problem.subject)
        for entry in timeline.failed for problem in entry.problems)


def load_average(when):
    """``load average before: 1, 5, 15 min``, as the system says it."""
    return 'load average %s: %.2f, %.2f, %.2f (1, 5, 15 min; %d CPUs)' % (
        (when,) + os.getloadavg() + (os.cpu_count(),))


if __name__ == '__main__':
    main()
