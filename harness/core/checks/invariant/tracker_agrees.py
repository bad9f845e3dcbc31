"""``tracker_agrees``: each resource tracker counts what Placement holds."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod
from harness.core import steps as steps_mod
from harness.core.steps import base as steps_base


class TrackerAgrees(base.Invariant):
    """Each resource tracker counts what Placement holds for it.

    Host by host, each resource tracker counts what Placement holds in
    its host's provider tree: ``vcpus_used - VCPU reserved`` is the VCPU
    plus PCPU usage, ``memory_mb_used - MEMORY_MB reserved`` the MEMORY_MB
    usage, ``local_gb_used - DISK_GB reserved`` the DISK_GB usage (at most
    that when a flavor has swap: Placement counts swap, the tracker does
    not), and the number of pinned CPUs the PCPU usage. Every pinned CPU
    belongs to its cell's ``pcpus`` and to the host's
    ``cpu_dedicated_set`` (for profiled hosts) and is pinned in one cell
    only. The snapshot keeps a cell's pinned CPUs as a set, so a CPU
    pinned twice shows as fewer pinned CPUs than PCPUs allocated.

    Its windows (``tracker_windows``): the tracker is reconciled only by
    ``update_available_resource``; between runs Nova updates it by
    claims, and some of Nova's own code paths leave it behind Placement
    until the host's next run. These are the tolerated windows, each a
    bound on how far the tracker may be off. The step kind that opens one
    declares it (``windows`` of its unit in ``harness.core.steps``:
    ``live_migrate``, ``delete``, ``evacuate``, and the requests sent in
    a step); the windows add up, and the periodic on the host closes them
    (a step whose unit ``reconciles`` the host):

    - live migration to host D: only a NUMA live migration makes a claim
      on D (``_live_migration_claim``); the guest otherwise reaches D's
      tracker at D's next periodic (the source is reconciled:
      ``_post_live_migration`` runs ``update_available_resource``). D's
      tracker may count up to the guest's allocation on D less, pinned
      CPUs included (a NUMA guest is pinned on D by its claim; with the
      bound, either is accepted).
    - delete of a guest that was ever moved: the compute's delete path
      (``_complete_deletion`` -> ``ResourceTracker.update_usage``) only
      releases guests in ``tracked_instances``. A guest the tracker
      counts as a migration (it arrived by resize or migration since the
      host's last periodic; or a same-host resize was confirmed, which
      discards it from ``tracked_instances``; or it came back by revert
      after a periodic saw it leave) keeps counting, pinned CPUs
      included, until the host's next periodic. The host's tracker may
      count up to the guest's last allocation there more.
    - delete of a guest while its compute is down: the API deletes it
      locally and drops its allocations; the compute's record counts it
      until the compute starts again (startup runs the periodic).
    - evacuation from host S: S's compute is down, so its record keeps
      counting the guest until it starts again, while Placement may drop
      S's part of the allocation before that (a delete of the evacuated
      server deletes all of it). S's tracker may count up to the guest's
      allocation on S more (``evacuate``).

    LP#1944759 is not in any window: a periodic on the source between
    ``resize_instance`` and ``finish_resize`` that drops the outbound
    migration leaves the source tracker below Placement, which still
    holds the migration's PCPUs there.
    """

    name = 'tracker_agrees'
    order = 40
    summary = ("Each resource tracker counts what Placement holds in its "
               "host's tree.")
    honours = ('tracker_agrees',)

    def windows(self, opened, context):
        return tracker_windows(opened or {}, context.before,
                               context.snapshot, context.reconciled,
                               down=context.down, step=context.step)

    def check(self, context):
        return tracker_agrees(
            context.snapshot, _dedicated(context.cloud, context.scenario),
            context.windows.get(self.name),
            disk_exact=not any(flavor.swap for flavor in
                               context.scenario.flavors.values()))


def _dedicated(cloud, scenario):
    """Host -> cpu_dedicated_set of the profiled hosts, as plain sets."""
    dedicated = {}
    for name, host in scenario.hosts.items():
        if host.profile is None:
            continue
        hosts = cloud.libvirt_hosts()
        if hosts.has(name):
            dedicated[name] = frozenset(hosts.profile(name).dedicated_cpus)
    return dedicated


def _placement_view(snap, roots):
    """What Placement holds in the trees of ``roots``, in tracker terms."""
    usage = {}
    for rp in snap.providers.values():
        if rp.root in roots:
            for rc, amount in rp.usages.items():
                usage[rc] = usage.get(rc, 0) + amount
    return {'vcpus': usage.get('VCPU', 0) + usage.get('PCPU', 0),
            'memory_mb': usage.get('MEMORY_MB', 0),
            'local_gb': usage.get('DISK_GB', 0),
            'pinned': usage.get('PCPU', 0)}


def tracker_agrees(snap, dedicated=None, windows=None, disk_exact=True,
                   hosts=None):
    """See the unit's docstring; ``windows`` from ``tracker_windows``.

    :param dedicated: host -> set of CPU ids of its ``cpu_dedicated_set``.
    :param disk_exact: the tracker's disk is Placement's exactly (no
        flavor has swap), not at most Placement's.
    :param hosts: only the trackers of these hosts (by default all).
    """
    problems = []
    windows = windows or {}
    dedicated = dedicated or {}
    for node in sorted(snap.trackers):
        tracker = snap.trackers[node]
        host = tracker.host
        if node not in snap.providers or (
                hosts is not None and host not in hosts):
            continue
        roots = {snapshot_mod.root(snap, node)}
        want = _placement_view(snap, roots)
        got = views.tracker_view(snap, node)
        if not tracker.cells:
            # No NUMA topology: nothing can be pinned; PCPU is not counted
            # apart from VCPU.
            got['pinned'] = want['pinned']
        # A node of a host with several is named with its host.
        where = host if node == host else '%s node %s' % (host, node)
        window = windows.get(host, {})
        below = window.get('below', {})
        above = window.get('above', {})
        for key in views.TRACKER_KEYS:
            low = want[key] - below.get(key, 0)
            high = want[key] + above.get(key, 0)
            if key == 'local_gb' and not disk_exact:
                low = min(low, 0)
            if low <= got[key] <= high:
                continue
            tolerated = ''
            if low != high:
                tolerated = ' (tolerated %s..%s: %s)' % (
                    low, high, window_text(window))
            problems.append(Problem(
                'tracker_agrees', 'host %s, %s' % (where, key),
                expected=want[key], actual=got[key],
                text=(
                    'tracker_agrees: host %s, %s: tracker counts %s, '
                    'Placement %s%s (%s)' % (
                        where, views.KEY_NAMES[key], got[key], want[key],
                        tolerated, _consumers_on(snap, roots, key)))))
        problems += _pinning_problems(snap, node, dedicated.get(host))
    return problems


def _consumers_on(snap, roots, key):
    parts = []
    for consumer in sorted(snap.allocations):
        held = snapshot_mod.held_in(snap, consumer, roots)
        amount = sum(held.get(rc, 0) for rc in views.KEY_RCS[key])
        if amount:
            parts.append('%s=%s' % (consumer, amount))
    return 'Placement consumers: %s' % (', '.join(parts) or 'none')


def _pinning_problems(snap, node, dedicated):
    problems = []
    tracker = snap.trackers[node]
    seen = {}
    for cell in tracker.cells:
        for cpu in cell.pinned_cpus:
            if cpu in seen:
                problems.append(Problem(
                    'tracker_agrees', 'host %s, CPU %d' % (tracker.host, cpu),
                    text=(
                        'tracker_agrees: host %s: CPU %d is pinned in cells '
                        '%d and %d' % (tracker.host, cpu, seen[cpu],
                                       cell.id))))
            seen[cpu] = cell.id
        outside = sorted(set(cell.pinned_cpus) - set(cell.pcpus))
        if outside:
            problems.append(Problem(
                'tracker_agrees', 'host %s cell %d' % (tracker.host, cell.id),
                text=(
                    'tracker_agrees: host %s cell %d: pinned CPUs %s are not '
                    'among the cell\'s dedicated CPUs %s' % (
                        tracker.host, cell.id, views.cpus(outside),
                        views.cpus(cell.pcpus)))))
        if dedicated is not None:
            outside = sorted(set(cell.pinned_cpus) - set(dedicated))
            if outside:
                problems.append(Problem(
                    'tracker_agrees', 'host %s cell %d' % (
                        tracker.host, cell.id),
                    text=(
                        'tracker_agrees: host %s cell %d: pinned CPUs %s lie '
                        'outside cpu_dedicated_set %s' % (
                            tracker.host, cell.id, views.cpus(outside),
                            views.cpus(dedicated) or 'unset'))))
    return problems


def window_text(window):
    """What a report says of a host's open window: why, and its lags."""
    lags = window.get('lags') or ()
    return '; '.join(filter(None, [window.get('why', '')] + [
        'window %s' % lag for lag in lags]))


def _carried(window):
    """A copy of a window open before the step, to add this step's to."""
    carried = {'below': dict(window.get('below', {})),
               'above': dict(window.get('above', {})),
               'why': window.get('why', '')}
    if 'lags' in window:
        carried['lags'] = list(window['lags'])
    return carried


def tracker_windows(windows, before, after, reconciled=(), down=(),
                    step=None):
    """The tolerated windows after a step; see the unit's docstring.

    :param windows: host -> {'below': {key: n}, 'above': {key: n}, 'why',
        'lags'} open before the step (not changed); ``lags``: each
        window's ``Lag.describe()`` (why Nova lags, what catches up).
    :param before: the snapshot before the step; ``after`` after it.
    :param reconciled: hosts where ``update_available_resource`` ran after
        everything the step did (their windows close).
    :param down: hosts whose compute is stopped (a guest deleted there is
        deleted locally by the API; the record keeps counting it until the
        compute starts again and runs the periodic at startup).
    :param step: the step (``scenario.Step``): the windows are those its
        kind declares (``harness.core.steps``), with those of the requests
        sent in it; with ``None``, those any kind would open between the
        two snapshots.
    :returns: the windows open after the step.
    """
    opened = {host: _carried(w) for host, w in windows.items()}
    if step is not None:
        units = views.step_units(step)
    else:
        units = [(unit, None) for unit in steps_mod.registry().values()]
    for unit, args in units:
        for window in unit.windows(args, before, after, set(down)):
            if not isinstance(window, steps_base.Window):
                continue   # an allocation's window: claim_windows
            into = opened.setdefault(window.host, {'below': {}, 'above': {},
                                                   'why': '', 'lags': []})
            for key, amount in window.amounts().items():
                if amount:
                    into[window.side][key] = (into[window.side].get(key, 0)
                                              + amount)
            into['why'] = '; '.join(filter(None, (into['why'], window.why)))
            lags = into.setdefault('lags', [])
            if window.lag.describe() not in lags:
                lags.append(window.lag.describe())
    for host in reconciled:
        opened.pop(host, None)
    return {host: w for host, w in opened.items()
            if any(w['below'].values()) or any(w['above'].values())}


CHECK = TrackerAgrees()
