"""Which of an exploration's failures are findings already written down.

A finding (``findings/*.yaml``) is a scenario that fails on installed
Nova, with a header saying what Nova documents instead; most put a
periodic, a restart or a request at a race point of a move
(``inject``). The nightly exploration finds those again every night;
``harness explore --known-findings DIR`` names them instead of failing
on them, so that its job fails on what is new.

An injection's signature is what it does and where: the move step it is
put before (its kind), before or after which race point, what runs there
(a periodic task, ``stop``, ``restart``, a request), and on which role
(``source``/``dest``; a host or server named otherwise matches any
role). Two injections whose signatures differ only in their points are
the same injection when their points fall in the same Nova state of that
step. The explorer injects only at the first point of each state
(``explorer.recorded_points``: points a step passed at the same
``Activity.version``, with no write to Nova's records or Placement
between them, show an injected periodic the same state), so its
reproducer names ``after instance.host`` (on the source) where a
finding, written by hand, names ``before finish_resize`` (on the
destination) of the same state; matching point names would call the
finding new every night.

The states are those the explorer saw: of a run of the reproducer (the
explored scenario's hosts and flavors, shrunk) with its injections
removed, the passages of the step passed at the version of the one its
injection fires at. A finding's injection is in that state if the
passage it fired at, in the finding's own run (the one below), is one of
them: the same point (``before``/``after`` and name) on a host of the
same role (the migration's source or destination; a point passed on
another host is another point). A reproducer's injection whose point
that run never passes (a second injection's, reached only after the
first) stands for its own point alone, on any host.

A failure of the explorer is known when

- the reproducer its kind of failure was shrunk to has only injections
  that are one finding's (the shrinking kept the injections it fails by,
  and those are the finding's), and
- that finding, run once here, still fails: the scenario of it whose
  injections those are fails first at a step of the same kind as the
  explorer's failure (not necessarily by the same check: a finding's own
  expectations usually fail before the invariant that the explored
  scenario trips; and not another scenario of the same file).

Everything else still fails the exploration.

Cost, over what matching point names cost (one run of each finding
named): one run without its injections of each reproducer whose
injections all have a finding's of the same kind (reproducers that
differ only in their injections share it); the findings run are those
named in its states, each once (``Known`` keeps both for a whole merge).
"""

import glob
import os

from harness.core import scenario as scenario_mod

ROLES = ('source', 'dest')
# The migration's field naming the host of each role.
ROLE_HOSTS = (('source', 'source_compute'), ('dest', 'dest_compute'))


def signatures(scenario):
    """The signatures of ``scenario``'s injections, in step order.

    ``(move, when, point, action, role)``; the point (``when``, name)
    is where it is written, the same injection's at another point of the
    same state aside (``Known``).
    """
    return [signature for signature, _ in _injections(scenario)]


def _injections(scenario):
    """``[(signature, where)]`` of ``scenario``'s injections.

    ``where``: ``(index of the step it is put before, when, point,
    at_host, server)``, the last two None when not narrowed.
    """
    found = []
    steps = scenario.steps
    for position, step in enumerate(steps):
        if step.kind != 'inject':
            continue
        move = next((later for later in steps[position + 1:]
                     if later.kind != 'inject'), None)
        inject = step.raw['inject']
        signature = (move and move.kind,) + _what(inject)
        found.append((signature, (move and move.index,) + signature[1:3]
                      + (inject.get('at_host'), inject.get('server'))))
    return found


def _what(inject):
    when = 'before' if 'before' in inject else 'after'
    if 'run' in inject:
        action, target = inject['run'], inject.get('on')
    elif 'do' in inject:
        action, target = next(iter(sorted(inject['do'].items())))
    else:
        action = 'stop' if 'stop' in inject else 'restart'
        target = inject.get(action)
    return (when, inject.get(when), action,
            target if target in ROLES else None)


def load(directory):
    """``{path: [its signatures]}`` of the findings in ``directory``."""
    known = {}
    for path in sorted(glob.glob(os.path.join(directory, '*.yaml'))):
        for scenario in scenario_mod.load(path):
            known.setdefault(path, []).extend(signatures(scenario))
    return known


def same_kind(signature, other):
    """Whether two signatures are the same but for their points."""
    (move, _, _, action, target) = signature
    (o_move, _, _, o_action, o_target) = other
    return (move, action) == (o_move, o_action) and (
        target == o_target or None in (target, o_target))


def host_roles(passage):
    """The roles of the migration in flight that name ``passage``'s host.

    Both on a resize to the same host; none where no migration was read
    or the point has no host (the conductor's, the scheduler's).
    """
    migration = passage.migration
    if migration is None or passage.host is None:
        return frozenset()
    return frozenset(role for role, field in ROLE_HOSTS
                     if getattr(migration, field, None) == passage.host)


def place(passage):
    """A passage as a point of a state: ``(when, point, host roles)``."""
    return (passage.when, passage.point, host_roles(passage))


def state_of(passages, when, point, at_host=None, server=None):
    """The state a step's injection at a point falls in.

    The places (``place``) of ``passages`` (a step's, in order) passed at
    the version of the first that the injection fires at (narrowed to
    ``at_host``/``server`` as it is); None if none is.
    """
    fired = _fired_at(passages, when, point, at_host, server)
    if fired is None:
        return None
    return {place(p) for p in passages if p.version == fired.version}


def in_state(found, state):
    """Whether the place ``found`` is one of ``state``'s.

    The same point on a host of a common role, or with no role on
    either side (a point with no host, or before any migration); a
    place of ``state`` with roles None is on any host.
    """
    when, point, roles = found
    return any((when, point) == (s_when, s_point)
               and (s_roles is None or roles & s_roles
                    or not (roles or s_roles))
               for s_when, s_point, s_roles in state)


class Known(object):
    """The findings in ``directory``, to tell known failures from new."""

    def __init__(self, directory):
        self.findings = load(directory)
        # finding path -> [(step kind a scenario of it first fails at, or
        # None; [(signature, place its injection fired at, or None)])],
        # a pair per scenario.
        self._runs = {}
        # A scenario without its injections (its document, as YAML) ->
        # {step index: the passages it recorded} in its run.
        self._plain = {}

    def finding_for(self, steps, outcome, reproducer):
        """The finding ``outcome`` is, or None.

        ``steps`` are the raw steps of the replay that failed (its step
        ``outcome.step`` failed first), ``reproducer`` the path of the
        scenario its kind of failure was shrunk to.
        """
        mine = self._signatures_of(reproducer)
        if not all(mine):
            return None
        mine = [signature for found in mine for signature in found]
        # Cheap first: findings with injections of the same kinds.
        candidates = [path for path, theirs in sorted(self.findings.items())
                      if all(any(same_kind(signature, other)
                                 for other in theirs) for signature in mine)]
        if not candidates:
            return None
        states = [pair for found in self._states_of(reproducer)
                  for pair in found]
        failing = next(iter(steps[outcome.step - 1]))
        for path in candidates:
            # Named there (on any host) before the finding runs.
            if not all(any(same_kind(signature, other)
                           and _named_in(other, state)
                           for other in self.findings[path])
                       for signature, state in states):
                continue
            # One scenario of the finding fails first at a step of that
            # kind, and its own injections are the reproducer's.
            if any(kind == failing and all(
                    any(same_kind(signature, other) and found is not None
                        and in_state(found, state)
                        for other, found in fired)
                    for signature, state in states)
                   for kind, fired in self._run(path)):
                return path
        return None

    def _signatures_of(self, reproducer):
        """The signatures of each of ``reproducer``'s scenarios."""
        return [signatures(scenario)
                for scenario in scenario_mod.load(reproducer)]

    def _states_of(self, reproducer):
        """The state of each injection of ``reproducer``'s scenarios.

        ``[[(signature, state)]]``, a list per scenario: each ``state``
        read (``state_of``) from a run of the scenario without its
        injections (one per such scenario: reproducers that differ only
        in their injections share it); where that run never passes the
        point, the point alone, on any host.
        """
        found = []
        for scenario in scenario_mod.load(reproducer):
            without, index = _without_injections(scenario)
            key = without.dump()
            if key not in self._plain:
                self._plain[key] = _plain_run(without)
            passages = self._plain[key]
            states = []
            for signature, (step, when, point, at_host,
                            server) in _injections(scenario):
                state = state_of(passages.get(index.get(step), ()), when,
                                 point, at_host, server)
                states.append((signature, state if state is not None
                               else {(when, point, None)}))
            found.append(states)
        return found

    def _run(self, path):
        """The finding at ``path`` run once; see ``self._runs``."""
        if path not in self._runs:
            from harness.core import invariants
            from harness.runners import runner
            runs = []
            for scenario in scenario_mod.load(path):
                timeline = runner.run(scenario, keep_going=True,
                                      checks=[invariants.Checker()])
                kind, fired = None, []
                if timeline.failed:
                    first = timeline.failed[0]
                    kind = scenario.steps[first.index - 1].kind
                runs.append((kind, fired))
                passages = _passages(timeline)
                for signature, (step, *where) in _injections(scenario):
                    # Where it fired: its first match in the step (a
                    # fired passage has its migration read).
                    at = _fired_at(passages.get(step, ()), *where)
                    fired.append((signature, at and place(at)))
            self._runs[path] = runs
        return self._runs[path]


def _fired_at(passages, when, point, at_host=None, server=None):
    """The first of ``passages`` an injection at the point fires at."""
    from harness.cloud import race
    return next((p for p in passages
                 if race.matches(p, point, when, at_host, server)), None)


def _named_in(signature, state):
    return any(signature[1:3] == (when, point) for when, point, _ in state)


def _passages(timeline):
    """``{step index: the passages it recorded}``."""
    return {entry.index: entry.passages for entry in timeline}


def _without_injections(scenario):
    """``scenario`` without its inject steps; where its steps went.

    ``(scenario, {index of a step in scenario: its index there})``.
    """
    from harness.runners import explorer
    kept = [step for step in scenario.steps if step.kind != 'inject']
    document = scenario.document([dict(step.raw) for step in kept])
    # Declared breaks name the injected scenario's steps; no check runs.
    for key in explorer.DECLARATIONS:
        document.pop(key, None)
    return (scenario_mod.parse(document, scenario.path, scenario.path),
            {step.index: n for n, step in enumerate(kept, 1)})


def _plain_run(scenario):
    """``{step index: passages}`` of a run of ``scenario``, roles noted.

    Noted: every passage has the migration in flight read, for
    ``host_roles``.
    """
    from harness.cloud import race
    from harness.runners import runner
    with race.noting_roles():
        return _passages(runner.run(scenario, keep_going=True))
