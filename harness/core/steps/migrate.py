"""``migrate: {server, host?}``: cold-migrate, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Migrate(base.ColdMove):
    name = 'migrate'
    fields = ('server', 'host')

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        # Nova moves ACTIVE and STOPPED servers (compute/api.py resize).
        base.needs(check, state, args['server'], ('active', 'shutoff'),
                   'migrate')
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
        if not error:
            state.before_move[args['server']] = state.servers[args['server']]
            state.servers[args['server']] = 'verify'
        state.moved.add(args['server'])
        return args

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        return 'migrate %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.migrate(args['server'], host=args.get('host'))


KIND = Migrate()
