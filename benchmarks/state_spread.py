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
``depth-2 pairs caching could skip at most: X of N``, and as many by
the exact digest (what ``--prune`` would skip).

``--diff`` prints what sets the replays apart from the trunk: every
field of the digest's input (``digest.fields``: database columns,
tracker attributes, hypervisor fields, clock, casts, race points, the
checks' state) that differs from the trunk's at the same step, by
family (table and column, or section and attribute), with how many
replays, at which steps and how (``value``, a timestamp's second
``time``; or only as they follow another difference: ``rank``,
``names``), an example of each, and per step the sets of families the
replays differ in; then a control, the trunk run once more after the
replays, which must be as the trunk.

    python benchmarks/state_spread.py [--scenario FILE [--name NAME]]
        [--diff]
"""

import argparse
import collections
import itertools
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.core import scenario as scenario_mod  # noqa: E402

SCENARIO = os.path.join(ROOT, 'tests', 'functional', 'explore',
                        'pinned_resize_confirm.yaml')


class _Digests(object):
    """Observer: both digests of the cloud after every step of a run.

    With ``fields``, also what the digest walked there, by path
    (``digest.fields``).
    """

    def __init__(self, phases, fields=False):
        self.phases = phases
        self.cloud = None
        self.after = []
        self.fields = [] if fields else None

    def run_started(self, scenario, cloud):
        self.cloud = cloud

    def step_done(self, step, entry):
        from harness.cloud import digest
        from harness.runners import explorer
        checks = explorer._check_state(self.phases.checkers)
        self.after.append((digest.of(self.cloud, checks),
                           digest.of(self.cloud, checks, times=False)))
        if self.fields is not None:
            self.fields.append(digest.fields(self.cloud, checks))


def _run(explorer_, scenario, injections, fields=False):
    from harness.runners import explorer
    from harness.runners import phases as phases_mod
    job = explorer_._job(scenario, injections)
    phases = phases_mod.Phases(len(job['document']['steps']), [])
    digests = _Digests(phases, fields)
    explorer._run_job(job, explorer_._pool, phases=phases,
                      observers=[digests])
    return digests.after, digests.fields


def spread(scenario, diff=False):
    """The trunk's digests and every depth-1 replay's.

    ``(trunk, replays, control)``: the trunk's after each step (by the
    scenario's step number), and per runnable interleaving its own from
    its injection's step on. With ``diff``, each replay's digests are
    ``(exact, no time, fields that differ from the trunk's)``
    (``digest.diff``), and ``control`` is what differs in a third run of
    the trunk, after the replays, from the trunk's (what the runs before
    leave, not the injections: none, if the kept cloud resets all).
    """
    from harness.runners import explorer
    explorer_ = explorer.Explorer(workers=1)
    control = None
    with explorer_.kept():
        plan = explorer_.plan(scenario)
        _run(explorer_, scenario, ())   # warm, as the explorer's trunk is
        after, fields = _run(explorer_, scenario, (), diff)
        trunk = [None] + after
        trunk_fields = [None] + (fields or [])
        replays = []
        for injections in plan.runnable:
            after, fields = _run(explorer_, scenario, injections, diff)
            own = {}
            for done, (step, _left) in explorer._boundaries(
                    scenario, injections).items():
                if done - 1 < len(after):
                    own[step] = after[done - 1]
                    if diff:
                        own[step] += (_differ(trunk_fields[step],
                                              fields[done - 1]),)
            replays.append((injections, own))
        if diff:
            _after, fields = _run(explorer_, scenario, (), diff)
            control = {step: _differ(trunk_fields[step], fields[step - 1])
                       for step in range(1, len(trunk_fields))}
    return trunk, replays, control


def _differ(trunk, replay):
    from harness.cloud import digest
    if trunk is None or replay is None:
        return None    # a state the walk cannot read
    return digest.diff(trunk, replay)


# How a field's texts differ (``_kind``): timestamps' second, or only
# their rank; which uuid or shared object is which only; anything else.
_STAMP = re.compile(r't\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d#(\d+)')
_NAMED = re.compile(r'\bU\d+|(?<![\w\'])r\d+\b')
_INDEX = re.compile(r'\[\d+\]|<\d+>')
#: Kinds of difference that only follow from another elsewhere: a
#: timestamp that came or went before this one, a uuid or a shared
#: object walked before this one.
FOLLOWING = ('rank', 'names')


def _kind(before, after):
    """Why a field's text differs: ``value``, ``time``, ``rank``, ``names``.

    ``rank``: only the ranks of its timestamps (another timestamp, before
    it elsewhere, came or went); ``time``: a timestamp's second; ``names``:
    only which uuid or shared object (``r`` and its number: the digest
    writes an object seen before as that) is which, another having come
    first elsewhere; ``value``: anything else, a field only one of them
    has included.
    """
    if before is None or after is None:
        return 'value'
    unnamed = [_NAMED.sub('U', text) for text in (before, after)]
    untimed = [_STAMP.sub('t', text) for text in unnamed]
    if untimed[0] != untimed[1]:
        return 'value'
    if unnamed[0] == unnamed[1]:
        return 'names'
    ranked = [_STAMP.sub(lambda m: m.group(0).split('#')[0], text)
              for text in unnamed]
    return 'rank' if ranked[0] == ranked[1] else 'time'


def field(path):
    """A field's path with row numbers, indexes and uuid names left out."""
    return _NAMED.sub('U', _INDEX.sub('[]', path))


def family(path):
    """A field's table and column, or its section and first attribute."""
    name = field(path)
    if name.startswith('db'):
        table, _, rest = name.partition('[]')
        return table + rest.split('.', 2)[0] + (
            '.' + rest.split('.')[1] if rest.count('.') else '')
    found = re.match(r'[^.\[<]*(?:[.\[<][^.\[<]*)?', name).group(0)
    return found


def aggregate(replays):
    """Per family (``family``) of fields that differ from the trunk's.

    ``{family: {'replays': set of replay numbers, 'steps': Counter of
    steps, 'kinds': Counter of kinds, 'fields': Counter of fields
    (``field``), 'example': (number, step, path, before, after)}}``, over
    every replay's steps from its injection's on; the example is of a
    difference not ``FOLLOWING`` another, if any.
    """
    found = {}
    for number, (_injections, own) in enumerate(replays):
        for step, state in sorted(own.items()):
            if state[2] is None:
                continue
            for path, before, after in state[2]:
                kind = _kind(before, after)
                entry = found.setdefault(family(path), {
                    'replays': set(), 'steps': collections.Counter(),
                    'kinds': collections.Counter(),
                    'fields': collections.Counter(), 'example': None})
                entry['replays'].add(number)
                entry['steps'][step] += 1
                entry['kinds'][kind] += 1
                entry['fields'][field(path)] += 1
                if entry['example'] is None and kind not in FOLLOWING:
                    entry['example'] = (number, step, path, before, after)
    return found


def causes(differ):
    """The families of the fields in ``differ`` that differ of themselves.

    For a reason of their own (``family``), not ``FOLLOWING`` another.
    """
    return frozenset(family(path) for path, before, after in differ
                     if _kind(before, after) not in FOLLOWING)


def _short(text, width=38):
    text = 'absent' if text is None else text
    return text if len(text) <= width else text[:width - 3] + '...'


def print_diff(replays, control):
    """What sets the replays apart from the trunk, most often first.

    The families of fields that differ for a reason of their own (a
    value, a timestamp's second), each with its fields most often first
    and an example; how many differ only as they follow another; per
    step, which sets of those families the replays differ in; and the
    control (the trunk run again: what the runs before leave).
    """
    found = aggregate(replays)
    unreadable = sum(1 for _, own in replays for state in own.values()
                     if state[2] is None)
    print('what differs from the trunk\'s state at a step\'s end from the '
          'injection\'s on (%d replays; states with no digest: %d), by '
          'family (table and column, or section and attribute):'
          % (len(replays), unreadable))
    print('%8s  %-24s %-12s  %s' % ('replays', 'kinds', 'steps',
                                    'family: fields'))
    following = []
    for name, entry in sorted(found.items(),
                              key=lambda item: (-len(item[1]['replays']),
                                                item[0])):
        if entry['example'] is None:
            following.append(name)
            continue
        fields = [f[len(name):] if f.startswith(name) else '.'
                  for f, _ in entry['fields'].most_common()]
        print('%8d  %-24s %-12s  %s: %s' % (
            len(entry['replays']),
            ','.join('%s:%d' % kind for kind in sorted(
                entry['kinds'].items())),
            ','.join('%d:%d' % step for step in sorted(
                entry['steps'].items())), name,
            ' '.join(fields[:6]) + (' (%d more)' % (len(fields) - 6)
                                    if len(fields) > 6 else '')))
    print('families that differ only as they follow another (%s): %d'
          % ('/'.join(FOLLOWING), len(following)))
    print('an example of each (replay, step, path: trunk -> replay):')
    for name, entry in sorted(found.items()):
        if entry['example'] is not None:
            number, step, path, before, after = entry['example']
            print('  %d %d %s: %s -> %s' % (
                number, step, path, _short(before), _short(after)))
    print('replays by the families they differ in, per step:')
    for step in sorted({step for _, own in replays for step in own}):
        sets = collections.Counter(
            causes(own[step][2]) for _, own in replays
            if step in own and own[step][2] is not None)
        for families, count in sets.most_common():
            print('  step %d, %d replays: %s' % (
                step, count, ' '.join(sorted(families)) or 'none'))
    for step, differ in sorted((control or {}).items()):
        print('control: the trunk run again after the replays, step %d: %s'
              % (step, 'no digest' if differ is None else
                 ', '.join(path for path, _, _ in differ) or 'as the trunk'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scenario', default=SCENARIO)
    parser.add_argument('--name', default=None)
    parser.add_argument('--diff', action='store_true',
                        help='print which fields differ from the trunk\'s')
    args = parser.parse_args(argv)
    scenarios = scenario_mod.load(args.scenario)
    scenario = next((s for s in scenarios if s.name == args.name),
                    scenarios[0]) if args.name else scenarios[0]
    started = time.monotonic()
    trunk, replays, control = spread(scenario, args.diff)
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
    pairs = needed = exact = 0
    for b, count in seconds.items():
        before = b - 1
        states = [own.get(before) for a, own in firsts if a < b]
        pairs += len(states) * count
        # A first injection whose replay has no state there (it failed
        # before, or its state has no digest) is a group of its own.
        needed += len({state[1] if state and state[1] else
                       ('unknown', number)
                       for number, state in enumerate(states)}) * count
        exact += len({state[0] if state and state[0] else
                      ('unknown', number)
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
    print('depth-2 pairs the exact digest would skip: %d of %d'
          % (pairs - exact, pairs))
    if args.diff:
        print_diff(replays, control)


if __name__ == '__main__':
    main()
