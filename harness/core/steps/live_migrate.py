"""``live_migrate: {server, host?, force?, microversion?}``: live-migrate,
wait for ACTIVE.

``force: true`` (with ``host``, microversions 2.30 to 2.67; 2.67 unless
``microversion`` says) skips the scheduler: the conductor checks the
destination itself and copies the source's allocation there
(``LiveMigrationTask._check_requested_destination``,
``scheduler_utils.claim_resources_on_destination``). ``microversion``
("2.N", 2.25 or later: the request body sends ``block_migration:
auto``) is the API's for the request.

Its invariant window: only a NUMA live migration makes a claim on the
destination (``_live_migration_claim``); the guest otherwise reaches the
destination's tracker at that host's next periodic (the source is
reconciled: ``_post_live_migration`` runs ``update_available_resource``).
Until then the destination's tracker may count up to the guest's
allocation there less, pinned CPUs included (a NUMA guest is pinned on
the destination by its claim; with the bound, either is accepted).
"""

from harness.core import snapshot as snapshot_mod
from harness.core.steps import base

LIVE_MIGRATION = 'live-migration'


class LiveMigrate(base.ServerOperation):
    name = 'live_migrate'
    summary = 'Live-migrate an ACTIVE server; wait until it is ACTIVE again.'
    fields = {
        'server': ('server name', 'an ACTIVE server'),
        'host': ('host name', 'the destination (the scheduler still '
                 'checks it); the scheduler chooses otherwise'),
        'force': ('true or false', 'skip the scheduler for ``host`` '
                  '(microversion 2.30 to 2.67)'),
        'microversion': ('"2.N"', "the compute API's for the request "
                         '(2.25 or later); the newest by default'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- live_migrate: {server: vm1, host: dst}
  expect:
    allocations: {vm1: {dst: pin2}}
    pinned_cpus: {src: 0, dst: 2}
    migrations: {vm1: completed}
'''
    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'ACTIVE', 'migration': 'completed'}
    points = base.LIVE_MOVE_POINTS

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], ('active',), 'live-migrate')
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
        version = base.forced_request(
            check, args, first_force=(2, 30), oldest=(2, 25))
        if version is not None:
            args['microversion'] = version
        state.moved.add(args['server'])
        return args

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        if args.get('force'):
            where += ' (forced)'
        return 'live migrate %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.live_migrate(
            args['server'], host=args.get('host'),
            force=args.get('force', False),
            microversion=args.get('microversion'))

    lags = (base.LIVE_MIGRATED_TO,)

    def windows(self, args, before, after, down):
        return live_migration_windows(before, after)


def live_migration_windows(before, after):
    """A ``below`` window on the destination of each completed migration.

    Each live migration that completed between the two snapshots.
    """
    opened = []
    host_roots = snapshot_mod.host_roots(after)
    for consumer, migration in sorted(after.migrations.items()):
        if migration.type != LIVE_MIGRATION or \
                migration.status != 'completed':
            continue
        earlier = before.migrations.get(consumer)
        if earlier is not None and earlier.uuid == migration.uuid and \
                earlier.status == 'completed':
            continue
        roots = host_roots.get(migration.dest, {migration.dest})
        opened.append(base.Window(
            migration.dest, 'below',
            snapshot_mod.held_in(after, migration.server, roots),
            '%s live-migrated here, not yet counted before the next '
            'periodic' % migration.server, base.LIVE_MIGRATED_TO))
    return opened


KIND = LiveMigrate()
