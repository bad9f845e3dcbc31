"""Problems as records: what a check found, not yet words.

Expectations, invariants and the runner return ``Problem`` records: which
check found it, at which step, about what (``subject``), and the expected
and actual values when the check compares two. Tools compare and group
records (the explorer groups failures by ``kind``, ``harness reproduce``
and the bite proofs read ``check``); text is made only at the edges (the
CLI, test details, reports) by ``str(problem)``.
"""

import dataclasses
import typing

from harness.core import checks

#: What the runner itself reports: a step that failed, an injection that
#: never fired.
STEP_FAILED = 'step'
UNFIRED = 'injection_unfired'


def __getattr__(name):
    # Derived from the check registry (harness.core.checks), so that a new
    # check's module is all it takes: ``EXPECTATIONS``, the expectation
    # keys; ``ACCOUNTING``, the checks whose failure is wrong accounting
    # (Placement's or a tracker's).
    if name == 'EXPECTATIONS':
        return tuple(checks.expectations())
    if name == 'ACCOUNTING':
        return checks.accounting()
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


@dataclasses.dataclass(frozen=True)
class Problem(object):
    """One thing a check found wrong.

    :param check: the expectation key (``allocations``), the invariant's
        name (``tracker_agrees``), or ``step`` / ``injection_unfired``.
    :param subject: what it is about, e.g. ``vm1 on src`` or
        ``provider src, PCPU``.
    :param step: the step's index (1-based; set by the runner).
    :param text: the line a person reads (``str(problem)``).
    """
    check: str
    subject: str
    expected: typing.Any = None
    actual: typing.Any = None
    text: str = ''
    step: typing.Optional[int] = None

    def __str__(self):
        if self.text:
            return self.text
        return '%s: %s: expected %s, got %s' % (
            self.check, self.subject, self.expected, self.actual)

    @property
    def kind(self):
        """What two problems share when they are the same failure.

        An invariant's name (its subject varies with the consumers and
        providers involved); an expectation's key and subject.
        """
        if self.check in checks.expectations():
            return '%s %s' % (self.check, self.subject)
        return self.check

    @property
    def accounting(self):
        """Whether this is wrong accounting, not a step that failed."""
        unit = checks.registry().get(self.check)
        return unit is not None and unit.accounting

    def at(self, step):
        """This problem, stamped with the step index it was found at."""
        return dataclasses.replace(self, step=step)


def render(problems):
    """The problems as lines of text."""
    return [str(problem) for problem in problems]
