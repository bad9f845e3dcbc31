"""``migrate: {server, host?}``: cold-migrate, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Migrate(base.ColdMove):
    name = 'migrate'
    fields = ('server', 'host')

    def check_target(self, check, args, scenario):
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        return 'migrate %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.migrate(args['server'], host=args.get('host'))


KIND = Migrate()
