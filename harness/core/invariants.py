"""Invariants of Nova's resource accounting, checked after every step.

Each invariant is one unit of the check registry, one module under
``harness.core.checks.invariant`` (its meaning, its windows and its
function over snapshots are there); ``INVARIANTS`` lists them in the
order the ``Checker`` runs and reports them. An invariant returns
``harness.core.problems.Problem`` records whose ``check`` is its name
(their text starts with it); none means it holds. Only
``periodics_idempotent`` needs a cloud, to run the periodics it checks,
and it runs them on a copy (``cloud.trial()``). Nothing here imports
Nova.

The invariants' functions are importable from here too, for the tools
and tests that call one directly.
"""

import os
import time

from harness.core import checks
from harness.core.checks import base
from harness.core.checks.invariant import allocations_where_server_is as _aws
from harness.core.checks.invariant import capacity_probe as _probe
from harness.core.checks.invariant import devices_agree as _devices
from harness.core.checks.invariant import nothing_leaks as _leaks
from harness.core.checks.invariant import one_compute_node_per_consumer \
    as _one_node
from harness.core.checks.invariant import periodics_idempotent as _periodics
from harness.core.checks.invariant import tracker_agrees as _tracker
from harness.core.checks.invariant import usages_add_up as _usages
from harness.core.checks.invariant import within_capacity as _capacity
from harness.core.checks import views
from harness.core import steps as steps_mod

usages_add_up = _usages.usages_add_up
allocations_where_server_is = _aws.allocations_where_server_is
claim_windows = _aws.claim_windows
one_compute_node_per_consumer = _one_node.one_compute_node_per_consumer
tracker_agrees = _tracker.tracker_agrees
tracker_windows = _tracker.tracker_windows
tracker_view = views.tracker_view
periodics_idempotent = _periodics.periodics_idempotent
periodic_changes = _periodics.periodic_changes
about_providers = _periodics.about_providers
nothing_leaks = _leaks.nothing_leaks
within_capacity = _capacity.within_capacity
devices_agree = _devices.devices_agree


def __getattr__(name):
    # Derived from the units, so a new invariant's module is all it takes.
    if name == 'INVARIANTS':
        return tuple(checks.invariants())
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


#: ``HARNESS_CAPACITY_PROBE=1``: every ``Checker`` made without saying
#: otherwise runs the capacity probe (``harness run`` and the tests).
PROBE_ENV = _probe.PROBE_ENV


def probe_wanted(default=False):
    """Whether the environment asks for the capacity probe.

    ``HARNESS_CAPACITY_PROBE`` unset or empty: ``default``; ``0``: off;
    anything else on (``every``: after every step, the periodic job's;
    see ``checks.invariant.capacity_probe``).
    """
    value = os.environ.get(PROBE_ENV, '')
    if value == '':
        return default
    return value != '0'


class Checker(object):
    """All invariants, as a check for ``runner.run(checks=[...])``.

    Called after every step (but one that only arms: ``StepKind.arms``)
    as ``checker(cloud, step, snapshot, timeline, scenario)``; returns
    the problems (``Problem`` records, ``check`` the invariant's name).
    For each step it makes one ``checks.base.Context`` (the snapshots
    before and after the step, the cloud, the hosts the step reconciled),
    brings up to date the windows of every invariant that an enabled one
    honours (what the step kinds declare, read by the unit that owns
    them: a window stays open until the host's periodic runs), then runs
    the enabled invariants in their declared order (``INVARIANTS``).
    With ``periodic_idempotence``, ``periodics_idempotent`` runs
    ``update_available_resource`` on every running compute, in name order
    after odd checked steps and reversed after even ones, on a copy of the
    cloud that is put back afterwards; the copy's snapshot lets
    ``nothing_leaks`` check reconciled trackers as soon as no server is
    left. The checks only read: the next step sees exactly what this one
    left, stale trackers and open windows included.

    Expected breaks: an invariant in ``scenario.expected_breaks`` is not
    reported; its problems are recorded in ``broken`` (invariant -> list
    of ``(step index, problem)``), so a test asserts the bug still shows
    with ``missing_breaks(scenario)`` (the expected invariants that never
    broke) being empty.

    ``capacity_probe`` asks each host's tracker whether it takes what
    Placement says still fits (``checks.invariant.capacity_probe``):
    ``True`` or ``False``; else on if ``enabled`` names it; else what
    ``HARNESS_CAPACITY_PROBE`` says (``probe_wanted``), and when it says
    nothing, ``probe_by_default``: the gate's checkers (the scenario and
    regression tests, ``harness run``) pass True, others (the explorer,
    its known findings) leave the probe off unless asked.

    ``timings`` holds the seconds spent per invariant, its windows
    included (``periodics_idempotent`` includes the copy, the periodics,
    the snapshot after and putting the cloud back).
    """

    def __init__(self, periodic_idempotence=True, enabled=None,
                 capacity_probe=None, probe_by_default=False):
        units = checks.invariants()
        unknown = set(enabled or ()) - set(units)
        if unknown:
            raise ValueError('unknown invariants %s; known: %s' % (
                ', '.join(sorted(unknown)), ', '.join(units)))
        self.enabled = set(enabled) if enabled is not None else {
            name for name, unit in units.items() if unit.by_default}
        if not periodic_idempotence:
            self.enabled.discard('periodics_idempotent')
        if capacity_probe is None:
            # Named in ``enabled`` when given, else the environment's.
            capacity_probe = ('capacity_probe' in enabled
                              if enabled is not None
                              else probe_wanted(probe_by_default))
        if capacity_probe:
            self.enabled.add('capacity_probe')
        else:
            self.enabled.discard('capacity_probe')
        self.timings = {name: 0.0 for name in units}
        self.calls = 0
        self._units = [(name, unit) for name, unit in units.items()
                       if name in self.enabled]
        # The invariants whose windows are kept: those an enabled one
        # honours, in the declared order.
        honoured = {name for _, unit in self._units for name in unit.honours}
        self._owners = [(name, unit) for name, unit in units.items()
                        if name in honoured]
        self._timeline = None
        self._reset()

    def _reset(self):
        self.broken = {}
        self.windows = {}
        self.reconciled_hosts = set()
        self.steps = 0

    def missing_breaks(self, scenario):
        """The invariants ``scenario`` expects to break that never did."""
        return sorted(name for name in scenario.expected_breaks
                      if name not in self.broken)

    def __call__(self, cloud, step, snap, timeline, scenario):
        if timeline is not self._timeline:
            self._timeline = timeline
            self._reset()
        self.calls += 1
        self.steps += 1
        entries = list(timeline)
        reconciled = self._hosts_reconciled_by(step, cloud)
        if snap.servers:
            self.reconciled_hosts = set()
        else:
            self.reconciled_hosts |= set(reconciled)
        context = base.Context(
            cloud, step, scenario,
            before=entries[-2].snapshot if len(entries) > 1 else snap,
            snapshot=snap, reconciled=reconciled,
            reconciled_hosts=self.reconciled_hosts, checked=self.steps)
        for name, unit in self._owners:
            start = time.perf_counter()
            self.windows[name] = unit.windows(self.windows.get(name),
                                              context)
            context.windows[name] = self.windows[name]
            self.timings[name] += time.perf_counter() - start
        problems = []
        expected = getattr(scenario, 'expected_breaks', {}) or {}
        for name, unit in self._units:
            start = time.perf_counter()
            found = unit.check(context)
            self.timings[name] += time.perf_counter() - start
            for problem in found:
                if name in expected:
                    self.broken.setdefault(name, []).append(
                        (step.index, problem))
                else:
                    problems.append(problem)
        return problems

    @staticmethod
    def _hosts_reconciled_by(step, cloud):
        """Hosts where the step ran the periodic after all its work."""
        if step.error is not None:
            # An operation that failed as expected (a compute whose start
            # Nova refused) ran no start-up pass.
            return set()
        return steps_mod.get(step.kind).reconciles(step.args,
                                                   set(cloud.computes))
