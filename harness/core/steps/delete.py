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
"""

from harness.core import snapshot as snapshot_mod
from harness.core.steps import base


class Delete(base.ServerOperation):
    name = 'delete'
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
        return args

    def run(self, cloud, args):
        cloud.servers.delete(args['server'])

    def windows(self, args, before, after, down):
        return deletion_windows(before, after, down)


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
        elif snapshot_mod.migrations_of(before, name):
            why = ('%s (moved before) deleted, counted until the next '
                   'periodic' % name)
        else:
            continue
        roots = before_roots.get(server.host, {server.host})
        opened.append(base.Window(
            server.host, 'above',
            snapshot_mod.held_in(before, name, roots), why))
    return opened


KIND = Delete()
