"""Which of an exploration's failures are findings already written down.

A finding (``findings/*.yaml``) is a scenario that fails on installed
Nova, with a header saying what Nova documents instead; most put a
periodic, a restart or a request at a race point of a move
(``inject``). The nightly exploration finds those again every night;
``harness explore --known-findings DIR`` names them instead of failing
on them, so that its job fails on what is new.

An injection's signature is what it does and where: the move step it is
put before (its kind), before or after which race point, what runs
there (a periodic task, ``stop``, ``restart``, a request), and on which
role (``source``/``dest``; a host or server named otherwise matches any
role). A failure of the explorer is known when

- the reproducer its kind of failure was shrunk to has only injections
  with one finding's signatures (the shrinking kept the injections it
  fails by, and those are the finding's), and
- that finding, run once here, still fails, and first at a step of the
  same kind as the explorer's failure (not necessarily by the same
  check: a finding's own expectations usually fail before the invariant
  that the explored scenario trips).

Everything else still fails the exploration.
"""

import glob
import os

from harness.core import scenario as scenario_mod

ROLES = ('source', 'dest')


def signatures(scenario):
    """The signatures of ``scenario``'s injections, in step order."""
    found = []
    steps = scenario.steps
    for position, step in enumerate(steps):
        if step.kind != 'inject':
            continue
        move = next((later.kind for later in steps[position + 1:]
                     if later.kind != 'inject'), None)
        found.append((move,) + _what(step.raw['inject']))
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
    """``{signature: finding path}`` for the findings in ``directory``."""
    known = {}
    for path in sorted(glob.glob(os.path.join(directory, '*.yaml'))):
        for scenario in scenario_mod.load(path):
            for signature in signatures(scenario):
                known.setdefault(signature, path)
    return known


class Known(object):
    """The findings in ``directory``, to tell known failures from new."""

    def __init__(self, directory):
        self.signatures = load(directory)
        self._failures = {}

    def finding_for(self, steps, outcome, reproducer):
        """The finding ``outcome`` is, or None.

        ``steps`` are the raw steps of the replay that failed (its step
        ``outcome.step`` failed first), ``reproducer`` the path of the
        scenario its kind of failure was shrunk to.
        """
        paths = set()
        for scenario in scenario_mod.load(reproducer):
            mine = signatures(scenario)
            if not mine:
                return None
            for signature in mine:
                paths.add(_match(signature, self.signatures))
        if len(paths) != 1 or None in paths:
            return None
        path = paths.pop()
        failing = next(iter(steps[outcome.step - 1]))
        return path if failing in self._fails(path) else None

    def _fails(self, path):
        """The kinds of step the finding's scenarios first fail at."""
        if path not in self._failures:
            from harness.core import invariants
            from harness.runners import runner
            failures = set()
            for scenario in scenario_mod.load(path):
                timeline = runner.run(scenario, keep_going=True,
                                      checks=[invariants.Checker()])
                if timeline.failed:
                    first = timeline.failed[0]
                    failures.add(scenario.steps[first.index - 1].kind)
            self._failures[path] = failures
        return self._failures[path]


def _match(signature, known):
    *where, target = signature
    for (*k_where, k_target), path in known.items():
        if where == k_where and (target == k_target
                                 or None in (target, k_target)):
            return path
    return None
