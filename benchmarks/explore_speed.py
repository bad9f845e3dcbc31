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

Shrinking is counted too: each failure shrunk, the scenarios its
shrinking replayed (``shrink replays per failure``), counted as the
jobs handed to ``explorer.replay`` and ``explorer.replay_branched``
while the explorer concludes (grouping and shrinking: its only replays
then), each trial once however it ran (from the start, or forked).
``--scenario FILE --name NAME`` explores another scenario (the first of
the file without ``--name``): one with more steps before its moves
gives shrinking more to do.

``--depth 2`` (or ``--depth 1 --pruning``) explores the scenario twice
instead, both branched, side by side: in full (every interleaving
replayed to its end) and with state caching (``Explorer(prune=True)``,
``harness.cloud.digest``); for each the replays run, the interleavings
pruned and why, the wall time; then whether both found the same
outcomes (every verdict, signature and shrunk reproducer:
``explorer.comparable``), and last ``pruned/full time: X``.

``--pruning nested`` nests the pruned exploration too
(``Explorer(prune=True, nested=True)``, as the nightly explores: pairs
forked from a run of their first injection alone, below) against the
same full one; the last line is ``pruned/full time: X`` alike.

``--nested`` (``--nested pruned``) explores at depth 2 (or ``--depth``)
twice instead, both branched and in full (both with state caching):
plainly, every pair forked from the scenario's run, and with nested
branching (``Explorer(nested=True)``: pairs forked from a run of their
first injection alone); for each the replays run, how many forked
nested, the wall time and the load average; then whether both found the
same outcomes (``explorer.comparable``), and last ``nested/plain time:
X``.

``--concurrency threading|eventlet`` runs Nova in that mode (default:
the installed release's); ``--concurrency both`` runs the bench once per
mode, each in a process of its own, and ends with both rates side by side
(``interleavings/min: threading X, eventlet Y``).

    python benchmarks/explore_speed.py [--workers N] [--reintroduce BUG]
        [--only branched|from-start] [--scenario FILE [--name NAME]]
        [--concurrency threading|eventlet|both]
    python benchmarks/explore_speed.py --depth 2 [--pruning [nested]] ...
    python benchmarks/explore_speed.py --nested [full|pruned] [--every N]
"""

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.core import concurrency  # noqa: E402
from harness.core import scenario as scenario_mod  # noqa: E402
# Imported once the mode is chosen (``main``): the explorer imports Nova,
# which fixes the process's concurrency mode.
explorer = None

SCENARIO = os.path.join(ROOT, 'tests', 'functional', 'explore',
                        'pinned_resize_confirm.yaml')


def _both_modes(argv):
    """The bench in each mode, each in a process of its own."""
    rates = {}
    for mode in concurrency.MODES:
        own = [a for a in argv if a not in ('--concurrency', 'both')
               and not a.startswith('--concurrency=')]
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__),
             '--concurrency', mode] + own,
            stdout=subprocess.PIPE, text=True)
        for line in done.stdout.splitlines():
            print('%s %s' % (mode, line), flush=True)
        found = re.findall(r'^interleavings/min: ([0-9.]+)$', done.stdout,
                           re.MULTILINE)
        rates[mode] = float(found[-1]) if found else None
    print('interleavings/min: %s' % ', '.join(
        '%s %s' % (mode, '%.1f' % rate if rate is not None else 'failed')
        for mode, rate in rates.items()))
    return 0 if all(rate is not None for rate in rates.values()) else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workers', type=int, default=None)
    parser.add_argument('--reintroduce', default=None)
    parser.add_argument('--no-invariants', action='store_true')
    parser.add_argument('--only', choices=('branched', 'from-start'),
                        default=None)
    parser.add_argument('--scenario', default=SCENARIO)
    parser.add_argument('--name', default=None)
    parser.add_argument('--concurrency', default=None,
                        choices=concurrency.MODES + ('both',))
    parser.add_argument('--depth', type=int, choices=(1, 2), default=None,
                        help='compare the full and the pruned exploration '
                        'at this depth')
    parser.add_argument('--pruning', nargs='?', const='plain', default=None,
                        choices=('plain', 'nested'),
                        help='compare the full and the pruned exploration '
                        '(at --depth, 1 unless given); nested: the pruned '
                        'one nested too, as the nightly explores')
    parser.add_argument('--limit', type=int, default=None,
                        help='with --pruning or --nested: the first N '
                        'interleavings')
    parser.add_argument('--every', type=int, default=None,
                        help='with --pruning or --nested: every N-th '
                        'runnable interleaving only (a share spread over '
                        'the plan)')
    parser.add_argument('--nested', nargs='?', const='full', default=None,
                        choices=('full', 'pruned'),
                        help='compare the exploration not nested and nested '
                        '(at --depth, 2 unless given), in full or pruned')
    args = parser.parse_args(argv)
    if args.nested is not None:
        return _pruning(args, (
            ('plain', {'prune': args.nested == 'pruned'}),
            ('nested', {'prune': args.nested == 'pruned', 'nested': True})),
            default_depth=2)
    if args.pruning == 'nested':
        # The nightly's way (--nested --prune) against the full one.
        return _pruning(args, (
            ('full', {}), ('pruned', {'prune': True, 'nested': True})))
    if args.depth is not None or args.pruning:
        return _pruning(args)
    if args.concurrency == 'both':
        return _both_modes(sys.argv[1:] if argv is None else argv)
    if args.concurrency:
        concurrency.choose(args.concurrency)
    global explorer
    from harness.runners import explorer
    scenario = [s for s in scenario_mod.load(args.scenario)
                if args.name in (None, s.name)][0]
    modes = [m for m in ('from-start', 'branched')
             if args.only in (None, m)]
    reports = {}
    for mode in modes:
        counter = _ShrinkReplays()
        with tempfile.TemporaryDirectory() as out, counter.counting():
            reports[mode] = report = explorer.Explorer(
                reintroduce=args.reintroduce, workers=args.workers,
                out_dir=out, invariants=not args.no_invariants,
                branch=mode == 'branched', prune=False,
                progress=lambda line: None).explore(scenario)
        replays = report.tried + report.inapplicable
        print('%s: %s' % (mode, report.summary()))
        print('%s: wall time: %.1f s for %d replays (%d interleavings '
              'tried), %.1f interleavings/min' % (
                  mode, report.seconds, replays, report.tried,
                  _rate(report)))
        # Summed over the replays' processes: with N workers a replay's
        # phases add up to about N times the wall time per replay.
        print('%s: %s' % (mode, report.per_replay()))
        print('%s: shrink replays per failure: %s (%d replays for %d '
              'failures shrunk)' % (
                  mode, '%.1f' % (counter.replays / report.shrunk)
                  if report.shrunk else '-', counter.replays,
                  report.shrunk))
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


def _pruning(args, modes=(('full', {}), ('pruned', {'prune': True})),
             default_depth=1):
    """The full and the pruned exploration side by side (or ``modes``).

    Of every scenario of ``--scenario``'s file unless ``--name`` picks one.
    ``modes``: two ``(name, Explorer options)``, the first the reference.
    """
    if args.concurrency and args.concurrency != 'both':
        concurrency.choose(args.concurrency)
    global explorer
    from harness.runners import explorer
    scenarios = [s for s in scenario_mod.load(args.scenario)
                 if args.name in (None, s.name)]
    from harness.cloud import digest
    real_of = digest.of
    timed = []

    def timed_of(*args, **kwargs):
        # The trunk's digests (taken in this process; the replays' own
        # are taken in their forked children, alike).
        started = time.perf_counter()
        try:
            return real_of(*args, **kwargs)
        finally:
            timed.append(time.perf_counter() - started)
    digest.of = timed_of
    names = [name for name, _options in modes]
    seconds = {name: 0.0 for name in names}
    equal = True
    for scenario in scenarios:
        # Untimed: the process's first exploration pays what Nova and the
        # libraries do once (imports, compiled SQL, caches): measured on
        # 2026-12-06 it made the full exploration, run first, three times
        # the pruned one with nothing pruned.
        with tempfile.TemporaryDirectory() as out:
            explorer.Explorer(
                depth=1, reintroduce=args.reintroduce, limit=1,
                workers=args.workers, out_dir=out,
                invariants=not args.no_invariants,
                progress=lambda line: None).explore(scenario)
        timed.clear()
        found = {}
        for mode, options in modes:
            with tempfile.TemporaryDirectory() as out:
                report = _explore(explorer.Explorer(
                    depth=args.depth or default_depth,
                    reintroduce=args.reintroduce,
                    workers=args.workers, out_dir=out, limit=args.limit,
                    invariants=not args.no_invariants,
                    progress=lambda line: None, **options), scenario,
                    args.every)
                found[mode] = explorer.comparable(report)
            seconds[mode] += report.seconds
            print('%s: %s' % (mode, report.summary()))
            print('%s: %d replays run, %d pruned, %d forked nested, wall '
                  'time %.1f s (load %s)' % (
                      mode, report.run, sum(report.pruned.values()),
                      report.nested, report.seconds, ' '.join(
                          '%.1f' % load for load in os.getloadavg())))
        same = found[names[0]] == found[names[1]]
        equal = equal and same
        print('%s: outcomes equal: %s' % (scenario.name,
                                          'yes' if same else 'NO'))
    digest.of = real_of
    if timed:
        print('a digest takes %.3f s (mean of %d, max %.3f)' % (
            sum(timed) / len(timed), len(timed), max(timed)))
    print('outcomes equal: %s' % ('yes' if equal else 'NO'))
    print('%s/%s time: %.2f' % (names[1], names[0],
                                seconds[names[1]] / seconds[names[0]]))
    return 0 if equal else 1


def _explore(explore, scenario, every):
    """``explore.explore(scenario)``, of every ``every``-th interleaving."""
    if every is None:
        return explore.explore(scenario)
    started = time.monotonic()
    with explore.kept():
        plan = explore.plan(scenario)
        plan.runnable = plan.runnable[::every]
        plan.candidates = len(plan.runnable)
        results = explore.replay_plan(plan, range(len(plan.runnable)))
        report = explore.conclude(plan, results)
    report.seconds = time.monotonic() - started
    return report


class _ShrinkReplays(object):
    """Counts the jobs the explorer replays while it concludes."""

    def __init__(self):
        self.replays = 0
        self._concluding = False
        self._depth = 0

    @contextlib.contextmanager
    def counting(self):
        real = (explorer.Explorer.conclude, explorer.replay,
                explorer.replay_branched)
        conclude, replay, replay_branched = real
        counter = self

        def concluding(self, *args, **kwargs):
            counter._concluding = True
            try:
                return conclude(self, *args, **kwargs)
            finally:
                counter._concluding = False

        def counted(function, jobs_of):
            def call(*args, **kwargs):
                # Only the outermost call: replay_branched replays those
                # it could not fork by calling itself again.
                if counter._concluding and not counter._depth:
                    counter.replays += jobs_of(args)
                counter._depth += 1
                try:
                    return function(*args, **kwargs)
                finally:
                    counter._depth -= 1
            return call

        explorer.Explorer.conclude = concluding
        explorer.replay = counted(replay, lambda args: 1)
        explorer.replay_branched = counted(replay_branched,
                                           lambda args: len(args[0]))
        try:
            yield self
        finally:
            (explorer.Explorer.conclude, explorer.replay,
             explorer.replay_branched) = real


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
    sys.exit(main())
