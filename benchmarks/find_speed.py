"""How fast the race explorer finds the bugs it knows: time to find.

For every registered bug (``harness.bugs``) that can be put back and
whose scenario injects a periodic (an ``inject`` step), explores that
scenario with its inject steps removed and the bug put back (``harness
explore --reintroduce BUG``, depth 1, branched) and prints the seconds
from the start of the exploration (its recorded run included) until the
first replay that fails with the bug's own signature (that of the bug's
scenario, as written, failing with the bug put back), and how many
replays had ended by then; ``-`` for a bug not found. Last line:
``median seconds to find: X`` (over the bugs found).

``--prune`` explores with state caching (``Explorer(prune=True)``);
``--bug ID`` (repeatable) only those bugs. The load average is
printed with the figures: other work on the machine slows them.

``--compare`` finds each bug in the explorer's order of replays
(``explorer.depth_one_rank``) and in the orders it grew from (``plan``:
the plan's own; ``one host first``: ``explorer.one_host_first`` alone),
each bug's in turn, the first order rotating from bug to bug so that a
change in the machine's load falls on each alike; then prints each
order's median and its ratio to the plan order's, and last the
explorer's median.

    python benchmarks/find_speed.py [--prune] [--compare] [--bug ID]...
        [--workers N]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness import bugs  # noqa: E402
from harness.core import scenario as scenario_mod  # noqa: E402


def _without_injections(scenario):
    steps = [dict(step.raw) for step in scenario.steps
             if step.kind != 'inject']
    if len(steps) == len(scenario.steps):
        return None
    return scenario_mod.parse(scenario.document(steps), scenario.path,
                              scenario.path)


def _signature(bug, scenario):
    """What the bug's scenario fails with, the bug put back."""
    from harness.runners import explorer
    job = {'document': scenario.document(), 'where': scenario.path,
           'reintroduce': bug.id, 'invariants': True}
    result = explorer.replay(job)
    return result.get('signature') if result['failed'] else None


# The orders of replays ``--compare`` measures, by name: the rank of an
# interleaving at depth 1 (``Explorer.rank``), the explorer's last.
def _orders():
    from harness.runners import explorer
    return (('plan', lambda injections: 0),
            ('one host first', explorer.one_host_first),
            ('explorer', explorer.depth_one_rank))


def time_to_find(bug, scenario, prune, workers, rank=None):
    """``(seconds, replays)`` until the bug's failure, or None.

    ``rank``: the order of the replays (``Explorer.rank``), if not the
    explorer's own.
    """
    from harness.runners import explorer
    wanted = _signature(bug, scenario)
    stripped = _without_injections(scenario)
    if wanted is None or stripped is None:
        return None
    replays = [0]
    found = []
    started = time.monotonic()

    def seen(result):
        # The replays go on to their end (nothing the explorer runs is
        # cut off from here); the first match's time is the figure.
        replays[0] += 1
        if (not found and result['failed']
                and result.get('signature') == wanted):
            found.append((time.monotonic() - started, replays[0]))

    with tempfile.TemporaryDirectory() as out:
        explore = explorer.Explorer(reintroduce=bug.id, out_dir=out,
                                    prune=prune, workers=workers)
        explore.seen = seen
        if rank is not None:
            explore.rank = rank
        with explore.kept():
            plan = explore.plan(stripped)
            explore.replay_plan(plan, range(len(plan.runnable)))
    return found[0] if found else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--prune', action='store_true')
    parser.add_argument('--compare', action='store_true')
    parser.add_argument('--bug', action='append', default=None)
    parser.add_argument('--workers', type=int, default=None)
    args = parser.parse_args(argv)
    orders = _orders() if args.compare else _orders()[-1:]
    found = {name: [] for name, _ in orders}
    turn = 0
    for bug in bugs.known():
        if args.bug and bug.id not in args.bug:
            continue
        if not bug.reintroducible:
            # An open bug (or one whose fix cannot be put back): there is
            # no failure with the bug put back to look for.
            continue
        for scenario in bug.scenarios:
            if not any(step.kind == 'inject' for step in scenario.steps):
                continue
            for name, rank in orders[turn:] + orders[:turn]:
                took = time_to_find(bug, scenario, args.prune,
                                    args.workers, rank)
                load = ' '.join('%.1f' % x for x in os.getloadavg())
                what = ' [%s]' % name if args.compare else ''
                if took is None:
                    print('%s (%s)%s: not found (load %s)' % (
                        bug.id, scenario.name, what, load), flush=True)
                else:
                    found[name].append(took[0])
                    print('%s (%s)%s: %.1f s, %d replays (load %s)' % (
                        bug.id, scenario.name, what, took[0], took[1],
                        load), flush=True)
            turn = (turn + 1) % len(orders)
            break
    medians = {name: statistics.median(seconds) if seconds else None
               for name, seconds in found.items()}
    if args.compare:
        for name, _ in orders[:-1]:
            if medians[name] is None:
                continue
            print('median seconds to find [%s]: %.1f' % (name, medians[name]))
            if medians['explorer'] is not None:
                print('explorer/%s: %.2f' % (
                    name, medians['explorer'] / medians[name]))
    print('median seconds to find: %s' % (
        '-' if medians['explorer'] is None
        else '%.1f' % medians['explorer']))
    return 0


if __name__ == '__main__':
    from harness.runners import cli
    cli.pin_hash_seed()
    sys.exit(main())
