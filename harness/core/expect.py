"""Expectations a scenario step states, checked against a snapshot.

Under ``expect:`` a step may give any registered expectation key: one
unit each, in ``harness.core.checks.expect`` (its ``shape``, ``example``
and meaning are in its unit). Today: ``allocations``, ``usages``,
``tracker``, ``pinned_cpus``, ``servers``, ``migrations``, ``providers``,
``devices``, ``pci`` and ``mdevs``.

Exactness: a listed set is exact. Under ``allocations``, a consumer not
named holds nothing, and a named consumer holds nothing on hosts not named
for it; under ``usages``, ``tracker`` and ``pinned_cpus``, a scenario host
not named holds (counts, pins) nothing. ``servers`` and ``migrations``
check only what they name. ``{}`` or ``0`` says "nothing" explicitly.

Where a host manages several compute nodes (``nodes:``), ``allocations``,
``usages``, ``tracker``, ``pinned_cpus`` and ``providers`` name its nodes
instead (each is its own provider and tracker); a host without ``nodes:``
is named by itself.
"""

from harness.core import checks
from harness.core import errors


def __getattr__(name):
    # Derived from the units, so a new key's module is all it takes.
    if name == 'EXPECT_KEYS':
        return tuple(checks.expectations())
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


def parse(check, expect, scenario, state):
    """Check an ``expect:`` mapping; return it with flavors resolved."""
    units = checks.expectations()
    check.mapping(expect, '')
    check.keys(expect, tuple(units))
    return {name: unit.parse(check.field(name), expect[name], scenario,
                             state)
            for name, unit in units.items() if name in expect}


def check(expect, snap, scenario):
    """Differences between ``expect`` and ``snap``: ``Problem`` records."""
    problems = []
    for name, unit in checks.expectations().items():
        if name in expect:
            problems += unit.check(expect[name], snap, scenario)
    return problems


def failure(step, problems):
    """The ScenarioFailed for a step's differences (``Problem`` records)."""
    lines = [str(problem) for problem in problems]
    return errors.ScenarioFailed(
        'step %d (%s): expectations not met:\n  %s'
        % (step.index, step.label, '\n  '.join(lines)),
        step=step, diff='\n'.join(lines), problems=problems)
