"""``delete: server``: delete a server and wait until Nova is done.

Its invariant windows (how far a tracker may count more than Placement
until the host's next periodic):

- a guest that was ever moved: the compute's delete path
  (``_complete_deletion`` -> ``ResourceTracker.update_usage``) releases
  only guests in ``tracked_instances``. A guest the tracker counts as a
  migration (it arrived by resize or migration since the host's last
  periodic; or a same-host resize was confirmed, which discards it from
  ``tracked_instances``; or it came back by revert after a periodic saw it
  leave) keeps counting, pinned CPUs included;
- a guest deleted while its compute is down: the API deletes it locally
  and drops its allocations; the compute's record counts it until the
  compute starts again (start-up runs the periodic).

And one on the allocations (``KeptAllocationsWindow``): a guest deleted
locally while a Placement fault refuses the API's connection
(``fault: {placement: 'DELETE /allocations/*', status: unreachable}``
armed before the delete, and refusing that server's DELETE: a local
delete that never sent it, LP#1679750's, opens none) keeps its
allocations in its host's tree until that compute starts again; only
then, only there.

And a delete sent in the middle of a move (``inject: do: {delete}``,
``interjected_windows``): the delete frees every allocation, but the
trackers the move touched keep counting the guest until their next
periodic: the source its outbound migration (``terminate_instance`` is
not serialized with a resize, which takes no instance lock; the delete
path releases only ``tracked_instances``), the destination the claim the
move made there. Opened by the step that ran when the delete landed, and
only on the hosts the server was on or moving between: its host, the
source and destination of its move in flight (a live migration's
destination included), as the snapshot before the step and the point
where the delete landed name them; by at most what it held on its host
and, elsewhere, its flavors (the old and, in a resize, the new one).
"""

from harness.core import snapshot as snapshot_mod
from harness.core.steps import base


class Delete(base.ServerOperation):
    name = 'delete'
    summary = 'Delete a server (in any state); wait until Nova is done.'
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- delete: vm1
  expect: {allocations: {}, usages: {}}
'''
    # Deleting a server in VERIFY_RESIZE confirms its move first.
    points = frozenset((
        'terminate_instance', 'scheduler.delete_instance_info',
        'confirm_resize', 'migration.status=confirming',
        'migration.status=confirmed'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        # Nova deletes a server in any state.
        base.needs(check, state, args['server'], tuple(base.SERVER_STATES),
                   'delete')
        if not error:
            del state.servers[args['server']]
            state.deleted.add(args['server'])
        # The API's DELETE of the server's allocations (its consumer's
        # name is no path Placement has, but any ``*`` pattern takes it).
        if state.take_cut_off('DELETE', '/allocations/%s' % args['server']):
            args['placement_cut_off'] = True
        return args

    def run(self, cloud, args):
        cloud.servers.delete(args['server'])

    lags = (base.DELETED_WHILE_DOWN, base.DELETED_AFTER_MOVE,
            base.LOCAL_DELETE_CUT_OFF)

    def windows(self, args, before, after, down):
        opened = deletion_windows(before, after, down)
        if (args or {}).get('placement_cut_off'):
            opened += kept_allocations_windows(before, after, down)
        return opened


def deletion_windows(before, after, down):
    """An ``above`` window on the host of each guest deleted in between.

    Only for a guest deleted while its compute was down, or after a move
    (see the module docstring).
    """
    opened = []
    before_roots = snapshot_mod.host_roots(before)
    for name, server in sorted(before.servers.items()):
        if name in after.servers or not server.host:
            continue
        if server.host in down:
            why = '%s deleted while its compute was down' % name
            lag = base.DELETED_WHILE_DOWN
        elif snapshot_mod.migrations_of(before, name):
            why = ('%s (moved before) deleted, counted until the next '
                   'periodic' % name)
            lag = base.DELETED_AFTER_MOVE
        else:
            continue
        roots = before_roots.get(server.host, {server.host})
        opened.append(base.Window(
            server.host, 'above',
            snapshot_mod.held_in(before, name, roots), why, lag))
    return opened


class KeptAllocationsWindow(object):
    """A guest deleted locally keeps its allocations on ``host``.

    Opened by a delete whose API could not reach Placement (the lag
    ``LOCAL_DELETE_CUT_OFF`` says why Nova leaves them): the deleted
    ``server``'s allocations may stay in ``host``'s tree, and nowhere
    else, while that compute is down (``open_while``); its start-up pass
    removes them. Honoured by ``allocations_where_server_is`` and
    ``nothing_leaks`` (``excuses``).
    """

    lag = base.LOCAL_DELETE_CUT_OFF

    def __init__(self, server, uuid, host, roots, why):
        self.server = server
        self.host = host
        self.roots = frozenset(roots)
        self.why = why
        #: The API's request a Placement fault must have refused for the
        #: window to open (``allocations_where_server_is.claim_windows``).
        self.request = 'DELETE /allocations/%s' % uuid

    def excuses(self, snap):
        """Whether ``snap``'s allocations of the server are all kept here."""
        held = snap.allocations_of(self.server)
        return self.server not in snap.servers and bool(held) and all(
            snapshot_mod.root(snap, provider) in self.roots
            for provider in held)

    def open_while(self, snap, down):
        """Whether the window stays open at ``snap``, ``down`` stopped."""
        return self.host in down and self.excuses(snap)


def kept_allocations_windows(before, after, down):
    """A ``KeptAllocationsWindow`` per guest deleted on a down compute.

    Only for a guest whose allocations after the step lie all in its
    host's tree.
    """
    opened = []
    before_roots = snapshot_mod.host_roots(before)
    for name, server in sorted(before.servers.items()):
        if name in after.servers or server.host not in down:
            continue
        window = KeptAllocationsWindow(
            name, server.uuid, server.host,
            before_roots.get(server.host, {server.host}),
            '%s deleted while its compute was down and Placement '
            'unreachable: its allocations stay until the compute starts'
            % name)
        if window.excuses(after):
            opened.append(window)
    return opened


def interjected_windows(server, move_flavor, before, after, moving=()):
    """``above`` windows for ``server`` deleted during this step's move.

    None unless ``server`` was there before the step and is gone after.
    None either unless the server was moving (``moving_hosts``): a
    server on its host, in no move, is a tracked instance that Nova's
    delete path releases. The source (its host before the step) may count
    up to what it held there; each host of its move (the destination, or
    the source of a same-host resize, whose claim the move made) whose
    tracker grew during the step up to the move's flavor too:
    ``move_flavor`` (Placement classes, a resize's new flavor) or the
    largest the server or its migration held on any host before. A
    tracker that grew elsewhere is no part of this delete.

    :param moving: hosts the point where the delete landed named for the
        server's move (``inject`` notes them): the migration record goes
        with the deleted server, so no snapshot after names its
        destination.
    """
    if server not in before.servers or server in after.servers:
        return []
    hosts = moving_hosts(server, before, moving)
    if not hosts:
        return []
    roots = snapshot_mod.host_roots(before)
    consumers = [server] + [consumer for consumer, migration in
                            before.migrations.items()
                            if migration.server == server]
    flavor = dict(move_flavor or {})
    for consumer in consumers:
        for host_roots in roots.values():
            for rc, amount in snapshot_mod.held_in(
                    before, consumer, host_roots).items():
                flavor[rc] = max(flavor.get(rc, 0), amount)
    why = ('%s deleted in the middle of its move, counted until the next '
           'periodic' % server)
    opened = []
    source = before.servers[server].host
    if source:
        held = {}
        for consumer in consumers:
            for rc, amount in snapshot_mod.held_in(
                    before, consumer,
                    roots.get(source, {source})).items():
                held[rc] = held.get(rc, 0) + amount
        if held:
            opened.append(base.Window(source, 'above', held, why,
                                      base.DELETED_MID_MOVE))
    for host in sorted(_grown(before, after) & hosts):
        opened.append(base.Window(host, 'above', flavor, why,
                                  base.DELETED_MID_MOVE))
    return opened


def moving_hosts(server, before, moving=()):
    """The hosts ``server`` was moving between when deleted, if moving.

    ``moving`` (named at the point: the compute that passed it for the
    server, its migration's source and destination) and the source and
    destination of each move of it in flight before the step (a live
    migration's destination, a resize waiting for its confirm).
    """
    hosts = set(moving)
    for migration in snapshot_mod.migrations_of(before, server):
        if migration.status not in snapshot_mod.FINAL_STATUSES or (
                before.servers[server].status == 'VERIFY_RESIZE'):
            hosts.update(h for h in (migration.source, migration.dest) if h)
    return hosts


def _grown(before, after):
    """Hosts whose tracker counts more after than before."""
    grown = set()
    for node, tracker in after.trackers.items():
        earlier = before.trackers.get(node)
        if earlier is None:
            continue
        if any(getattr(tracker, key) > getattr(earlier, key) for key in
               ('vcpus_used', 'memory_mb_used', 'local_gb_used')):
            grown.add(tracker.host)
    return grown


KIND = Delete()
