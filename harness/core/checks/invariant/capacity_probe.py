"""``capacity_probe``: each host takes what Placement says still fits."""

import os

from harness.core import capacity
from harness.core.checks import base
from harness.core.checks.invariant import tracker_agrees
from harness.core.problems import Problem


class CapacityProbe(base.Invariant):
    """Each host's tracker takes what Placement says still fits there.

    For each running compute whose tracker has a NUMA topology, the
    requests ``harness.core.capacity.requests_for`` derives from
    Placement's view of the host (the largest pinned guest, shared guest
    with one NUMA node and guest of huge pages of each size that a cell
    is guaranteed to hold, whichever way the guests Placement counts
    there are spread: see that module for the rules per resource) are
    put to the host's resource tracker through Nova's own NUMA fitting
    (``cloud.claim_test``: ``numa_fit_instance_to_host`` on the
    tracker's topology with the scheduler's limits, the test a claim
    makes). A refusal is **phantom usage**: Placement would send the
    request there and the host would turn it away ("No valid host was
    found" from ``NUMATopologyFilter``, or a failed claim). And one
    request Placement refuses, ``PCPU free + 1`` dedicated CPUs in a cell
    the tracker shows that free, taken by the tracker, is **phantom
    capacity**. Each problem names the host, the request, the tracker's
    view of its cells and Placement's.

    Devices (``harness.core.capacity.device_requests``): with ``[pci]
    report_in_placement``, one device of each PCI device provider with a
    unit free, for a guest without NUMA topology, is put to the compute's
    claim and the scheduler's ``PciPassthroughFilter``
    (``cloud.claim_test`` answers ``{view: taken}``, each on a copy of
    the PCI pools); a refusal is phantom usage, naming the views that
    refused, the provider's usage and the PCI tracker's devices; one
    device of a full provider taken is phantom capacity.

    When it runs (on by default in the gate: the scenario and regression
    tests and ``harness run``; ``HARNESS_CAPACITY_PROBE=0`` turns it off,
    ``=every`` runs it after every step, the periodic job's
    ``functional-probe``): after each step that leaves a ``tracker_agrees``
    window open (a tracker allowed to lag Placement: that lag is what
    could hide a refused request, and a window excuses Nova's designed
    lag, never what a user sees), and after the scenario's last step.
    Elsewhere a tracker that lags Placement fails ``tracker_agrees``
    already. It makes no claim and saves nothing (the tracker's
    topology is decoded into a new object, as a claim does), so it needs
    no ``cloud.trial()``. Hosts whose compute is stopped or forced down
    are left out: no request reaches them.
    """

    name = 'capacity_probe'
    order = 45
    summary = ('Each host takes the pinned, shared and huge-page guests '
               'and the PCI devices Placement says still fit there, and '
               'no more.')
    honours = ('tracker_agrees',)
    # A bare ``Checker()`` (the explorer's) leaves it off; the gate's
    # pass ``probe_by_default``: see the Checker and
    # doc/source/reference/checks.rst.
    by_default = False

    def check(self, context):
        windows = context.windows.get('tracker_agrees') or {}
        last = context.step.index == len(context.scenario.steps)
        if not windows and not last and not every_step():
            return []
        hosts = context.running - context.down
        return capacity_probe(context.snapshot, hosts,
                              context.cloud.claim_test, windows)


#: The switch (``invariants.probe_wanted`` reads it too).
PROBE_ENV = 'HARNESS_CAPACITY_PROBE'


def every_step():
    """Whether ``HARNESS_CAPACITY_PROBE=every`` asks for every step.

    Not only where a window is open and at the end: the periodic job's.
    """
    return os.environ.get(PROBE_ENV, '') == 'every'


#: The class of what the probe finds while a tracker window is open.
USER_VISIBLE = 'user-visible window'


def capacity_probe(snap, hosts, claim_test, windows=None):
    """Problems for the requests a host answers against Placement.

    :param hosts: the hosts to ask (running, not forced down).
    :param claim_test: ``claim_test(host, node, request)`` -> the cells
        the tracker would give the request, or None if it refuses it
        (for a ``DeviceRequest``: ``{view: whether it takes it}``);
        ``LookupError`` if the tracker has no topology for the node.
    :param windows: ``tracker_agrees``'s open windows (host -> its
        window), named in a problem on a host that has one.
    """
    problems = []
    windows = windows or {}
    for node in sorted(snap.trackers):
        tracker = snap.trackers[node]
        if tracker.host not in hosts:
            continue
        requests = capacity.requests_for(tracker, snap.providers.get(node))
        requests += capacity.device_requests(snap, tracker)
        for request in requests:
            try:
                taken = claim_test(tracker.host, node, request)
            except LookupError:
                # The record outlives the tracker's node (a node removed
                # before its periodic): no request reaches it.
                break
            if isinstance(request, capacity.DeviceRequest):
                wrong = [view for view, took in sorted(taken.items())
                         if took != request.placement_allows]
                if wrong:
                    problems.append(_problem(tracker, node, request, wrong,
                                             windows.get(tracker.host)))
                continue
            if (taken is not None) == request.placement_allows:
                continue
            problems.append(_problem(tracker, node, request, taken,
                                     windows.get(tracker.host)))
    return problems


def _where(tracker, node):
    return (tracker.host if node == tracker.host
            else '%s node %s' % (tracker.host, node))


def _problem(tracker, node, request, taken, window):
    """The problem of a request whose answer is not Placement's.

    ``taken``: for a ``DeviceRequest``, the views whose answer it is;
    else the cells the tracker would give a request Placement refuses.
    """
    where = _where(tracker, node)
    if isinstance(request, capacity.DeviceRequest):
        subject = 'host %s, %s %s' % (where, request.kind, request.provider)
        how, view = ', in %s' % ' and '.join(taken), request.tracker
    else:
        subject = 'host %s, %s' % (where, request.kind)
        how = '' if request.placement_allows else ', in cell%s %s' % (
            '' if len(taken) == 1 else 's',
            ', '.join(map(str, sorted(taken))))
        view = capacity.tracker_text(tracker)
    if request.placement_allows:
        what = 'refuses %s that Placement allows (phantom usage)'
        expected, actual = 'taken', 'refused'
    else:
        what = 'would take %s that Placement refuses (phantom capacity)'
        expected, actual = 'refused', 'taken'
    text = ('capacity_probe: host %s %s%s; Placement: %s; tracker: %s'
            % (where, what % request.describe(), how, request.placement,
               view))
    if window:
        # A window excuses a lag nobody sees; a request refused (or
        # taken) meanwhile is a lag a user sees: its own class.
        text = text.replace('capacity_probe: ',
                            'capacity_probe: %s: ' % USER_VISIBLE, 1)
        text += '; hidden by the window: %s' % (
            tracker_agrees.window_text(window))
    return Problem('capacity_probe', subject, expected=expected,
                   actual=actual, text=text)


CHECK = CapacityProbe()
