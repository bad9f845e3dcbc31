"""Invariants of Nova's resource accounting, checked after every step.

Each invariant is a small function over snapshots
(``harness.core.snapshot``) that returns a list of problems,
``harness.core.problems.Problem`` records whose ``check`` is the
invariant's name (their text starts with it); an empty list means it
holds. Only ``periodics_idempotent`` needs a cloud, to run the periodics
it checks, and it runs them on a copy (``cloud.trial()``). Nothing here
imports Nova.

``usages_add_up(snap)``
    Placement's usage of each provider, class by class, is the sum of the
    allocations against it.

``allocations_where_server_is(snap, claims=None)``
    A server's allocations lie only in the provider tree of its host (of
    its compute node, ``instance.node``, on a host with several), or
    of the destination of a move of it still in flight (a live migration
    holds the destination for the instance while ``instance.host`` is still
    the source). A migration consumer's allocations lie only in the tree of
    the migration's source host (a same-host resize has source == dest),
    and only while its move is in flight: the server is in VERIFY_RESIZE,
    or the migration's status is not final (``FINAL_STATUSES``). A
    consumer that is neither a server nor a migration holds nothing (after
    a delete it is a leak). An evacuated server may also hold the source of
    its evacuation until the source's compute starts again and cleans up
    (status ``accepted``, ``pre-migrating`` or ``done``; see
    ``one_compute_node_per_consumer``). Written-down window (``claims``,
    from ``claim_windows``): a server whose chosen compute died before it
    took the build or unshelve (``inject: stop``) waits on no host, BUILD
    or unshelving, with the scheduler's claim in that host's tree, while
    that compute is down (``inject.ClaimWindow`` says why Nova leaves it
    so); only there, only in that state.

``one_compute_node_per_consumer(snap)``
    No consumer holds allocations against more than one compute node
    tree. Since Queens every move Nova makes with migration-based
    allocations (resize, cold migration, live migration) splits the
    double-up between two consumers: the migration holds the source, the
    instance the destination; a same-host resize puts both consumers on
    one node. Written-down exception: an evacuation still in flight (type
    ``evacuation``, status ``accepted``, ``pre-migrating`` or ``done``):
    Nova's evacuate does not use a migration consumer, so the scheduler
    doubles the instance's allocation onto the destination, and the source
    drops its part only when its compute starts again
    (``_destroy_evacuated_instances`` sets the migration ``completed``).

``tracker_agrees(snap, dedicated=None, windows=None, disk_exact=True)``
    Host by host, each resource tracker counts what Placement holds in its
    host's provider tree: ``vcpus_used - VCPU reserved`` is the VCPU plus
    PCPU usage, ``memory_mb_used - MEMORY_MB reserved`` the MEMORY_MB
    usage, ``local_gb_used - DISK_GB reserved`` the DISK_GB usage (at most
    that when ``disk_exact`` is false: Placement counts swap, the tracker
    does not), and the number of pinned CPUs the PCPU usage. Every pinned
    CPU belongs to its cell's ``pcpus`` and to the host's
    ``cpu_dedicated_set`` (``dedicated``: host -> set of CPU ids, for
    profiled hosts) and is pinned in one cell only. The snapshot keeps a
    cell's pinned CPUs as a set, so a CPU pinned twice shows as fewer
    pinned CPUs than PCPUs allocated.

    The tracker is reconciled only by ``update_available_resource``;
    between runs Nova updates it by claims, and two of Nova's own code
    paths leave it behind Placement until the host's next run. These are
    the tolerated windows, each a bound on how far the tracker may be off.
    The step kind that opens one declares it (``windows`` of its unit in
    ``harness.core.steps``: ``live_migrate``, ``delete``, ``evacuate``);
    ``tracker_windows`` adds them up, and the periodic on the host closes
    them (a step whose unit ``reconciles`` the host):

    - live migration to host D: only a NUMA live migration makes a claim
      on D (``_live_migration_claim``); the guest otherwise reaches D's
      tracker at D's next periodic (the source is reconciled:
      ``_post_live_migration`` runs ``update_available_resource``). D's
      tracker may count up to the guest's allocation on D less, pinned
      CPUs included (a NUMA guest is pinned on D by its claim; with the
      bound, either is accepted).
    - delete of a guest that was ever moved: the compute's delete path
      (``_complete_deletion`` -> ``ResourceTracker.update_usage``) only
      releases guests in ``tracked_instances``. A guest the tracker counts
      as a migration (it arrived by resize or migration since the host's
      last periodic; or a same-host resize was confirmed, which discards
      it from ``tracked_instances``; or it came back by revert after a
      periodic saw it leave) keeps counting, pinned CPUs included, until
      the host's next periodic. The host's tracker may count up to the
      guest's last allocation there more.

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
    migration leaves the source tracker below Placement, which still holds
    the migration's PCPUs there.

``periodics_idempotent(cloud, before, hosts)``
    Running the periodics on every host, in the order given, moves no
    allocation, no usage and no provider generation. A compute node whose
    provider Placement has not caught up with yet (a node removed, added
    or rebalanced since its host last ran the periodic: the step kind's
    ``pending``) is left out: creating, deleting or taking over its
    provider is that periodic's job. The periodics are
    ``update_available_resource`` only: of the compute manager's periodic
    tasks it is the one that can change Placement without time passing
    (``_remove_deleted_instances_allocations`` and the inventory it
    reports). ``_poll_unconfirmed_resizes``, ``_reclaim_queued_deletes``,
    ``_poll_shelved_instances`` and ``_cleanup_running_deleted_instances``
    touch allocations only once a configured time has passed;
    ``_run_pending_deletes`` and ``_cleanup_incomplete_migrations`` only
    delete instance files. The tracker's own view is not compared: putting
    it right is the periodic's job. The periodics run inside
    ``cloud.trial()``, which puts the cloud back afterwards: the next step
    sees the trackers as the step left them.

``nothing_leaks(snap, reconciled=None)``
    Once no server is left, no allocation, no consumer and no usage
    remains in Placement. A tracker is reconciled only by its periodic, so
    the trackers are checked in ``reconciled`` (a snapshot taken after
    ``update_available_resource`` ran on every host with no server left,
    e.g. by ``periodics_idempotent``) or for the hosts in
    ``reconciled_hosts``: they count nothing beyond the reserved amounts,
    pin no CPU and use no CPU, memory or page of any cell.

``within_capacity(snap)``
    No usage exceeds ``(total - reserved) * allocation_ratio``.

``devices_agree(snap, skip_hosts=())``
    The PCI devices of each host, as its PCI tracker saved them:

    - a device a guest holds (``claimed`` or ``allocated``) names it, one
      that is free names none, and no device is held by a guest that is
      gone;
    - a PF and one of its VFs are never both held (Nova makes the PF
      ``unavailable`` while a VF is used, and the VFs while the PF is):
      one function of a card, one guest; and both directions of that
      rule hold for a PF tracked with its VFs: while a VF is held its PF
      is ``unclaimable`` or ``unavailable``, while the PF is held so is
      each VF, and a PF none of whose VFs is held, or a VF whose PF is
      not held, is not left ``unclaimable`` or ``unavailable``;
    - with ``[pci] report_in_placement``, the usage of each PCI device
      provider (``<host>_<address>``) is the number of devices the
      tracker has held there (the device itself, or its PF's VFs);
    - a guest's devices on its host lie on one of its NUMA cells when its
      ``hw:pci_numa_affinity_policy`` is ``required`` or ``legacy`` (the
      devices here all report a NUMA node, so legacy is required);
      ``preferred`` allows any cell; ``socket`` is not checked (the
      snapshot does not hold which socket a cell is on). Checked when no
      operation of the guest is in flight (no task state).

    Hosts whose tracker lags Placement in a tolerated window (a stopped
    compute, a guest deleted or evacuated while its compute was down) are
    not checked against Placement until their periodic runs.

``Checker`` runs them all with the runner's check signature; see there.
"""

import time

from harness.core import names
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod
from harness.core import steps as steps_mod
from harness.core.steps import base as steps_base

INVARIANTS = ('usages_add_up', 'allocations_where_server_is',
              'one_compute_node_per_consumer', 'tracker_agrees',
              'periodics_idempotent', 'nothing_leaks', 'within_capacity',
              'devices_agree')

# Migration statuses after which a move holds nothing any more.
FINAL_STATUSES = snapshot_mod.FINAL_STATUSES
# An evacuation whose source has not cleaned up yet.
EVACUATING = frozenset(('accepted', 'pre-migrating', 'done'))
EVACUATION = 'evacuation'
# nova.objects.fields.PciDeviceStatus: what a held PF makes its VFs and a
# held VF its PF (unclaimable while claimed, unavailable once allocated).
BLOCKED_STATUSES = frozenset(('unclaimable', 'unavailable'))
HELD_STATUSES = snapshot_mod.HELD_STATUSES
RECONCILE = names.RECONCILE
# What tracker_agrees compares, per host, and Placement's classes behind
# each: the same keys the step kinds' windows bound.
TRACKER_KEYS = steps_base.TRACKER_KEYS
_KEY_RCS = steps_base.KEY_RCS


def _fmt(resources):
    return ' '.join('%s=%s' % (rc, resources[rc])
                    for rc in sorted(resources)) or 'nothing'


_root = snapshot_mod.root
_host_roots = snapshot_mod.host_roots
_held_in = snapshot_mod.held_in
_migrations_of = snapshot_mod.migrations_of


# -- 1 ------------------------------------------------------------------------

def usages_add_up(snap):
    problems = []
    for name in sorted(snap.providers):
        total = {}
        held = snap.allocations_against(name)
        for resources in held.values():
            for rc, amount in resources.items():
                total[rc] = total.get(rc, 0) + amount
        usages = snap.providers[name].usages
        for rc in sorted(set(total) | set(usages)):
            if total.get(rc, 0) != usages.get(rc, 0):
                parts = ', '.join(
                    '%s=%s' % (consumer, held[consumer][rc])
                    for consumer in sorted(held) if rc in held[consumer])
                problems.append(Problem(
                    'usages_add_up', 'provider %s, %s' % (name, rc),
                    expected=total.get(rc, 0), actual=usages.get(rc, 0),
                    text=(
                        'usages_add_up: provider %s, %s: Placement usage %s, '
                        'allocations add up to %s (%s)' % (
                            name, rc, usages.get(rc, 0), total.get(rc, 0),
                            parts or 'no consumer'))))
    return problems


# -- 2 ------------------------------------------------------------------------

def _in_flight(snap, migration):
    server = snap.servers.get(migration.server)
    return (migration.status not in FINAL_STATUSES
            or (server is not None and server.status == 'VERIFY_RESIZE'
                and _latest(snap, migration.server) is migration))


def _latest(snap, server):
    return snap.migrations.get(snapshot_mod.MIGRATION % server)


def allocations_where_server_is(snap, claims=None):
    """See the module docstring; ``claims`` from ``claim_windows``."""
    problems = []
    claims = claims or {}
    host_roots = _host_roots(snap)
    for consumer in sorted(snap.allocations):
        held = snap.allocations[consumer]
        migration = snap.migrations.get(consumer)
        server = snap.servers.get(consumer)
        if migration is not None:
            if not _in_flight(snap, migration):
                problems.append(Problem(
                    'allocations_where_server_is', consumer,
                    text=(
                        'allocations_where_server_is: consumer %s (status %s, '
                        'server %s) holds %s although no move of %s is in '
                        'flight' % (consumer, migration.status,
                                    _server_state(snap, migration.server),
                                    _fmt_held(held), migration.server))))
                continue
            allowed = {migration.source}
            what = 'its source %s' % migration.source
        elif server is not None:
            allowed = {server.host} if server.host else set()
            claim = claims.get(consumer)
            if claim is not None and claim.covers(server):
                # The scheduler's claim of a build or unshelve whose
                # compute died before taking it.
                allowed.add(claim.host)
            own = _own_node(snap, server, host_roots)
            moving = sorted(m.dest for m in _migrations_of(snap, consumer)
                            if m.status not in FINAL_STATUSES and m.dest)
            allowed.update(moving)
            # An evacuation holds the source until its compute starts again
            # (see one_compute_node_per_consumer).
            evacuated = sorted(m.source for m in _migrations_of(snap, consumer)
                               if m.type == EVACUATION
                               and m.status in EVACUATING and m.source)
            allowed.update(evacuated)
            what = 'its host %s%s%s%s' % (
                server.host, ' or the destination %s of its move in flight'
                % ', '.join(moving) if moving else '',
                ' or the source %s of its evacuation' % ', '.join(evacuated)
                if evacuated else '',
                ' or %s, whose compute died before taking it' % claim.host
                if claim is not None and claim.covers(server) else '')
        else:
            problems.append(Problem(
                'allocations_where_server_is', consumer,
                text=(
                    'allocations_where_server_is: consumer %s holds %s but is '
                    'no server or migration (a leak of a deleted server?)'
                    % (consumer, _fmt_held(held)))))
            continue
        roots = set()
        for host in allowed:
            if server is not None and host == server.host and own:
                # On a host with several nodes: the server's own node.
                roots |= own
                continue
            roots |= host_roots.get(host, {host})
        for provider in sorted(held):
            if _root(snap, provider) not in roots:
                problems.append(Problem(
                    'allocations_where_server_is', '%s on %s' % (
                        consumer, provider),
                    text=(
                        'allocations_where_server_is: consumer %s holds %s on '
                        '%s, which is not %s' % (
                            consumer, _fmt(held[provider]), provider, what))))
    return problems


def _own_node(snap, server, host_roots):
    """The root of the server's node, when its host has several nodes."""
    if (server.node and server.node in snap.providers
            and len(host_roots.get(server.host, ())) > 1):
        return {_root(snap, server.node)}
    return set()


def _server_state(snap, name):
    server = snap.servers.get(name)
    if server is None:
        return 'gone'
    return '%s on %s' % (server.status, server.host)


def _fmt_held(held):
    return '; '.join('%s on %s' % (_fmt(res), provider)
                     for provider, res in sorted(held.items()))


# -- 3 ------------------------------------------------------------------------

def one_compute_node_per_consumer(snap):
    problems = []
    nodes = set(snap.compute_nodes())
    for consumer in sorted(snap.allocations):
        held = snap.allocations[consumer]
        roots = sorted({_root(snap, provider) for provider in held}
                       & nodes)
        if len(roots) < 2:
            continue
        evacuation = _latest(snap, consumer)
        if (evacuation is not None and evacuation.type == EVACUATION
                and evacuation.status in EVACUATING
                and set(roots) <= {evacuation.source, evacuation.dest}):
            # Written down: an evacuation doubles the instance's allocation
            # until the source compute restarts and cleans up.
            continue
        problems.append(Problem(
            'one_compute_node_per_consumer', consumer,
            text=(
                'one_compute_node_per_consumer: consumer %s holds allocations '
                'against %d compute nodes: %s' % (
                    consumer, len(roots), '; '.join(
                        '%s: %s' % (root, _fmt(_held_in(snap, consumer,
                                                        {root})))
                        for root in roots)))))
    return problems


# -- 4 ------------------------------------------------------------------------

def _placement_view(snap, roots):
    """What Placement holds in the trees of ``roots``, in tracker terms."""
    usage = {}
    for name, rp in snap.providers.items():
        if rp.root in roots:
            for rc, amount in rp.usages.items():
                usage[rc] = usage.get(rc, 0) + amount
    return {'vcpus': usage.get('VCPU', 0) + usage.get('PCPU', 0),
            'memory_mb': usage.get('MEMORY_MB', 0),
            'local_gb': usage.get('DISK_GB', 0),
            'pinned': usage.get('PCPU', 0)}


def _reserved(snap, node, rc):
    rp = snap.providers.get(node)
    if rp is None:
        return 0
    return rp.inventories.get(rc, {}).get('reserved', 0)


def _tracker_view(snap, node):
    tracker = snap.trackers[node]
    return {'vcpus': tracker.vcpus_used - _reserved(snap, node, 'VCPU'),
            'memory_mb': (tracker.memory_mb_used
                          - _reserved(snap, node, 'MEMORY_MB')),
            'local_gb': (tracker.local_gb_used
                         - _reserved(snap, node, 'DISK_GB')),
            'pinned': len(tracker.pinned_cpus)}


def tracker_view(snap, node):
    """The guests a tracker counts, in ``TRACKER_KEYS`` (reserved off)."""
    return _tracker_view(snap, node)


def tracker_agrees(snap, dedicated=None, windows=None, disk_exact=True):
    """See the module docstring; ``windows`` from ``tracker_windows``."""
    problems = []
    windows = windows or {}
    dedicated = dedicated or {}
    for node in sorted(snap.trackers):
        tracker = snap.trackers[node]
        host = tracker.host
        if node not in snap.providers:
            continue
        roots = {_root(snap, node)}
        want = _placement_view(snap, roots)
        got = _tracker_view(snap, node)
        if not tracker.cells:
            # No NUMA topology: nothing can be pinned; PCPU is not counted
            # apart from VCPU.
            got['pinned'] = want['pinned']
        # A node of a host with several is named with its host.
        where = host if node == host else '%s node %s' % (host, node)
        window = windows.get(host, {})
        below = window.get('below', {})
        above = window.get('above', {})
        for key in TRACKER_KEYS:
            low = want[key] - below.get(key, 0)
            high = want[key] + above.get(key, 0)
            if key == 'local_gb' and not disk_exact:
                low = min(low, 0)
            if low <= got[key] <= high:
                continue
            tolerated = ''
            if low != high:
                tolerated = ' (tolerated %s..%s: %s)' % (
                    low, high, window.get('why', ''))
            problems.append(Problem(
                'tracker_agrees', 'host %s, %s' % (where, key),
                expected=want[key], actual=got[key],
                text=(
                    'tracker_agrees: host %s, %s: tracker counts %s, '
                    'Placement '
                    '%s%s (%s)' % (where, _KEY_NAMES[key], got[key], want[key],
                                   tolerated,
                                   _consumers_on(snap, roots, key)))))
        problems += _pinning_problems(snap, node, dedicated.get(host))
    return problems


_KEY_NAMES = {'vcpus': 'vcpus_used (VCPU+PCPU)',
              'memory_mb': 'memory_mb_used (MEMORY_MB)',
              'local_gb': 'local_gb_used (DISK_GB)',
              'pinned': 'pinned CPUs (PCPU)'}


def _consumers_on(snap, roots, key):
    parts = []
    for consumer in sorted(snap.allocations):
        held = _held_in(snap, consumer, roots)
        amount = sum(held.get(rc, 0) for rc in _KEY_RCS[key])
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
                        '%d '
                        'and %d' % (tracker.host, cpu, seen[cpu], cell.id))))
            seen[cpu] = cell.id
        outside = sorted(set(cell.pinned_cpus) - set(cell.pcpus))
        if outside:
            problems.append(Problem(
                'tracker_agrees', 'host %s cell %d' % (tracker.host, cell.id),
                text=(
                    'tracker_agrees: host %s cell %d: pinned CPUs %s are not '
                    'among the cell\'s dedicated CPUs %s' % (
                        tracker.host, cell.id, _cpus(outside),
                        _cpus(cell.pcpus)))))
        if dedicated is not None:
            outside = sorted(set(cell.pinned_cpus) - set(dedicated))
            if outside:
                problems.append(Problem(
                    'tracker_agrees', 'host %s cell %d' % (
                        tracker.host, cell.id),
                    text=(
                        'tracker_agrees: host %s cell %d: pinned CPUs %s lie '
                        'outside cpu_dedicated_set %s' % (
                            tracker.host, cell.id, _cpus(outside),
                            _cpus(dedicated) or 'unset'))))
    return problems


def _cpus(cpus):
    return '[%s]' % snapshot_mod.format_cpus(cpus)


def tracker_windows(windows, before, after, reconciled=(), down=(),
                    step=None):
    """The tolerated windows after a step; see the module docstring.

    :param windows: host -> {'below': {key: n}, 'above': {key: n}, 'why'}
        open before the step (not changed).
    :param before: the snapshot before the step; ``after`` after it.
    :param reconciled: hosts where ``update_available_resource`` ran after
        everything the step did (their windows close).
    :param down: hosts whose compute is stopped (a guest deleted there is
        deleted locally by the API; the record keeps counting it until the
        compute starts again and runs the periodic at startup).
    :param step: the step (``scenario.Step``): the windows are those its
        kind declares (``harness.core.steps``); with ``None``, those any
        kind would open between the two snapshots.
    :returns: the windows open after the step.
    """
    opened = {host: {'below': dict(w.get('below', {})),
                     'above': dict(w.get('above', {})),
                     'why': w.get('why', '')}
              for host, w in windows.items()}
    if step is not None:
        # The step's kind, and the requests sent in the middle of it
        # (``inject: do``, tied to it by the loader: ``Step.interjected``).
        units = _step_units(step)
    else:
        units = [(unit, None) for unit in steps_mod.registry().values()]
    for unit, args in units:
        for window in unit.windows(args, before, after, set(down)):
            if not isinstance(window, steps_base.Window):
                continue   # an allocation's window: claim_windows
            into = opened.setdefault(window.host, {'below': {}, 'above': {},
                                                   'why': ''})
            for key, amount in window.amounts().items():
                if amount:
                    into[window.side][key] = (into[window.side].get(key, 0)
                                              + amount)
            into['why'] = '; '.join(filter(None, (into['why'], window.why)))
    for host in reconciled:
        opened.pop(host, None)
    return {host: w for host, w in opened.items()
            if any(w['below'].values()) or any(w['above'].values())}


def _step_units(step):
    """The units whose windows a step opens: its kind and its requests."""
    return [(steps_mod.get(step.kind), step.args)] + [
        (steps_mod.get(sent.kind), sent.args)
        for sent in getattr(step, 'interjected', ())]


def claim_windows(claims, before, after, stopped, step):
    """The claim windows open after ``step`` (``allocations_where_server_is``).

    :param claims: server -> window open before the step (not changed).
    :param stopped: hosts whose compute is not running.
    :returns: server -> window: those the step's units open
        (``inject.ClaimWindow``) and those before it, each only while it
        holds (its host's compute down, the server still waiting on no
        host).
    """
    opened = dict(claims)
    for unit, args in _step_units(step):
        for window in unit.windows(args, before, after, set(stopped)):
            if hasattr(window, 'open_while'):
                opened[window.server] = window
    return {server: window for server, window in opened.items()
            if window.open_while(after, set(stopped))}


# -- 5 ------------------------------------------------------------------------

def periodic_changes(before, after, hosts=()):
    """Problems for what moved in Placement between two snapshots."""
    order = ' then '.join(hosts) or 'every host'
    problems = []
    for consumer in sorted(set(before.allocations) | set(after.allocations)):
        was = before.allocations_of(consumer)
        now = after.allocations_of(consumer)
        for provider in sorted(set(was) | set(now)):
            if was.get(provider, {}) != now.get(provider, {}):
                problems.append(Problem(
                    'periodics_idempotent', '%s on %s' % (consumer, provider),
                    text=(
                        'periodics_idempotent: %s on %s moved consumer %s on '
                        '%s: '
                        '%s -> %s' % (RECONCILE, order, consumer, provider,
                                      _fmt(was.get(provider, {})),
                                      _fmt(now.get(provider, {}))))))
    for name in sorted(set(before.providers) | set(after.providers)):
        old = before.providers.get(name)
        new = after.providers.get(name)
        if old is None or new is None:
            problems.append(Problem(
                'periodics_idempotent', 'provider %s' % name,
                text=(
                    'periodics_idempotent: %s on %s %s provider %s' % (
                        RECONCILE, order,
                        'created' if old is None else 'deleted', name))))
            continue
        for rc in sorted(set(old.usages) | set(new.usages)):
            if old.usages.get(rc, 0) != new.usages.get(rc, 0):
                problems.append(Problem(
                    'periodics_idempotent', 'provider %s, %s' % (name, rc),
                    text=(
                        'periodics_idempotent: %s on %s moved the usage of '
                        '%s, '
                        '%s: %s -> %s' % (RECONCILE, order, name, rc,
                                          old.usages.get(rc, 0),
                                          new.usages.get(rc, 0)))))
        if old.generation != new.generation:
            problems.append(Problem(
                'periodics_idempotent', 'provider %s generation' % name,
                text=(
                    'periodics_idempotent: %s on %s moved the generation of '
                    'provider %s: %s -> %s' % (RECONCILE, order, name,
                                               old.generation,
                                               new.generation))))
    return problems


def about_providers(problem, names):
    """Whether a ``periodic_changes`` problem is about one of ``names``."""
    subject = problem.subject
    if subject.startswith('provider '):
        name = subject[len('provider '):].split(',')[0].split(' ')[0]
    else:
        name = subject.rsplit(' on ', 1)[-1]
    return name in names


def periodics_idempotent(cloud, before, hosts):
    """Run the periodic on ``hosts`` in order, on a copy; (problems, after).

    The periodic runs inside ``cloud.trial()``: the cloud is checkpointed
    (databases, clock, trackers, report clients' caches, hypervisors,
    race points) and put back afterwards, so the check changes nothing the
    next step sees: a tracker left stale by a step stays stale, as it
    would in a deployment, for the next step to trip over. Injections
    waiting for a later step neither fire nor record meanwhile.
    """
    with cloud.trial():
        for host in hosts:
            cloud.run_periodic(RECONCILE, host)
        after = cloud.snapshot()
    return periodic_changes(before, after, hosts), after


# -- 6 ------------------------------------------------------------------------

def nothing_leaks(snap, reconciled=None, reconciled_hosts=(),
                  running=None):
    """See the module docstring.

    :param reconciled: a snapshot taken after the periodic ran on every
        running host with no server left (their trackers are checked).
    :param reconciled_hosts: hosts whose trackers in ``snap`` itself are
        reconciled (their periodic ran with no server left).
    :param running: hosts whose compute runs; a stopped compute's record
        stays as it last saved it, so it is not checked (``None``: all).
    """
    if snap.servers:
        return []
    problems = []
    for consumer in sorted(snap.allocations):
        problems.append(Problem(
            'nothing_leaks', consumer,
            text=(
                'nothing_leaks: no server is left, but consumer %s holds %s'
                % (consumer, _fmt_held(snap.allocations[consumer])))))
    for name in sorted(snap.providers):
        usages = snap.providers[name].usages
        if usages:
            problems.append(Problem(
                'nothing_leaks', 'provider %s' % name,
                text=(
                    'nothing_leaks: no server is left, but provider %s has '
                    'usage %s' % (name, _fmt(usages)))))
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


def _tracker_leaks(snap, node):
    problems = []
    tracker = snap.trackers[node]
    counted = _tracker_view(snap, node)
    for key in ('vcpus', 'memory_mb', 'local_gb'):
        if counted[key]:
            problems.append(Problem(
                'nothing_leaks', 'host %s, %s' % (tracker.host, key),
                text=(
                    'nothing_leaks: no server is left, but after %s the '
                    'tracker of %s counts %s %s beyond the reserved amount'
                    % (RECONCILE, tracker.host, counted[key],
                       _KEY_NAMES[key]))))
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
                    'cpu_usage '
                    '%s, memory_usage %s, pages used %s' % (
                        RECONCILE, tracker.host, cell.id,
                        _cpus(cell.pinned_cpus), cell.cpu_usage,
                        cell.memory_usage, used_pages or 'none'))))
    return problems


# -- 7 ------------------------------------------------------------------------

def within_capacity(snap):
    problems = []
    for name in sorted(snap.providers):
        rp = snap.providers[name]
        for rc, used in sorted(rp.usages.items()):
            inventory = rp.inventories.get(rc)
            if inventory is None:
                problems.append(Problem(
                    'within_capacity', 'provider %s, %s' % (name, rc),
                    text=(
                        'within_capacity: provider %s uses %s %s but has no '
                        'inventory of it' % (name, used, rc))))
                continue
            capacity = ((inventory['total'] - inventory.get('reserved', 0))
                        * inventory.get('allocation_ratio', 1.0))
            if used > capacity:
                problems.append(Problem(
                    'within_capacity', 'provider %s, %s' % (name, rc),
                    expected=_number(capacity), actual=used,
                    text=(
                        'within_capacity: provider %s, %s: usage %s exceeds '
                        'capacity %s = (total %s - reserved %s) x '
                        'allocation_ratio %s (consumers: %s)' % (
                            name, rc, used, _number(capacity),
                            inventory['total'], inventory.get('reserved', 0),
                            inventory.get('allocation_ratio', 1.0), ', '.join(
                                '%s=%s' % (c, res[rc]) for c, res in sorted(
                                    snap.allocations_against(name).items())
                                if rc in res)))))
    return problems


def _number(value):
    return int(value) if float(value).is_integer() else value


# -- 8 ------------------------------------------------------------------------

def devices_agree(snap, skip_hosts=()):
    """See the module docstring."""
    problems = []

    def problem(subject, text):
        problems.append(Problem('devices_agree', subject,
                                text='devices_agree: %s' % text))

    for host in sorted(snap.devices):
        devices = snap.devices[host]
        for address, dev in sorted(devices.items()):
            if dev.held and dev.server is None:
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'but names no guest' % (address, host, dev.status))
            elif not dev.held and dev.server is not None:
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'but still names guest %s' % (
                            address, host, dev.status, dev.server))
            elif dev.held and dev.server not in snap.servers and (
                    host not in skip_hosts):
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'for %s, which is gone' % (address, host, dev.status,
                                                   dev.server))
            if dev.held and dev.parent in devices and \
                    devices[dev.parent].held:
                pf = devices[dev.parent]
                problem('%s %s' % (host, address), 'VF %s on %s is %s for '
                        '%s while its PF %s is %s for %s' % (
                            address, host, dev.status, dev.server,
                            pf.address, pf.status, pf.server))
        _functions_block_each_other(host, devices, problem)
        if host not in skip_hosts:
            problems += _device_providers_agree(snap, host, problem)
    problems += _devices_on_allowed_cells(snap, problem)
    return problems


def _functions_block_each_other(host, devices, problem):
    """A card's PF and VFs as ``nova.objects.pci_device`` keeps them.

    Both directions, for a PF tracked with its VFs: a held VF leaves its
    PF unclaimable or unavailable (``claim``, ``allocate``), a held PF
    each of its VFs; a PF none of whose VFs is held, and a VF whose PF is
    not held, are available again (``free``).
    """
    children = {}
    for dev in devices.values():
        if dev.parent in devices:
            children.setdefault(dev.parent, []).append(dev)
    for address, vfs in sorted(children.items()):
        pf = devices[address]
        held = [vf for vf in vfs if vf.held]
        if held and pf.status not in BLOCKED_STATUSES | HELD_STATUSES:
            problem('%s %s' % (host, address), 'PF %s on %s is %s while '
                    'its VF(s) %s are held' % (
                        address, host, pf.status,
                        ', '.join(vf.address for vf in held)))
        elif not held and not pf.held and pf.status in BLOCKED_STATUSES:
            problem('%s %s' % (host, address), 'PF %s on %s is %s although '
                    'none of its VFs is held' % (address, host, pf.status))
        for vf in sorted(vfs, key=lambda vf: vf.address):
            if pf.held and vf.status not in BLOCKED_STATUSES | HELD_STATUSES:
                problem('%s %s' % (host, vf.address), 'VF %s on %s is %s '
                        'while its PF %s is %s for %s' % (
                            vf.address, host, vf.status, address,
                            pf.status, pf.server))
            elif not pf.held and vf.status in BLOCKED_STATUSES:
                problem('%s %s' % (host, vf.address), 'VF %s on %s is %s '
                        'although its PF %s is not held (%s)' % (
                            vf.address, host, vf.status, address,
                            pf.status))


def _device_providers_agree(snap, host, problem):
    providers = snapshot_mod.device_providers(snap, host)
    if not providers:
        return []
    held = {}
    for dev in snap.devices.get(host, {}).values():
        if dev.held:
            # A VF counts in its PF's provider.
            where = dev.parent if dev.type == 'type-VF' else dev.address
            held[where.upper()] = held.get(where.upper(), 0) + 1
    for name in providers:
        address = name[len(host) + 1:]
        used = sum(snap.providers[name].usages.values())
        if used != held.get(address, 0):
            problem('provider %s' % name, 'provider %s has usage %s in '
                    'Placement, but the PCI tracker of %s holds %d device(s)'
                    ' there (consumers: %s)' % (
                        name, used, host, held.get(address, 0), ', '.join(
                            '%s=%s' % (c, _fmt(r)) for c, r in sorted(
                                snap.allocations_against(name).items()))
                        or 'none'))
    return []


def _devices_on_allowed_cells(snap, problem):
    for name in sorted(snap.guests):
        guest = snap.guests[name]
        server = snap.servers.get(name)
        if (server is None or server.task_state or not guest.cells
                or not guest.policies
                or set(guest.policies) - {'required', 'legacy'}):
            continue
        for dev in snapshot_mod.devices_of(snap, name):
            if dev.host == server.host and dev.cell not in guest.cells:
                problem('%s %s' % (name, dev.address), 'guest %s (policy '
                        '%s) runs on cell(s) %s of %s but holds device %s '
                        'on cell %s' % (
                            name, '/'.join(guest.policies),
                            ','.join(map(str, guest.cells)), dev.host,
                            dev.address, dev.cell))
    return []


# -- the checker ---------------------------------------------------------

class Checker(object):
    """All invariants, as a check for ``runner.run(checks=[...])``.

    Called after every step (but one that only arms: ``StepKind.arms``)
    as ``checker(cloud, step, snapshot, timeline, scenario)``; returns
    the problems (``Problem`` records, ``check`` the invariant's name).
    Invariants 1-4, 6 and 7 read the step's snapshot; then, with
    ``periodic_idempotence``, ``update_available_resource``
    runs on every running compute, in name order after odd checked
    steps and reversed after even ones, on a copy of the cloud that is put back
    afterwards (``periodics_idempotent``), and nothing in Placement may
    move. The checks only read: the next step sees exactly what this one
    left, stale trackers and open windows included. The copy's snapshot
    lets ``nothing_leaks`` check reconciled trackers as soon as no server
    is left.

    Tracker windows come from the step kinds (``harness.core.steps``):
    what a step's kind opens stays open until the host's periodic runs
    (a ``run_periodic`` step, or a compute's start-up).

    Expected breaks: an invariant in ``scenario.expected_breaks`` is not
    reported; its problems are recorded in ``broken`` (invariant -> list
    of ``(step index, problem)``), so a test asserts the bug still shows
    with ``missing_breaks(scenario)`` (the expected invariants that never
    broke) being empty.

    ``timings`` holds the seconds spent per invariant (``periodics_idempotent``
    includes the copy, the periodics, the snapshot after and putting the
    cloud back).
    """

    def __init__(self, periodic_idempotence=True, enabled=None):
        unknown = set(enabled or ()) - set(INVARIANTS)
        if unknown:
            raise ValueError('unknown invariants %s; known: %s' % (
                ', '.join(sorted(unknown)), ', '.join(INVARIANTS)))
        self.enabled = set(enabled) if enabled is not None else \
            set(INVARIANTS)
        if not periodic_idempotence:
            self.enabled.discard('periodics_idempotent')
        self.timings = {name: 0.0 for name in INVARIANTS}
        self.calls = 0
        self._timeline = None
        self._reset()

    def _reset(self):
        self.broken = {}
        self.windows = {}
        self.claims = {}
        # Compute nodes Placement has not caught up with: node -> the host
        # whose periodic does it (see periodics_idempotent).
        self.pending = {}
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
        before = entries[-2].snapshot if len(entries) > 1 else snap
        found = {}
        reconciled = self._hosts_reconciled_by(step, cloud)
        self.pending = {node: host for node, host in self.pending.items()
                        if host not in reconciled}
        if step.error is None:
            self.pending.update(steps_mod.get(step.kind).pending(step.args))

        stopped = set(scenario.hosts) - set(cloud.computes)
        self.claims = claim_windows(self.claims, before, snap, stopped, step)
        if 'tracker_agrees' in self.enabled:
            start = time.perf_counter()
            self.windows = tracker_windows(
                self.windows, before, snap, reconciled,
                down=stopped | cloud.services.forced_down_hosts(),
                step=step)
            found['tracker_agrees'] = tracker_agrees(
                snap, self._dedicated(cloud, scenario), self.windows,
                disk_exact=not any(f.swap for f in
                                   scenario.flavors.values()))
            self.timings['tracker_agrees'] += time.perf_counter() - start
        for name, func in (('usages_add_up', usages_add_up),
                           ('allocations_where_server_is',
                            lambda snap: allocations_where_server_is(
                                snap, self.claims)),
                           ('one_compute_node_per_consumer',
                            one_compute_node_per_consumer),
                           ('within_capacity', within_capacity)):
            if name in self.enabled:
                start = time.perf_counter()
                found[name] = func(snap)
                self.timings[name] += time.perf_counter() - start

        if 'devices_agree' in self.enabled:
            start = time.perf_counter()
            found['devices_agree'] = devices_agree(
                snap, skip_hosts=(set(self.windows)
                                  | (set(scenario.hosts)
                                     - set(cloud.computes))))
            self.timings['devices_agree'] += time.perf_counter() - start

        if snap.servers:
            self.reconciled_hosts = set()
        else:
            self.reconciled_hosts |= set(reconciled)
        after = None
        if 'periodics_idempotent' in self.enabled:
            start = time.perf_counter()
            hosts = sorted(cloud.computes)
            if self.steps % 2 == 0:
                hosts.reverse()
            found['periodics_idempotent'], after = periodics_idempotent(
                cloud, snap, hosts)
            found['periodics_idempotent'] = [
                p for p in found['periodics_idempotent']
                if not about_providers(p, self.pending)]
            self.timings['periodics_idempotent'] += (
                time.perf_counter() - start)
        if 'nothing_leaks' in self.enabled:
            start = time.perf_counter()
            found['nothing_leaks'] = nothing_leaks(
                snap, reconciled=after,
                reconciled_hosts=self.reconciled_hosts,
                running=set(cloud.computes))
            self.timings['nothing_leaks'] += time.perf_counter() - start

        problems = []
        expected = getattr(scenario, 'expected_breaks', {}) or {}
        for name in INVARIANTS:
            for problem in found.get(name, ()):
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

    @staticmethod
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
