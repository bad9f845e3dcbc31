"""How far apart the explorer's replays end: the room state caching has.

State caching (``harness explore --prune``, ``harness.cloud.digest``)
saves a replay only where its cloud, between two steps, is as the
trunk's (the scenario without injections) or as another replay's there.
This replays every depth-1 interleaving of a scenario (by default the
bench scenario of ``explore_speed.py``, ``--scenario FILE``), takes its
cloud's digest at the end of every step from its injection's on, and
prints per step of the scenario:

- how many replays reached that step's end, and how many distinct
  states they ended it in, by the exact digest (what ``--prune``
  compares) and by the digest with every timestamp left out
  (``digest.of(times=False)``: not sound, an upper bound on what any
  treatment of time could let caching match);
- how many of them were in the trunk's state there, each way.

Then what that leaves state caching at depth 2: the pairs whose second
injection is in a later step than the first (pairs in one step part
inside it, where no digest is taken), and how many of their replays the
bound's distinct states would still need (pairs whose first injection
left the same state before the same second injection are run once), as
``depth-2 pairs caching could skip at most: X of N``.

    python benchmarks/state_spread.py [--scenario FILE [--name NAME]]
"""

import argparse
import collections
import itertools
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.core import scenario as scenario_mod  # noqa: E402

SCENARIO = os.path.join(ROOT, 'tests', 'functional', 'explore',
                        'pinned_resize_confirm.yaml')


class _Digests(object):
    """Observer: both digests of the cloud after every step of a run."""

    def __init__(self, phases):
        self.phases = phases
        self.cloud = None
        self.after = []

    def run_started(self, scenario, cloud):
        self.cloud = cloud

    def step_done(self, step, entry):
        from harness.cloud import digest
        from harness.runners import explorer
        checks = explorer._check_state(self.phases.checkers)
        self.after.append((digest.of(self.cloud, checks),
                           digest.of(self.cloud, checks, times=False)))


def _run(explorer_, scenario, injections):
    from harness.runners import explorer
    from harness.runners import phases as phases_mod
    job = explorer_._job(scenario, injections)
    phases = phases_mod.Phases(len(job['document']['steps']), [])
    digests = _Digests(phases)
    explorer._run_job(job, explorer_._pool, phases=phases,
                      observers=[digests])
    return digests.after


def spread(scenario):
    """The trunk's digests and every depth-1 replay's.

    ``(trunk, replays)``: the trunk's after each step (by the scenario's
    step number), and per runnable interleaving its own from its
    injection's step on.
    """
    from harness.runners import explorer
    explorer_ = explorer.Explorer(workers=1)
    with explorer_.kept():
        plan = explorer_.plan(scenario)
        _run(explorer_, scenario, ())   # warm, as the explorer's trunk is
        trunk = [None] + _run(explorer_, scenario, ())
        replays = []
        for injections in plan.runnable:
            after = _run(explorer_, scenario, injections)
            own = {}
            for done, (step, _left) in explorer._boundaries(
                    scenario, injections).items():
                if done - 1 < len(after):
                    own[step] = after[done - 1]
            replays.append((injections, own))
    return trunk, replays


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scenario', default=SCENARIO)
    parser.add_argument('--name', default=None)
    args = parser.parse_args(argv)
    scenarios = scenario_mod.load(args.scenario)
    scenario = next((s for s in scenarios if s.name == args.name),
                    scenarios[0]) if args.name else scenarios[0]
    started = time.monotonic()
    trunk, replays = spread(scenario)
    print('%s: %d depth-1 replays, %.1f s, load average %.1f'
          % (scenario.name, len(replays), time.monotonic() - started,
             os.getloadavg()[0]))
    print('%-5s %8s %16s %16s %14s %14s' % (
        'step', 'replays', 'states (exact)', 'states (no time)',
        'trunk (exact)', 'trunk (no time)'))
    steps = sorted({step for _, own in replays for step in own})
    for step in steps:
        there = [own[step] for _, own in replays if step in own]
        print('%-5d %8d %16d %16d %14d %14d' % (
            step, len(there), len({d[0] for d in there}),
            len({d[1] for d in there}),
            sum(d[0] == trunk[step][0] for d in there),
            sum(d[1] == trunk[step][1] for d in there)))
    # Depth 2 across steps: first injection in step a, second in b > a;
    # pairs alike in the state the first left before b, with the same
    # second injection, are one replay (the bound: no time).
    firsts = [(injections[0].at.step, own) for injections, own in replays]
    seconds = collections.Counter(
        injections[0].at.step for injections, _ in replays)
    pairs = needed = 0
    for b, count in seconds.items():
        before = b - 1
        states = [own.get(before) for a, own in firsts if a < b]
        pairs += len(states) * count
        # A first injection whose replay has no state there (it failed
        # before) is a group of its own.
        needed += len({state[1] if state else ('unknown', number)
                       for number, state in enumerate(states)}) * count
    singles = [injections[0] for injections, _ in replays]
    within = sum(1 for x, y in itertools.combinations(singles, 2)
                 if x.at.step == y.at.step and x.at != y.at)
    print('depth-2 pairs within one step (no digest inside a step): %d'
          % within)
    print('depth-2 pairs across steps: %d; distinct first states before '
          'their second injection (no time): %d' % (pairs, needed))
    print('depth-2 pairs caching could skip at most: %d of %d'
          % (pairs - needed, pairs))


if __name__ == '__main__':
    main()
