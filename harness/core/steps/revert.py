"""``revert: server``: revert a resize or migration, wait for ACTIVE on
the source."""

from harness.core.steps import base


class Revert(base.ServerOperation):
    name = 'revert'
    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'ACTIVE', 'migration': 'reverted'}
    points = frozenset((
        'revert_resize', 'finish_revert_resize', 'instance.host',
        'migration.status=reverting', 'migration.status=reverted',
        'migration.status=error', 'scheduler.update_instance_info'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], ('verify',), 'revert')
        if not error:
            # A stopped server stays stopped (compute/manager.py
            # confirm_resize: power_state SHUTDOWN; finish_revert_resize:
            # old_vm_state STOPPED).
            state.servers[args['server']] = state.before_move.pop(
                args['server'], 'active')
        return args

    def run(self, cloud, args):
        cloud.servers.revert(args['server'])


KIND = Revert()
