"""``confirm: server``: confirm a resize or migration, wait for ACTIVE."""

from harness.core.steps import base


class Confirm(base.ServerOperation):
    name = 'confirm'
    summary = ('Confirm a resize or cold migration; wait until the server '
               'is back in the state it had before the move.')
    fields = base.server_field('a server in VERIFY_RESIZE')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- resize: {server: vm1, flavor: pin4}
- confirm: vm1
  expect: {allocations: {vm1: {dst: pin4}}, pinned_cpus: {src: 0, dst: 4}}
'''
    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'ACTIVE', 'migration': 'confirmed'}
    points = frozenset((
        'confirm_resize', 'migration.status=confirming',
        'migration.status=confirmed', 'migration.status=error',
        'scheduler.delete_instance_info'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], ('verify',), 'confirm')
        if not error:
            # A stopped server stays stopped (compute/manager.py
            # confirm_resize: power_state SHUTDOWN; finish_revert_resize:
            # old_vm_state STOPPED).
            state.servers[args['server']] = state.before_move.pop(
                args['server'], 'active')
        return args

    def run(self, cloud, args):
        cloud.servers.confirm(args['server'])


KIND = Confirm()
