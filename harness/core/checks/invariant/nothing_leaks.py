"""``nothing_leaks``: once no server is left, nothing is held or counted."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core import names
from harness.core.problems import Problem


class NothingLeaks(base.Invariant):
    """Once no server is left, nothing is held or counted.

    Once no server is left, no allocation, no consumer and no usage
    remains in Placement. A tracker is reconciled only by its periodic,
    so the trackers are checked in the snapshot taken after
    ``update_available_resource`` ran on every running compute with no
    server left (``periodics_idempotent``'s, ``context.after_periodics``)
    and, in the step's own snapshot, for the hosts whose periodic ran
    with no server left (``context.reconciled_hosts``): they count
    nothing beyond the reserved amounts, pin no CPU and use no CPU,
    memory or page of any cell. A stopped compute's record stays as it
    last saved it, so it is not checked.

    Its windows are ``allocations_where_server_is``'s: a server deleted
    locally while the API could not reach Placement keeps its
    allocations, and the usage they make, in its host's tree while that
    compute is down (``delete.KeptAllocationsWindow``).
    """

    name = 'nothing_leaks'
    order = 60
    summary = ('Once no server is left, Placement holds nothing and the '
               'reconciled trackers count nothing.')

    honours = ('allocations_where_server_is',)

    def check(self, context):
        return nothing_leaks(context.snapshot,
                             reconciled=context.after_periodics,
                             reconciled_hosts=context.reconciled_hosts,
                             running=context.running,
                             windows=context.windows.get(
                                 'allocations_where_server_is'))


def nothing_leaks(snap, reconciled=None, reconciled_hosts=(),
                  running=None, windows=None):
    """See the unit's docstring.

    :param reconciled: a snapshot taken after the periodic ran on every
        running host with no server left (their trackers are checked).
    :param reconciled_hosts: hosts whose trackers in ``snap`` itself are
        reconciled (their periodic ran with no server left).
    :param running: hosts whose compute runs; a stopped compute's record
        stays as it last saved it, so it is not checked (``None``: all).
    :param windows: consumer -> ``allocations_where_server_is``'s window.
    """
    if snap.servers:
        return []
    problems = []
    kept = {consumer for consumer, window in (windows or {}).items()
            if hasattr(window, 'excuses') and window.excuses(snap)}
    for consumer in sorted(snap.allocations):
        if consumer in kept:
            continue
        problems.append(Problem(
            'nothing_leaks', consumer,
            text=(
                'nothing_leaks: no server is left, but consumer %s holds %s'
                % (consumer, views.fmt_held(snap.allocations[consumer])))))
    for name in sorted(snap.providers):
        usages = _less_kept(snap, name, kept)
        if usages:
            problems.append(Problem(
                'nothing_leaks', 'provider %s' % name,
                text=(
                    'nothing_leaks: no server is left, but provider %s has '
                    'usage %s' % (name, views.fmt(usages)))))
    checks = []
    if reconciled is not None and not reconciled.servers:
        checks.append((reconciled, sorted(
            node for node, tracker in reconciled.trackers.items()
            if running is None or tracker.host in running)))
    if reconciled_hosts:
        checks.append((snap, sorted(
            node for node, tracker in snap.trackers.items()
            if tracker.host in reconciled_hosts)))
    for view, nodes in checks:
        for node in nodes:
            problems += _tracker_leaks(view, node)
    return problems


def _less_kept(snap, provider, kept):
    """``provider``'s usage less what the ``kept`` consumers hold there."""
    usages = dict(snap.providers[provider].usages)
    for consumer in kept:
        for rc, amount in snap.allocations_of(consumer).get(
                provider, {}).items():
            usages[rc] = usages.get(rc, 0) - amount
    return {rc: amount for rc, amount in usages.items() if amount}


def _tracker_leaks(snap, node):
    problems = []
    tracker = snap.trackers[node]
    counted = views.tracker_view(snap, node)
    for key in ('vcpus', 'memory_mb', 'local_gb'):
        if counted[key]:
            problems.append(Problem(
                'nothing_leaks', 'host %s, %s' % (tracker.host, key),
                text=(
                    'nothing_leaks: no server is left, but after %s the '
                    'tracker of %s counts %s %s beyond the reserved amount'
                    % (names.RECONCILE, tracker.host, counted[key],
                       views.KEY_NAMES[key]))))
    for cell in tracker.cells:
        used_pages = {size: page['used'] for size, page in cell.pages.items()
                      if page.get('used')}
        if cell.pinned_cpus or cell.cpu_usage or cell.memory_usage or \
                used_pages:
            problems.append(Problem(
                'nothing_leaks', 'host %s cell %d' % (tracker.host, cell.id),
                text=(
                    'nothing_leaks: no server is left, but after %s the '
                    'tracker of %s cell %d still has pinned CPUs %s, '
                    'cpu_usage %s, memory_usage %s, pages used %s' % (
                        names.RECONCILE, tracker.host, cell.id,
                        views.cpus(cell.pinned_cpus), cell.cpu_usage,
                        cell.memory_usage, used_pages or 'none'))))
    return problems


CHECK = NothingLeaks()
