"""``revert: server``: revert a resize or migration, wait for ACTIVE on
the source."""

from harness.core.steps import base


class Revert(base.ServerOperation):
    name = 'revert'
    summary = ('Revert a resize or cold migration; wait until the server '
               'is back on its source.')
    fields = base.server_field('a server in VERIFY_RESIZE')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- resize: {server: vm1, flavor: pin4}
- revert: vm1
  expect: {allocations: {vm1: {src: pin2}}, pinned_cpus: {src: 2, dst: 0}}
'''
    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'ACTIVE', 'migration': 'reverted'}
    points = frozenset((
        'revert_resize', 'finish_revert_resize', 'instance.host',
        'migration.status=reverting', 'migration.status=reverted',
        'migration.status=error', 'scheduler.update_instance_info',
        # The destination drops its claim (and marks the migration
        # reverted) under the tracker's lock, before it casts
        # finish_revert_resize to the source.
        'tracker.drop_move_claim_at_dest'))

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
