"""How fast the race explorer goes: interleavings per minute, wall time.

Explores ``tests/functional/explore/pinned_resize_confirm.yaml`` (a pinned
resize and confirm between two profiled hosts) at depth 1 and prints the
interleavings tried, the wall time, where a replay's time goes (reset,
prefix, steps, checks: ``explorer.PHASES``), and last the rate, as
``interleavings/min: X``.

    python benchmarks/explore_speed.py [--workers N] [--reintroduce BUG]
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
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as out:
        report = explorer.Explorer(
            reintroduce=args.reintroduce, workers=args.workers, out_dir=out,
            invariants=not args.no_invariants,
            progress=lambda line: print(line, flush=True)).explore(
            scenario_mod.load(SCENARIO)[0])
    replays = report.tried + report.inapplicable
    print(report.summary())
    print('wall time: %.1f s for %d replays (%d interleavings tried)' % (
        report.seconds, replays, report.tried))
    # Summed over the replays' processes: with N workers a replay's phases
    # add up to about N times the wall time per replay.
    print(report.per_replay())
    print('interleavings/min: %.1f' % (60.0 * report.tried / report.seconds))


if __name__ == '__main__':
    main()
