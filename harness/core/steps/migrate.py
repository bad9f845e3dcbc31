"""``migrate: {server, host?}``: cold-migrate, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Migrate(base.ColdMove):
    name = 'migrate'
    summary = 'Cold-migrate a server; wait for VERIFY_RESIZE.'
    fields = {
        'server': ('server name', 'an ACTIVE or SHUTOFF server'),
        'host': ('host name', 'the destination (the scheduler still '
                 'checks it); the scheduler chooses otherwise'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- migrate: {server: vm1, host: dst}
  expect: {allocations: {vm1: {dst: pin2}, migration(vm1): {src: pin2}}}
'''

    def check_target(self, check, args, scenario):
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        return 'migrate %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.migrate(args['server'], host=args.get('host'))


KIND = Migrate()
