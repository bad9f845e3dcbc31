"""``evacuate: {server, host?, force?, microversion?}``: rebuild a server
away from its down compute.

``force: true`` (with ``host``, microversions 2.29 to 2.67; 2.67 unless
``microversion`` says) skips the scheduler: the conductor copies the
source's allocation to the destination itself
(``scheduler_utils.claim_resources_on_destination``). ``microversion``
("2.N", 2.29 or later) is the API's for the request; before 2.95 Nova
leaves an evacuated ACTIVE server ACTIVE, not SHUTOFF.

Nova evacuates a server only when its compute is down as the API sees it
(stopped for longer than ``service_down_time``, or forced down): the API
refuses with "Compute service of <host> is still in use" otherwise. It
records an ``evacuation`` migration (``accepted``), the conductor asks the
scheduler (a named host too: without ``force`` it is a requested
destination), which doubles the instance's allocation onto the
destination under the instance itself (no migration consumer); the
destination's ``rebuild_instance`` claims (``rebuild_claim``), pins a NUMA
guest's CPUs, rebuilds the guest and sets the migration ``done``. At the
latest microversion (2.95 and later) the server is left SHUTOFF.

The source's part of the allocation and its tracker record stay until the
source's compute starts again: ``init_host`` runs
``_destroy_evacuated_instances`` (destroys the local guest, drops the
source's allocation, sets the migration ``completed``) and then
``update_available_resource``.

Its invariant window: the source's record keeps counting the guest until
then, while Placement may drop the source's part earlier (a delete of the
evacuated server deletes all its allocations): the source's tracker may
count up to the guest's allocation there more.

The loader knows a server's host when the scenario named it (a boot or an
evacuate with ``host``, and no move since); then the evacuation must come
from a compute seen down and go elsewhere. Otherwise it needs at least
one compute seen down. A step with ``error:`` skips these checks: it says
Nova refuses.
"""

from harness.core import snapshot as snapshot_mod
from harness.core.steps import base

EVACUATE_KIND = 'evacuate'
EVACUATION = 'evacuation'
# Its migration's statuses until the source's compute cleans up
# (``_destroy_evacuated_instances`` looks for these).
EVACUATING = ('accepted', 'pre-migrating', 'done')
# Server states Nova evacuates (compute/api.py ``evacuate``: ACTIVE,
# STOPPED, ERROR). ERROR is left out: Nova leaves an evacuated ERROR
# server ACTIVE, not SHUTOFF, and the resting state is one per kind.
EVACUABLE = ('active', 'shutoff')
# Step kinds after which the loader no longer knows where a server is.
_RELOCATING = ('shelve', 'shelve_offload', 'unshelve')


def stays_active(microversion):
    """Whether Nova leaves an evacuated ACTIVE server ACTIVE (before 2.95)."""
    return microversion is not None and tuple(
        int(part) for part in microversion.split('.')) < (2, 95)


def known_host(scenario, server):
    """The host ``server`` is on by the scenario's steps so far, or None."""
    host = None
    for step in scenario.steps:
        if step.args.get('server') != server:
            continue
        unit = step.unit
        if step.kind in ('boot', EVACUATE_KIND):
            host = None if step.error else step.args.get('host')
        elif step.kind == 'rebuild':
            continue    # a rebuild stays on its host
        elif unit.moves or unit.roles or step.kind in _RELOCATING:
            host = None
    return host


class Evacuate(base.ServerOperation):
    name = EVACUATE_KIND
    summary = ("Rebuild a server on another host, away from its compute "
               "that Nova sees down; wait until it is SHUTOFF there.")
    fields = {
        'server': ('server name', 'an ACTIVE or SHUTOFF server whose '
                   'compute is stopped and seen down (or forced down)'),
        'host': ('host name', 'the destination (a requested destination: '
                 'the scheduler still checks it); the scheduler chooses '
                 'otherwise'),
        'force': ('true or false', 'skip the scheduler for ``host`` '
                  '(microversion 2.29 to 2.67)'),
        'microversion': ('"2.N"', "the compute API's for the request "
                         '(2.29 or later); the newest by default'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop_compute: src
- advance_clock: 61          # past service_down_time: Nova sees src down
- evacuate: {server: vm1, host: dst}
  expect:
    allocations: {vm1: {src: pin2, dst: pin2}}
    servers: {vm1: {status: SHUTOFF, host: dst}}
- start_compute: src         # its start-up cleans the evacuated guest up
  expect: {allocations: {vm1: {dst: pin2}}}
'''
    # The explorer injects at its points, on the destination (the source
    # is down: a role naming it is not applicable).
    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'SHUTOFF', 'migration': 'done'}
    # The API casts to the conductor, which asks the scheduler and casts
    # rebuild_instance to the destination; the claim there sets the
    # migration pre-migrating, the rebuild done (failed on a failure).
    points = frozenset((
        'conductor.rebuild_instance', 'scheduler.select_destinations',
        'scheduler.update_instance_info', 'rebuild_instance',
        'instance.host', 'migration.status=pre-migrating',
        'migration.status=done', 'migration.status=failed',
        'migration.status=error',
        # The destination sets the instance's host and drops its
        # migration context under the tracker's lock.
        'tracker.finish_evacuation'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        server = args['server']
        base.needs(check, state, server, EVACUABLE, 'evacuate')
        target = args.get('host')
        if target is not None:
            check.known(target, scenario.hosts, 'host')
        source = known_host(scenario, server)
        version = base.forced_request(
            check, args, first_force=(2, 29), oldest=(2, 29))
        if version is not None:
            args['microversion'] = version
        if not error:
            self._check_hosts(check, state, server, source, target)
            if not stays_active(args.get('microversion')):
                state.servers[server] = 'shutoff'
        state.moved.add(server)
        return args

    @staticmethod
    def _check_hosts(check, state, server, source, target):
        down = sorted(h for h in state.hosts if state.seen_down(h))
        if source is not None and source not in down:
            check.fail('server', (
                'cannot evacuate %s: the compute of its host %s is not seen '
                'down (stop it and advance the clock past service_down_time '
                '%ss, or force it down)' % (
                    server, source, state.service_down_time())))
        if not down:
            check.fail('server', (
                'cannot evacuate %s: no compute is seen down (stop one and '
                'advance the clock past service_down_time %ss, or force it '
                'down)' % (server, state.service_down_time())))
        if target is not None:
            if target == source:
                check.fail('host', 'cannot evacuate %s to its own host %s'
                           % (server, target))
            if target in state.stopped or target in state.forced_down:
                check.fail('host', 'cannot evacuate %s to %s: its compute '
                           'is down' % (server, target))

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        if args.get('force'):
            where += ' (forced)'
        return 'evacuate %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.evacuate(args['server'], host=args.get('host'),
                               force=args.get('force', False),
                               microversion=args.get('microversion'))

    lags = (base.EVACUATED_FROM,)

    def windows(self, args, before, after, down):
        return evacuation_windows(before, after)


def evacuation_windows(before, after):
    """An ``above`` window on the source of each evacuation started.

    Bounded by what the server held on its source before the step; a
    failed evacuation leaves the server there and opens none.
    """
    opened = []
    before_roots = snapshot_mod.host_roots(before)
    for consumer, migration in sorted(after.migrations.items()):
        if migration.type != EVACUATION or \
                migration.status not in EVACUATING:
            continue
        earlier = before.migrations.get(consumer)
        if earlier is not None and earlier.uuid == migration.uuid:
            continue
        roots = before_roots.get(migration.source, {migration.source})
        opened.append(base.Window(
            migration.source, 'above',
            snapshot_mod.held_in(before, migration.server, roots),
            '%s evacuated from here, counted by this record until its '
            'compute starts again' % migration.server,
            base.EVACUATED_FROM))
    return opened


KIND = Evacuate()
