"""What every step kind declares; the scenario's state as steps see it.

A step kind is one class (one module under ``harness.core.steps``) that
says, for its YAML key:

- ``parse``: its fields and their validation, what it needs of the
  scenario's state so far (a confirm needs a move waiting for it) and how
  it changes that state; it returns the step's arguments;
- ``label``: how a report names the step;
- ``run``: how it runs on a cloud, through the cloud's public methods
  (``cloud.servers``, ``cloud.race``, ``cloud.clock``, ...) only, so this
  package imports no Nova;
- ``resting``: the state a server operation leaves the server in;
- ``points``: the race points a run of the step can pass (an ``inject``
  that names a point no later step passes is refused up front), and
  ``moves``: whether the explorer injects periodics at them;
- ``roles``: the race-point roles (``source``, ``dest``) its migration
  names;
- ``arms``: whether it only arms what a later step sets off (an
  injection, a fault) and changes nothing in the cloud: the runner then
  runs no checks after it (they would read what they read after the step
  before) and proves it wrote nothing;
- its invariant windows: ``reconciles`` (the hosts whose trackers the
  step's own work reconciles) and ``windows`` (how far a tracker may
  legitimately lag Placement after the step, until that host's next
  periodic; see ``harness.core.invariants.tracker_agrees``);
- ``pending``: the compute nodes whose providers Placement has not caught
  up with after the step (a node removed, added or rebalanced), until the
  periodic of the host named (``harness.core.steps.nodes``);
- its documentation, which the scenario reference (``doc/source``) is
  generated from: ``summary`` (one line), ``fields`` (in order: field
  name -> (type, meaning); a kind whose ``parse`` checks the step's keys
  against ``fields`` accepts exactly the fields it documents) and
  ``example`` (YAML steps as a scenario writes them: the kind's step with
  the steps it needs around it, naming the hosts, flavors and images of
  the reference's example scenario).

Adding an operation is adding one such module and its tests: the loader,
runner, explorer and invariants consult the registry and nothing else has
a switch on step kinds.
"""

from harness.core import errors
from harness.core import names

#: What a tracker window bounds, per host (the tracker's terms).
TRACKER_KEYS = ('vcpus', 'memory_mb', 'local_gb', 'pinned')
#: Placement's classes behind each tracker key.
KEY_RCS = {'vcpus': ('VCPU', 'PCPU'), 'memory_mb': ('MEMORY_MB',),
           'local_gb': ('DISK_GB',), 'pinned': ('PCPU',)}


# The race points of a cold move (resize, migrate), as Nova 34 passes them:
# the API casts to the conductor, whose MigrationTask asks the scheduler
# and casts prep_resize to the destination, which casts resize_instance to
# the source, which casts finish_resize to the destination; a failure sets
# the migration to error (a failed reschedule to failed).
COLD_MOVE_POINTS = frozenset((
    'conductor.migrate_server', 'conductor.MigrationTask',
    'scheduler.select_destinations', 'scheduler.update_instance_info',
    'prep_resize', 'resize_instance', 'finish_resize', 'instance.host',
    'migration.status=pre-migrating', 'migration.status=migrating',
    'migration.status=post-migrating', 'migration.status=finished',
    'migration.status=error', 'migration.status=failed'))
# A live migration: the conductor's LiveMigrationTask checks both hosts
# and the source drives the rest from its executor (_do_live_migration,
# _post_live_migration, or _rollback_live_migration on failure, which asks
# the destination to drop a NUMA guest's claim); an abort or force-complete
# request reaches the source while it runs.
LIVE_MOVE_POINTS = frozenset((
    'conductor.live_migrate_instance', 'conductor.LiveMigrationTask',
    'scheduler.select_destinations', 'scheduler.update_instance_info',
    'check_can_live_migrate_destination', 'check_can_live_migrate_source',
    'pre_live_migration', 'live_migration', '_do_live_migration',
    '_post_live_migration', 'post_live_migration_at_destination',
    '_rollback_live_migration', 'rollback_live_migration_at_destination',
    'drop_move_claim_at_destination', 'live_migration_abort',
    'live_migration_force_complete', 'remove_volume_connection',
    'instance.host',
    'migration.status=accepted', 'migration.status=queued',
    'migration.status=preparing', 'migration.status=running',
    'migration.status=completed', 'migration.status=error',
    'migration.status=failed', 'migration.status=cancelled'))


class _AnyPoint(frozenset):
    """The points of a step that can start any operation.

    A compute that starts runs the casts queued for it; a periodic may
    confirm a resize or delete a server.
    """

    def __contains__(self, point):
        return True

    def __repr__(self):
        return 'ANY_POINT'


ANY_POINT = _AnyPoint()


#: What a server can be between steps, as the loader tracks it, and how
#: a refusal says so. ``verify`` waits for confirm or revert; ``error`` is
#: a server whose boot (or a later operation) was expected to fail.
SERVER_STATES = {
    'active': 'it is active',
    'verify': 'it is waiting for confirm or revert',
    'error': 'it is in error (a step was expected to fail)',
    'shutoff': 'it is stopped (SHUTOFF)',
    'paused': 'it is paused',
    'suspended': 'it is suspended',
    'shelved': 'it is shelved (still on its host)',
    'shelved_offloaded': 'it is shelved and offloaded (on no host)',
}
#: Nova's default ``[DEFAULT] service_down_time``, in seconds.
SERVICE_DOWN_TIME = 60


# (group, option, smallest value Nova means something by): the options
# the loader itself reads to check steps (when a compute is seen down,
# when a shelved server is offloaded).
LOADER_OPTIONS = (('DEFAULT', 'service_down_time', 0),
                  ('DEFAULT', 'shelved_offload_time', -1))


def check_loader_options(check, config, field='config'):
    """Whole numbers, as Nova's IntOpts, before a step reads them."""
    for group, option, minimum in LOADER_OPTIONS:
        value = config.get(group, {}).get(option)
        if value is not None:
            check.integer(value, '%s.%s.%s' % (field, group, option),
                          minimum=minimum)


class State(object):
    """What the steps so far have done, to check the next one.

    ``config`` is the scenario's Nova config (``{group: {option: value}}``),
    for the options that decide what a step may do (``service_down_time``).
    """

    def __init__(self, hosts, config=None):
        self.hosts = hosts
        self.config = config or {}
        self.servers = {}      # name -> a SERVER_STATES key
        self.deleted = set()
        self.stopped = set()   # hosts whose compute is stopped
        self.moved = set()     # servers that have had a migration
        # Server -> its state before a resize or migration (active or
        # shutoff): confirm and revert put it back.
        self.before_move = {}
        # Virtual seconds advanced so far, and when each stopped compute
        # stopped: Nova sees a compute down once service_down_time has
        # passed since its last heartbeat (at the latest, its stop).
        self.clock = 0.0
        self.stopped_at = {}
        self.forced_down = set()   # hosts forced down through the API
        self.disabled = set()      # hosts whose compute service is disabled
        self.service_deleted = set()   # hosts whose service was deleted
        # Compute nodes of multi-node hosts (``nodes:``): every node the
        # scenario names, the host whose service each is given to now, and
        # those removed (``harness.core.steps.nodes``).
        self.node_hosts = {}
        for name, host in sorted(hosts.items()):
            for node in getattr(host, 'nodes', None) or ():
                self.node_hosts[node] = name
        self.all_nodes = frozenset(self.node_hosts)
        self.nodes_removed = set()
        # Placement faults armed to refuse the connection (``status:
        # unreachable``), not yet taken by a step that sends such a
        # request: ``[method, path regex, times left or None]``.
        self.placement_cut_off = []

    def take_cut_off(self, method, path):
        """Whether an armed ``unreachable`` fault takes ``method path``.

        One of its times is used up, as the cloud's fault counts them.
        """
        for fault in self.placement_cut_off:
            if fault[0] == method and fault[1].match(path) and (
                    fault[2] is None or fault[2] > 0):
                if fault[2] is not None:
                    fault[2] -= 1
                return True
        return False

    def service_down_time(self):
        value = self.config.get('DEFAULT', {}).get('service_down_time')
        return SERVICE_DOWN_TIME if value is None else value

    def seen_down(self, host):
        """Whether Nova's API sees ``host``'s compute down by now."""
        if host in self.forced_down:
            return True
        return host in self.stopped and (
            self.clock - self.stopped_at.get(host, self.clock)
            > self.service_down_time())

    def stop(self, host):
        self.stopped.add(host)
        self.stopped_at[host] = self.clock

    def start(self, host):
        self.stopped.discard(host)
        self.stopped_at.pop(host, None)


class Lag(object):
    """Why Nova's tracker lags Placement in a window, and what catches up.

    ``reason``: the Nova behaviour that leaves the tracker behind;
    ``catch_up``: the Nova code that brings it level again (a method in
    a file of Nova's tree). Every window a step kind opens carries one
    (``StepKind.lags`` lists them; a unit test walks them), and a report
    that names a window says its lag (``describe``).
    """

    def __init__(self, name, reason, catch_up):
        if not (name and reason and catch_up):
            raise ValueError('a window lag needs a name, a reason and the '
                             'Nova code that catches up: %r' % (name,))
        self.name = name
        self.reason = reason
        self.catch_up = catch_up

    def describe(self):
        return '%s (Nova lags: %s; caught up by %s)' % (
            self.name, self.reason, self.catch_up)


_PERIODIC = ('ResourceTracker.update_available_resource '
             '(nova/compute/resource_tracker.py), run by the periodic '
             'ComputeManager.update_available_resource '
             '(nova/compute/manager.py)')
_START = ('ComputeManager.init_host then pre_start_hook, which runs '
          'ResourceTracker.update_available_resource(startup=True) '
          '(nova/compute/manager.py, nova/compute/resource_tracker.py)')

#: The lags windows declare, by name.
DELETED_WHILE_DOWN = Lag(
    'deleted while down',
    'the API deletes a guest of a down compute locally '
    '(API._local_delete, nova/compute/api.py) and frees its allocations '
    'in Placement, while that compute\'s tracker record is its last save',
    _START)
DELETED_AFTER_MOVE = Lag(
    'deleted after a move',
    'the delete path updates a host\'s usage only for a guest in its '
    'tracked_instances (ResourceTracker.update_usage, '
    'nova/compute/resource_tracker.py); a guest that reached the host by '
    'a move is not there before the periodic, so its CPUs, pinned CPUs '
    'and pages stay counted while Placement frees every allocation at '
    'once (findings/delete_after_move_keeps_pinned_cpus_until_periodic'
    '.yaml)',
    _PERIODIC)
DELETED_MID_MOVE = Lag(
    'deleted mid-move',
    'a guest deleted while its move is in flight: Placement frees its '
    'and its migration\'s allocations, the hosts of the move keep the '
    'claim (ResourceTracker.tracked_migrations) they made for it',
    _PERIODIC)
EVACUATED_FROM = Lag(
    'evacuated from a down compute',
    'the source of an evacuation is down: Placement moves the guest, '
    'the source\'s tracker record is its last save',
    'ComputeManager._destroy_evacuated_instances in init_host, then '
    + _START)
LIVE_MIGRATED_TO = Lag(
    'live-migrated here',
    'Placement moved the allocations to the destination; there the '
    'completed migration is no longer a tracked migration, the guest made '
    'no claim (check_can_live_migrate_destination claims only for a '
    'NUMA-aware live migration, ResourceTracker.live_migration_claim), '
    'and nothing else in the live migration counts it '
    '(_do_post_live_migration_at_destination calls the tracker for PCI '
    'devices only)',
    _PERIODIC)
COMPUTE_DIED = Lag(
    'compute died mid-step',
    'a dead compute saves nothing: Placement changed for the step\'s '
    'work on it, its record is its last save',
    _START)
COMPUTE_RESTARTED = Lag(
    'compute restarted mid-move',
    'the start-up periodic counted the move in flight; a move that then '
    'fails or rolls back without telling the tracker stays counted',
    _PERIODIC)
LOCAL_DELETE_CUT_OFF = Lag(
    'local delete cut off from Placement',
    'the API deletes a guest of a down compute locally (API._local_delete, '
    'nova/compute/api.py), but its DELETE of the allocations finds no '
    'Placement: SchedulerReportClient.delete_allocation_for_instance is '
    'safe_connect (nova/scheduler/client/report.py), which logs the '
    'ConnectFailure and goes on, so the deleted guest\'s allocations stay '
    'in its host\'s tree while that compute is down',
    'ResourceTracker._remove_deleted_instances_allocations '
    '(nova/compute/resource_tracker.py), in the start-up pass of '
    + _START)
CLAIM_WAITING = Lag(
    'scheduler claim waiting for its compute',
    'the scheduler claims in Placement (select_destinations) before the '
    'compute takes the build or unshelve (instance_claim); a dead '
    'compute leaves the server hostless with the claim held',
    'the queued build_and_run_instance / unshelve_instance cast, or '
    'ComputeManager._error_out_instances_whose_build_was_interrupted in '
    'init_host (nova/compute/manager.py)')


class Window(object):
    """A tracker allowed to lag Placement on ``host`` (one step's share).

    ``side`` is ``below`` (the tracker may count up to ``held`` less than
    Placement) or ``above`` (up to ``held`` more); ``held`` is in
    Placement's classes; ``why`` says which of Nova's code paths opens it
    here; ``lag`` (a ``Lag``) why Nova lags there and what catches up.
    """

    def __init__(self, host, side, held, why, lag):
        if not isinstance(lag, Lag):
            raise TypeError('window on %s (%s) declares no Lag' % (host, why))
        self.host = host
        self.side = side
        self.held = dict(held)
        self.why = why
        self.lag = lag

    def amounts(self):
        """``held`` in tracker keys (``TRACKER_KEYS``)."""
        return {key: sum(self.held.get(rc, 0) for rc in KEY_RCS[key])
                for key in TRACKER_KEYS}


class StepKind(object):
    """A kind of step; see the module docstring. Subclasses set ``name``."""

    name = None
    #: A server operation: it may say ``error: <text>`` and must then fail.
    operation = False
    #: The explorer injects periodics at the points it passes.
    moves = False
    #: Race points the step can pass (compute RPC methods on the receiving
    #: host, conductor./scheduler. methods and tasks, state changes).
    points = frozenset()
    #: Roles its migration names at those points.
    roles = ()
    #: It only arms what a later step sets off: it writes nothing to
    #: Nova's records or Placement, and no checks run after it.
    arms = False
    #: A server operation's resting state: ``status`` of the server and
    #: ``migration`` status of its latest migration.
    resting = {}
    #: The lags (``Lag``) of the windows ``windows`` can open: a kind
    #: that opens windows declares each one's reason and catch-up.
    lags = ()
    #: What the step does, in one line (the reference's summary).
    summary = None
    #: Its fields, in order: name -> (type, meaning).
    fields = {}
    #: YAML steps showing it, with the steps it needs before or after it.
    example = None

    def parse(self, check, value, scenario, state, error):
        raise NotImplementedError  # pragma: no cover

    def label(self, args):
        return self.name.replace('_', ' ')

    def run(self, cloud, args):
        """Run on ``cloud``; an ``inject`` returns its injection."""
        raise NotImplementedError  # pragma: no cover

    def reconciles(self, args, running):
        """Hosts whose trackers this step's work leaves reconciled."""
        return set()

    def windows(self, args, before, after, down):
        """``Window`` records the step opens (snapshots before/after it)."""
        return []

    def pending(self, args):
        """Compute nodes whose provider Placement has not caught up with.

        Node -> the host whose next ``update_available_resource`` creates,
        deletes or moves it (a node that came, went or moved; see
        ``harness.core.steps.nodes``).
        """
        return {}


def server_field(which):
    """``fields`` of a step that names one server (``which``) only."""
    return {'server': ('server name',
                       '%s; the step may be just the name' % which)}


def host_field(which):
    """``fields`` of a step that names one compute (``which``) only."""
    return {'host': ('host name',
                     '%s; the step may be just the name' % which)}


class ServerOperation(StepKind):
    """A step that acts on one server through Nova's API."""

    operation = True
    fields = server_field('the server')
    required = ('server',)

    def server_args(self, check, value):
        if isinstance(value, str):
            value = {'server': value}
        check.mapping(value, 'the step')
        check.keys(value, self.fields, required=self.required)
        check.string(value['server'], 'server')
        return dict(value)

    def label(self, args):
        return '%s %s' % (self.name.replace('_', ' '), args['server'])


class ColdMove(ServerOperation):
    """A resize or cold migration: both wait in VERIFY_RESIZE."""

    moves = True
    roles = ('source', 'dest')
    resting = {'status': 'VERIFY_RESIZE', 'migration': 'finished'}
    points = COLD_MOVE_POINTS

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        # Nova moves ACTIVE and STOPPED servers (compute/api.py resize).
        needs(check, state, args['server'], ('active', 'shutoff'),
              self.name)
        self.check_target(check, args, scenario)
        if not error:
            state.before_move[args['server']] = state.servers[args['server']]
            state.servers[args['server']] = 'verify'
        # A move that fails on a compute has a migration (in error) too.
        state.moved.add(args['server'])
        return args

    def check_target(self, check, args, scenario):
        """Check what the move names besides the server: a flavor, a host."""
        raise NotImplementedError  # pragma: no cover


#: The compute API's microversions, as the harness's requests send them
#: (the client asks for the newest, Nova 34's 2.104, unless a step says).
NEWEST_MICROVERSION = (2, 104)
#: The last microversion whose live migration and evacuation take
#: ``force`` (skip the scheduler): 2.68 removed it.
LAST_FORCE = (2, 67)


def microversion_text(version):
    return '%d.%d' % version


def forced_request(check, args, first_force, oldest):
    """A step's ``force`` and ``microversion`` checked; the version to send.

    ``force: true`` (with ``host``) sends Nova's ``force`` flag, which it
    takes from microversion ``first_force`` to 2.67: without
    ``microversion`` the step sends 2.67, the newest that has it.
    ``oldest`` is the oldest microversion the harness's request body is
    valid at. None: the client's newest.
    """
    force = args.get('force', False)
    if not isinstance(force, bool):
        check.fail('force', 'true or false, not %s' % errors.show(force))
    version = None
    if 'microversion' in args:
        raw = args['microversion']
        parts = raw.split('.') if isinstance(raw, str) else ()
        if len(parts) != 2 or not all(p.isdigit() for p in parts) \
                or parts[0] != '2':
            check.fail('microversion', 'a compute API microversion as a '
                       'text, "2.N" (e.g. "2.67"), not %s' % errors.show(raw))
        version = (2, int(parts[1]))
        if not oldest <= version <= NEWEST_MICROVERSION:
            check.fail('microversion', '%s is outside what this step can '
                       'send: %s to %s' % (raw, microversion_text(oldest),
                                           microversion_text(
                                               NEWEST_MICROVERSION)))
    if force:
        if args.get('host') is None:
            check.fail('force', 'forcing needs a host (Nova: "Can\'t force '
                       'to a non-provided destination")')
        if version is None:
            version = LAST_FORCE
        elif not first_force <= version <= LAST_FORCE:
            check.fail('microversion', 'Nova takes force from %s to %s '
                       '(2.68 removed it), not at %s' % (
                           microversion_text(first_force),
                           microversion_text(LAST_FORCE),
                           microversion_text(version)))
    return version and microversion_text(version)


def needs(check, state, server, wanted, doing):
    """Fail unless ``server`` exists and is in one of the ``wanted`` states.

    ``wanted`` holds ``SERVER_STATES`` keys.
    """
    if server not in state.servers:
        check.fail('server', 'no server %r to %s (booted: %s)' % (
            server, doing, ', '.join(sorted(state.servers)) or 'none'))
    current = state.servers[server]
    if current not in wanted:
        check.fail('server', 'cannot %s %s: %s (it must be %s)' % (
            doing, server, SERVER_STATES[current],
            ' or '.join(SERVER_STATES[w][len('it is '):] for w in wanted)))


def unknown_kind(name, known):
    return errors.ScenarioError('unknown step kind %r; known: %s'
                                % (name, ', '.join(known)))


def race_point_at(check, value, field='at'):
    """``at: {before | after: point, host?}``: where a step arms its work.

    What ``add_node`` and ``fault`` take to act at a race point of a later
    step instead of now (``check_points_at`` checks a later step passes
    it). Returns ``{when, point, host}``.
    """
    check.mapping(value, field)
    check.keys(value, ('before', 'after', 'host'), field=field)
    whens = [when for when in ('before', 'after') if when in value]
    if len(whens) != 1:
        check.fail(field, 'say "before: <point>" or "after: <point>"')
    point = check.string(value[whens[0]], '%s.%s' % (field, whens[0]))
    if not names.POINT_NAME.match(point):
        check.fail('%s.%s' % (field, whens[0]),
                   '%r is not a race point name' % point)
    return {'when': whens[0], 'point': point, 'host': value.get('host')}


def check_points_at(check, steps, kinds):
    """Refuse a step armed ``at`` a point no later step passes."""
    for position, step in enumerate(steps):
        at = step.args.get('at') if isinstance(step.args, dict) else None
        if not at:
            continue
        if not any(at['point'] in kinds[later.kind].points
                   for later in steps[position + 1:]):
            check.at_step(step.index).fail(
                '%s.at' % step.kind, 'no later step passes race point %r'
                % at['point'])


class ArmedAt(object):
    """What a step arms at a race point: ``arm()`` runs when it is passed.

    ``arm`` returns what it armed there (a fault: ``fired``, ``never``),
    or None for work done there and then. The runner's check that
    everything armed fired (``fired``, ``never``, ``subject``) asks both:
    the point must be passed, and what was armed there must fire.
    """

    def __init__(self, injection, arm, description):
        self.injection = injection
        self.armed = None
        self._arm = arm
        injection.call(self._fire, description)

    def _fire(self, passage):
        self.armed = self._arm()
        return None

    @property
    def subject(self):
        return self.injection.subject

    @property
    def fired(self):
        if self.armed is None:
            return self.injection.fired
        return self.armed.fired if self.injection.fired else []

    @property
    def never(self):
        if self.armed is None:
            return self.injection.never
        return self.armed.never
