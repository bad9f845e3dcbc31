"""``allocations_where_server_is``: a consumer holds only where it is."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

# Migration statuses after which a move holds nothing any more.
FINAL_STATUSES = snapshot_mod.FINAL_STATUSES


class AllocationsWhereServerIs(base.Invariant):
    """A consumer holds only where its server is, or its move.

    A server's allocations lie only in the provider tree of its host
    (of its compute node, ``instance.node``, on a host with several), or
    of the destination of a move of it still in flight (a live migration
    holds the destination for the instance while ``instance.host`` is
    still the source). A migration consumer's allocations lie only in the
    tree of the migration's source host (a same-host resize has source ==
    dest), and only while its move is in flight: the server is in
    VERIFY_RESIZE, or the migration's status is not final
    (``FINAL_STATUSES``). A consumer that is neither a server nor a
    migration holds nothing (after a delete it is a leak). An evacuated
    server may also hold the source of its evacuation until the source's
    compute starts again and cleans up (status ``accepted``,
    ``pre-migrating`` or ``done``; see ``one_compute_node_per_consumer``).

    Its windows (``claim_windows``): a server deleted locally while the
    API could not reach Placement keeps its allocations in its host's
    tree while that compute is down (``delete.KeptAllocationsWindow``);
    a server whose chosen compute died
    before it took the build or unshelve (``inject: stop``) waits on no
    host, BUILD or unshelving, with the scheduler's claim in that host's
    tree, while that compute is down (``inject.ClaimWindow`` says why
    Nova leaves it so); only there, only in that state.
    """

    name = 'allocations_where_server_is'
    order = 20
    summary = ("A consumer's allocations lie only where its server or its "
               "move is.")
    honours = ('allocations_where_server_is',)

    def windows(self, opened, context):
        def refused(request):
            # Asked only of a window that needs a refused request.
            return context.cloud.faults.placement_refused(request)
        return claim_windows(opened or {}, context.before, context.snapshot,
                             context.stopped, context.step, refused)

    def check(self, context):
        return allocations_where_server_is(context.snapshot,
                                           context.windows.get(self.name))


def claim_windows(claims, before, after, stopped, step, refused=None):
    """The claim windows open after ``step``.

    :param claims: server -> window open before the step (not changed).
    :param stopped: hosts whose compute is not running.
    :param refused: ``request -> bool``: whether a Placement fault
        refused that request (``METHOD /path``); a window with a
        ``request`` opens only then (none without ``refused``).
    :returns: server -> window: those the step's units open
        (``inject.ClaimWindow``) and those before it, each only while it
        holds (its host's compute down, the server still waiting on no
        host).
    """
    opened = dict(claims)
    for unit, args in views.step_units(step):
        for window in unit.windows(args, before, after, set(stopped)):
            if not hasattr(window, 'open_while'):
                continue
            if hasattr(window, 'request') and not (
                    refused and refused(window.request)):
                continue
            opened[window.server] = window
    return {server: window for server, window in opened.items()
            if window.open_while(after, set(stopped))}


def _in_flight(snap, migration):
    server = snap.servers.get(migration.server)
    return (migration.status not in FINAL_STATUSES
            or (server is not None and server.status == 'VERIFY_RESIZE'
                and views.latest(snap, migration.server) is migration))


def allocations_where_server_is(snap, claims=None):
    """See the unit's docstring; ``claims`` from ``claim_windows``."""
    problems = []
    claims = claims or {}
    host_roots = snapshot_mod.host_roots(snap)
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
                                    views.fmt_held(held), migration.server))))
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
            moves = snapshot_mod.migrations_of(snap, consumer)
            moving = sorted(m.dest for m in moves
                            if m.status not in FINAL_STATUSES and m.dest)
            allowed.update(moving)
            # An evacuation holds the source until its compute starts again
            # (see one_compute_node_per_consumer).
            evacuated = sorted(m.source for m in moves
                               if m.type == views.EVACUATION
                               and m.status in views.EVACUATING and m.source)
            allowed.update(evacuated)
            what = 'its host %s%s%s%s' % (
                server.host, ' or the destination %s of its move in flight'
                % ', '.join(moving) if moving else '',
                ' or the source %s of its evacuation' % ', '.join(evacuated)
                if evacuated else '',
                ' or %s, whose compute died before taking it' % claim.host
                if claim is not None and claim.covers(server) else '')
        else:
            kept = claims.get(consumer)
            if kept is not None and hasattr(kept, 'excuses') and (
                    kept.excuses(snap)):
                # Deleted locally, Placement out of reach: until its
                # compute starts again.
                continue
            problems.append(Problem(
                'allocations_where_server_is', consumer,
                text=(
                    'allocations_where_server_is: consumer %s holds %s but is '
                    'no server or migration (a leak of a deleted server?)'
                    % (consumer, views.fmt_held(held)))))
            continue
        roots = set()
        for host in allowed:
            if server is not None and host == server.host and own:
                # On a host with several nodes: the server's own node.
                roots |= own
                continue
            roots |= host_roots.get(host, {host})
        for provider in sorted(held):
            if snapshot_mod.root(snap, provider) not in roots:
                problems.append(Problem(
                    'allocations_where_server_is', '%s on %s' % (
                        consumer, provider),
                    text=(
                        'allocations_where_server_is: consumer %s holds %s on '
                        '%s, which is not %s' % (
                            consumer, views.fmt(held[provider]), provider,
                            what))))
    return problems


def _own_node(snap, server, host_roots):
    """The root of the server's node, when its host has several nodes."""
    if (server.node and server.node in snap.providers
            and len(host_roots.get(server.host, ())) > 1):
        return {snapshot_mod.root(snap, server.node)}
    return set()


def _server_state(snap, name):
    server = snap.servers.get(name)
    if server is None:
        return 'gone'
    return '%s on %s' % (server.status, server.host)


CHECK = AllocationsWhereServerIs()
