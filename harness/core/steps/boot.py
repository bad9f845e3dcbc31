"""``boot: {server, flavor, host?, image?}``: create a server, wait for ACTIVE.

``image`` names one of the scenario's ``images:`` (the image stand-in's
default image otherwise).
"""

from harness.core import names
from harness.core.steps import base


class Boot(base.ServerOperation):
    name = 'boot'
    fields = ('server', 'flavor', 'host', 'image')
    required = ('server', 'flavor')
    resting = {'status': 'ACTIVE'}
    # A build that fails on its host goes back to the conductor
    # (build_instances) for an alternate: a reschedule.
    points = frozenset((
        'conductor.schedule_and_build_instances', 'build_and_run_instance',
        'conductor.build_instances', 'scheduler.select_destinations',
        'scheduler.update_instance_info', 'instance.host'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        server = args['server']
        if server in state.servers or server in state.deleted:
            check.fail('server', 'a server named %r was booted already'
                       % server)
        if names.MIGRATION_CONSUMER.match(server):
            check.fail('server', '%r is reserved for migrations' % server)
        check.known(args['flavor'], scenario.flavors, 'flavor')
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
        if args.get('image') is not None:
            check.known(args['image'], scenario.images, 'image',
                        noun='image')
        state.servers[server] = 'error' if error else 'active'
        return args

    def label(self, args):
        where = ' on %s' % args['host'] if args.get('host') else ''
        return 'boot %s (%s)%s' % (args['server'], args['flavor'], where)

    def run(self, cloud, args):
        cloud.servers.boot(args['server'], args['flavor'],
                           host=args.get('host'), image=args.get('image'))


KIND = Boot()
