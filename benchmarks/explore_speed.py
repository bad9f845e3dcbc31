"""How fast the race explorer goes: interleavings per minute, wall time.

Explores ``tests/functional/explore/pinned_resize_confirm.yaml`` (a pinned
resize and confirm between two profiled hosts) at depth 1 twice, side by
side: each replay from the start, and branched (the scenario run once
more, each replay forked where its steps part from it, or inside the
step, at the race point where its injection fires:
``explorer.replay_branched``). For each it prints the interleavings
tried, the wall time, where a replay's time goes (reset, prefix, steps,
checks: ``explorer.PHASES``) and how many replays forked inside their
step; then whether both found the same outcomes, their ratio, how many
cores replays of that cost would keep busy at 200 interleavings/min,
and last the branched rate, as ``interleavings/min: X``.

    python benchmarks/explore_speed.py [--workers N] [--reintroduce BUG]
        [--only branched|from-start]
"""

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.core import scenario as scenario_mod  # noqa: E402
from harness.runners import explorer  # noqa: E402

SCENARIO = os.path.join(ROOT, 'tests', 'functional', 'explore',
                        'pinned_resize_confirm.yaml')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workers', type=int, default=None)
    parser.add_argument('--reintroduce', default=None)
    parser.add_argument('--no-invariants', action='store_true')
    parser.add_argument('--only', choices=('branched', 'from-start'),
                        default=None)
    args = parser.parse_args(argv)
    modes = [m for m in ('from-start', 'branched')
             if args.only in (None, m)]
    reports = {}
    for mode in modes:
        with tempfile.TemporaryDirectory() as out:
            reports[mode] = report = explorer.Explorer(
                reintroduce=args.reintroduce, workers=args.workers,
                out_dir=out, invariants=not args.no_invariants,
                branch=mode == 'branched',
                progress=lambda line: None).explore(
                scenario_mod.load(SCENARIO)[0])
        replays = report.tried + report.inapplicable
        print('%s: %s' % (mode, report.summary()))
        print('%s: wall time: %.1f s for %d replays (%d interleavings '
              'tried), %.1f interleavings/min' % (
                  mode, report.seconds, replays, report.tried,
                  _rate(report)))
        # Summed over the replays' processes: with N workers a replay's
        # phases add up to about N times the wall time per replay.
        print('%s: %s' % (mode, report.per_replay()))
        if mode == 'branched':
            print('%s: %d of %d replays forked inside the step their '
                  'injections went before, at the race point where the '
                  'first fired' % (mode, report.forked_in_step,
                                   report.timed))
    if len(reports) == 2:
        start, branched = reports['from-start'], reports['branched']
        print('same outcomes: %s' % (
            'yes' if _outcomes(start) == _outcomes(branched) else 'NO'))
        print('branched / from start (rate): %.2f' % (
            _rate(branched) / _rate(start)))
    last = reports[modes[-1]]
    if last.timed:
        # What the goal asks of the machine: a replay's time (its phases,
        # each replay a process of its own on a core) times 200 a minute,
        # without the plan's recorded run, which comes first, on one core.
        work = sum(last.phases.values()) / last.timed
        print('%s: a replay takes %.2f s: 200 interleavings/min keep %.1f '
              'cores busy with replays alone (this machine has %d)' % (
                  modes[-1], work, 200 * work / 60.0, os.cpu_count()))
    print('interleavings/min: %.1f' % _rate(last))


def _rate(report):
    return 60.0 * report.tried / report.seconds


def _outcomes(report):
    return [(o.injections, o.failed, o.step, o.label,
             [(p.check, p.subject, p.kind) for p in o.problems])
            for o in report.outcomes]


if __name__ == '__main__':
    # Nova's choices between equals follow the hash seed.
    from harness.runners import cli
    cli.pin_hash_seed()
    main()
