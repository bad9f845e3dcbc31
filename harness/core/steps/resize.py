"""``resize: {server, flavor}``: resize, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Resize(base.ColdMove):
    name = 'resize'
    fields = ('server', 'flavor')
    required = ('server', 'flavor')

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        # Nova moves ACTIVE and STOPPED servers (compute/api.py resize).
        base.needs(check, state, args['server'], ('active', 'shutoff'),
                   'resize')
        check.known(args['flavor'], scenario.flavors, 'flavor')
        if not error:
            state.before_move[args['server']] = state.servers[args['server']]
            state.servers[args['server']] = 'verify'
        # A resize that fails on a compute has a migration (in error) too.
        state.moved.add(args['server'])
        return args

    def label(self, args):
        return 'resize %s to %s' % (args['server'], args['flavor'])

    def run(self, cloud, args):
        cloud.servers.resize(args['server'], args['flavor'])


KIND = Resize()
