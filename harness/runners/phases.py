"""Where an explorer replay's time goes, by phase.

``Phases`` is a run observer (``harness.core.hooks``) each replay runs
with; the explorer sums its ``seconds()`` over the replays
(``Report.add_phases``).
"""

import time


#: Where a replay's time goes: ``reset`` (the scenario loaded, the kept
#: cloud put back to its checkpoint and settled, or a cloud stood up),
#: ``prefix`` (the steps before the first injected one, with their checks:
#: the same in every replay of a step's points), ``steps`` and ``checks``
#: (the steps from the injection on, and the invariants after them), and
#: ``other`` (the run's end, its report).
PHASES = ('reset', 'prefix', 'steps', 'checks', 'other')


class Phases(object):
    """A run observer that times a replay's phases (``PHASES``)."""

    def __init__(self, prefix, checkers):
        self.prefix = prefix
        self.checkers = checkers
        self.started = time.monotonic()
        self.ready = None
        self.ended = None
        self.times = {name: 0.0 for name in PHASES}
        self._step = None

    def _checked(self):
        return sum(sum(c.timings.values()) for c in self.checkers)

    def run_started(self, scenario, cloud):
        self.ready = time.monotonic()

    def branched(self, prefix, forked_at):
        """In a child forked after ``prefix`` steps: time only its own."""
        self.prefix = prefix
        self.times = {name: 0.0 for name in PHASES}
        # Its reset: the fork and the child's start.
        self.started, self.ready = forked_at, time.monotonic()
        # Forked inside a step, what is left of it is the child's own.
        self._step = (prefix + 1, self.ready, self._checked())

    def step_started(self, step):
        # A step that only arms takes no time, and a child forked inside
        # a step hears of its inject steps only once that step is over.
        if not step.unit.arms:
            self._step = (step.index, time.monotonic(), self._checked())

    def step_done(self, step, entry):
        if step.unit.arms:
            return
        index, began, checked = self._step
        took = time.monotonic() - began
        checks = self._checked() - checked
        if index <= self.prefix:
            self.times['prefix'] += took
        else:
            self.times['steps'] += took - checks
            self.times['checks'] += checks

    def seconds(self):
        end = time.monotonic()
        times = dict(self.times)
        ready = self.ready if self.ready is not None else end
        times['reset'] = ready - self.started
        times['other'] = max(0.0, end - self.started - sum(times.values()))
        return times
