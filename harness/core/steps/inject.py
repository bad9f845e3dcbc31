"""``inject: {before | after: point, run: task, on: host | role, times?,
server?, at_host?}``: arm a periodic at a race point of a later step.

Or, instead of ``run``/``on``, ``do: {delete | live_migrate |
abort_live_migration | force_complete_live_migration: server}``: send
that API request at the point (``harness.cloud.interject``), as a user
whose request lands in the middle of another operation. The request's own
race points are then passed by the step that was running (the test case
allows them). A live migration sent inside another live migration from
the same source waits in the source's live-migration executor while that
one runs (``[DEFAULT] max_concurrent_live_migrations``, 1 by default):
queued work that a later injection may abort, delete or race.

``do: {delete_service: host | role}, refused: true | false``: an admin
deletes that compute's service at the point. ``refused`` says what the
API must answer: true, its 409 (the host has instances or migrations in
progress: a move's source and destination), which changes nothing; false,
the delete (the service, its compute nodes and their providers go). The
other answer fails the step. A delete that goes through needs a named,
stopped host (as ``delete_service`` does: a running compute re-creates
what it removes), and the loader counts its service deleted from then on.

The point must be one that a later step of the scenario can pass (each
kind declares its ``points``); the loader checks that once every step is
read (``check_points``), so a misspelt or impossible point fails before
any service starts.

Or ``check: {<expectation key>: ...}``: check those expectations at the
point, while the operation that passes it is parked there (the
allocations and pinned CPUs half way through a live migration): the same
keys and shapes as a step's ``expect:``; what differs fails the step that
passes the point, each problem naming the point.

Or ``stop: host | role``: nova-compute there dies at the point (the work
it had in flight there ends, it takes no more messages; see
``harness.cloud.dying``); the loader counts it stopped from then on, so a
role must be one it can tell (a ``source`` the scenario booted the server
on, the one other running ``dest``), else name the host. ``restart: host
| role``: it dies and starts again at once, guests kept. ``times`` is 1.
The step that passes the point then usually ends short of its resting
state (``error: did not reach its resting state``). Its invariant windows
take the death's: the dead compute's record is its last save, so it may
lag what Placement gained or lost there during the step until the compute
starts again (``died_windows``); a restarted one may count the move in
flight until its next periodic (``restarted_windows``). A build or
unshelve whose chosen compute died before taking it waits on no host
with the scheduler's claim there, allowed while that compute is down
(``ClaimWindow``, for ``allocations_where_server_is``).

A delete sent this way is attached to the step that passes its point
(``Step.interjected``): the invariants take that step's windows and the
delete's (``delete.interjected_windows``: the trackers a move touched
count the deleted guest until their next periodic, bounded by what it
held before and the move's flavor). The hosts of the move are noted at
the point (``moving``): the deleted server's record goes with it.
"""

import types

from harness.core import errors
from harness.core import names
from harness.core import snapshot as snapshot_mod
from harness.core.steps import base
from harness.core.steps import delete as delete_step
from harness.core.steps import evacuate as evacuate_step


#: What an injection may do to a compute at the point: it dies there
#: (``stop``), or dies and starts again at once, guests kept (``restart``):
#: ``harness.cloud.dying``.
DEATHS = ('stop', 'restart')


class Inject(base.StepKind):
    name = 'inject'
    summary = ('Arm, at a race point of a later step, a periodic, an API '
               'request, or the death or restart of a compute.')
    fields = {
        'before': ('race point', 'fire just before the point: a compute '
                   'RPC method (``finish_resize``), ``conductor.<...>``, '
                   '``scheduler.<...>``, ``tracker.<...>`` (a resource '
                   'tracker method, outside its lock: '
                   '``tracker.drop_move_claim_at_dest``), '
                   '``instance.host`` or ``migration.status=<status>``; '
                   'one later step must be able to pass it'),
        'after': ('race point', 'fire just after the point (say ``before`` '
                  'or ``after``)'),
        'run': ('periodic task name', 'run this periodic task there (with '
                '``on``)'),
        'on': ('host name or role', 'where the periodic runs: a host, or '
               '``source``, ``dest`` or ``server_host`` of the operation '
               'that passes the point'),
        'do': ('{request: server} or {delete_service: host | role}',
               'send an API request there instead: ``delete``, '
               '``abort_live_migration`` or '
               '``force_complete_live_migration`` of a server, or '
               '``delete_service`` of a compute'),
        'refused': ('true or false', 'with ``do: {delete_service: ...}``: '
                    'whether the API must refuse the delete (409) or carry '
                    'it out'),
        'stop': ('host name or role', 'that compute dies at the point: '
                 'its work in flight ends, it takes no more messages'),
        'restart': ('host name or role', 'that compute dies at the point '
                    'and starts again at once, its guests kept'),
        'check': ('{expectation key: value}', "check these expectations "
                  "there (a step's ``expect:`` keys), while the operation "
                  'is parked at the point'),
        'overlap': ('moment of the periodic', 'with ``run`` at '
                    '``before: tracker.<...>``: the operation\'s call '
                    'there carries on in a thread of its own from this '
                    'moment of the periodic (``instances_read``: '
                    'update_available_resource has read the node\'s '
                    'instances, not yet its migrations), until it ends or '
                    'waits for the tracker\'s lock, which the periodic '
                    'holds'),
        'times': ('whole number or null', 'how many passes fire it (default '
                  '1; null: every one); a death is once'),
        'server': ('server name', 'only passes for this server'),
        'at_host': ('host name', 'only passes on this host'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- inject: {before: finish_resize, run: update_available_resource, on: source}
- resize: {server: vm1, flavor: pin4}
  expect:
    allocations: {vm1: {dst: pin4}, migration(vm1): {src: pin2}}
    pinned_cpus: {src: 2, dst: 4}
'''
    arms = True

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        check.keys(value, ('before', 'after', 'run', 'on', 'do', 'times',
                           'server', 'at_host', 'refused', 'check',
                           'overlap') + DEATHS)
        whens = [when for when in ('before', 'after') if when in value]
        if len(whens) != 1:
            check.fail('the step',
                       'say "before: <point>" or "after: <point>"')
        point = check.string(value[whens[0]], whens[0])
        if not names.POINT_NAME.match(point):
            check.fail(whens[0], '%r is not a race point name (a compute '
                       'RPC method such as finish_resize, conductor.<...>, '
                       'scheduler.<...>, tracker.<...>, instance.host or '
                       'migration.status=<status>)' % point)
        task = on = do = None
        deaths = [key for key in DEATHS if key in value]
        if deaths and 'refused' in value:
            _not_refusable(check)
        if deaths:
            return self._parse_death(check, value, deaths, whens[0], point,
                                     scenario, state)
        if 'check' in value:
            return self._parse_check(check, value, whens[0], point,
                                     scenario, state)
        if 'do' in value:
            if 'run' in value or 'on' in value:
                check.fail('do', 'an injection runs a periodic (run, on) '
                           'or sends a request (do), not both')
            do = self._parse_do(check, value['do'])
            if do[0] in names.HOST_INTERJECTIONS:
                refused = _parse_host_do(check, value, do, scenario, state)
            elif do[0] == 'live_migrate':
                # Queued or run in the step that passes the point: moved
                # from then on (its migration, its windows).
                state.moved.add(do[1])
        else:
            for key in ('run', 'on'):
                if key not in value:
                    check.fail(key, 'missing (or say "do: {delete: '
                               '<server>}" to send a request instead)')
            task = check.string(value['run'], 'run')
            if task not in names.PERIODICS:
                check.fail('run', 'unknown periodic task %r; known: %s'
                           % (task, ', '.join(names.PERIODICS)))
            on = check.string(value['on'], 'on')
            if on not in names.ROLES:
                check.known(on, scenario.hosts, 'on')
        if 'refused' in value and (do is None
                                   or do[0] not in names.HOST_INTERJECTIONS):
            _not_refusable(check)
        # In this order (the explorer's replays compare args).
        args = {'when': whens[0], 'point': point, 'run': task, 'on': on}
        args.update(_which_passes(check, value, scenario))
        if 'overlap' in value:
            args['overlap'] = _parse_overlap(check, value, whens[0], point,
                                             task)
        if do is not None:
            args['do'] = do
        if 'refused' in value:
            args['refused'] = refused
        if do is not None and do[0] == 'delete':
            # For the window of a delete in a resize: its new flavor
            # (check_points names the step and the flavor).
            args['flavors'] = {name: flavor.resources() for name, flavor
                               in sorted(scenario.flavors.items())}
            args['move_flavor'] = None
        return args

    @staticmethod
    def _parse_check(check, value, when, point, scenario, state):
        """``check: {expectations}`` at the point."""
        # Here, not at the top: the expectation units read the step kinds.
        from harness.core import expect as expect_mod
        others = [key for key in ('run', 'on', 'do', 'refused', 'overlap')
                  if key in value]
        if others:
            check.fail(others[0], 'an injection that checks expectations '
                       '(check) does nothing else at its point')
        want = expect_mod.parse(check.field('check'), value['check'] or {},
                                scenario, state)
        if not want:
            check.fail('check', 'name at least one expectation to check')
        args = {'when': when, 'point': point, 'run': None, 'on': None}
        args.update(_which_passes(check, value, scenario))
        # What the expectations read of the scenario (its hosts and their
        # nodes), for the run.
        args.update(check=want, hosts=dict(scenario.hosts))
        return args

    @staticmethod
    def _parse_death(check, value, deaths, when, point, scenario, state):
        """``stop: host | role`` or ``restart: host | role``."""
        if len(deaths) > 1 or any(key in value for key in (
                'run', 'on', 'do', 'overlap')):
            check.fail(deaths[-1], 'an injection runs a periodic (run, '
                       'on), sends a request (do), stops a compute (stop) '
                       'or restarts one (restart): one of them')
        kind = deaths[0]
        if value.get('times', 1) != 1:
            check.fail('times', 'a compute dies once: times is 1, not %s'
                       % errors.show(value['times']))
        who = check.string(value[kind], kind)
        server = value.get('server')
        if server is not None:
            check.string(server, 'server')
        if value.get('at_host') is not None:
            check.known(value['at_host'], scenario.hosts, 'at_host')
        if who not in names.ROLES:
            host = check.known(who, scenario.hosts, kind)
        elif kind == 'stop':
            host = _role_host(check, kind, who, server, scenario, state)
        else:
            # A restart leaves the compute running: the role is resolved
            # where the point is passed (``run`` notes it in ``host``).
            host = None
        if host is not None:
            if host in state.stopped:
                check.fail(kind, 'compute %r is already stopped' % host)
            if kind == 'stop':
                # Stopped from the step that passes the point on (the
                # next one that can: check_points).
                state.stop(host)
        return {'when': when, 'point': point, kind: who, 'host': host,
                'times': 1, 'server': server,
                'at_host': value.get('at_host')}

    @staticmethod
    def _parse_do(check, do):
        check.mapping(do, 'do')
        if len(do) != 1:
            check.fail('do', 'one request: %s' % ' | '.join(
                '{%s: <server>}' % name for name in names.INTERJECTIONS))
        (action, server), = do.items()
        if action not in names.INTERJECTIONS:
            check.fail('do', 'cannot send %s at a race point; known: %s'
                       % (errors.show(action),
                          ', '.join(names.INTERJECTIONS)))
        # Whether the server exists by then is checked once every step is
        # read (check_points).
        return (action, check.string(server, 'do.%s' % action))

    def label(self, args):
        for kind in DEATHS:
            if args.get(kind):
                return 'inject %s %s: %s %s' % (args['when'], args['point'],
                                                kind, args[kind])
        if args.get('do'):
            what = '%s %s' % args['do']
            if 'refused' in args:
                what += ' (refused)' if args['refused'] else ' (deleted)'
        elif args.get('check'):
            what = 'check %s' % ', '.join(args['check'])
        else:
            what = '%s on %s' % (args['run'], args['on'])
            if args.get('overlap'):
                what += ' overlapping the call from %s' % args['overlap']
        return 'inject %s %s: %s' % (args['when'], args['point'], what)

    lags = (base.COMPUTE_DIED, base.CLAIM_WAITING, base.COMPUTE_RESTARTED,
            base.DELETED_MID_MOVE)

    def windows(self, args, before, after, down):
        # Asked for the step a delete or a death was interjected in (see
        # the module docstring); the inject step itself changes nothing.
        if args and args.get('stop') and args['host'] in down:
            return (died_windows(args['host'], before, after)
                    + claim_windows(args['host'], before, after))
        if args and args.get('restart') and args.get('host'):
            return restarted_windows(args['host'], before, after)
        if not args or not args.get('do') or args['do'][0] != 'delete':
            return []
        flavor = args['flavors'].get(args.get('move_flavor'))
        return delete_step.interjected_windows(
            args['do'][1], flavor, before, after,
            moving=args.get('moving', ()))

    def run(self, cloud, args):
        injection = cloud.race.at(
            args['point'], when=args['when'], host=args.get('at_host'),
            server=args.get('server'), times=args['times'])
        for kind in DEATHS:
            if args.get(kind):
                # By role the host is the one the point names; the loader
                # counted on the one it worked out.
                return injection.stop(args[kind],
                                      restart=kind == 'restart',
                                      expect=args['host'],
                                      noted=args)
        if args.get('check'):
            return injection.call(_checking(cloud, args),
                                  'check %s' % ', '.join(args['check']))
        if args.get('do') and 'refused' in args:
            # The answer is noted in the args (host, answer).
            return injection.do(*args['do'], refused=args['refused'],
                                noted=args)
        if args.get('do') and args['do'][0] == 'delete':
            return _noting_moves(injection.do(*args['do']), args)
        if args.get('do'):
            return injection.do(*args['do'])
        if args.get('overlap'):
            return injection.overlap(args['run'], args['on'],
                                     args['overlap'])
        return injection.run(args['run'], host=args['on'])


def _parse_overlap(check, value, when, point, task):
    """``overlap: <moment>``: the periodic overlaps the point's call."""
    if task is None:
        check.fail('overlap', 'an overlap is a periodic\'s (run: %s, on: '
                   '<host or role>), not a request\'s' % names.RECONCILE)
    moment = check.string(value['overlap'], 'overlap')
    if moment not in names.OVERLAP_MOMENTS:
        check.fail('overlap', 'unknown moment %r of a periodic; known: %s'
                   % (moment, ', '.join(names.OVERLAP_MOMENTS)))
    if task != names.RECONCILE:
        check.fail('overlap', 'only %s reaches %s (run: %s)'
                   % (names.RECONCILE, moment, task))
    if when != 'before' or point not in names.TRACKER_POINTS:
        check.fail('overlap', 'the call that carries on is a tracker '
                   'method\'s: say "before: <point>" with one of %s (got '
                   '%s: %s)' % (', '.join(names.TRACKER_POINTS), when,
                                point))
    return moment


def _which_passes(check, value, scenario):
    """``times``, ``server`` and ``at_host``: which passes fire it."""
    times = value.get('times', 1)
    if times is not None:
        check.integer(times, 'times', minimum=1)
    if value.get('server') is not None:
        check.string(value['server'], 'server')
    if value.get('at_host') is not None:
        check.known(value['at_host'], scenario.hosts, 'at_host')
    return {'times': times, 'server': value.get('server'),
            'at_host': value.get('at_host')}


def _checking(cloud, args):
    """The action that checks ``args['check']`` at a passage.

    It reads the cloud as the parked operation left it (a snapshot only
    reads) and notes what differs for the step that passes the point.
    """
    from harness.core import expect as expect_mod
    scenario = types.SimpleNamespace(hosts=args['hosts'])

    def check_here(passage):
        snap = cloud.reader.read('at %s' % passage)
        cloud.race.found_at(passage, expect_mod.check(args['check'], snap,
                                                      scenario))
    return check_here


def _noting_moves(injection, args):
    """Note in ``args['moving']`` the hosts of the move the delete hit.

    At the point: the source and destination of the deleted server's
    migration in flight, and the compute that passes the point for it;
    ``delete.interjected_windows`` opens the destination's window there
    only (the migration record goes with the server, no snapshot after
    the step names it).
    """
    server = args['do'][1]
    args['moving'] = []
    send = injection.action

    def noting(passage):
        if passage.server == server:
            hosts = {passage.host}
            status, source, dest = (
                _field(passage.migration, name)
                for name in ('status', 'source_compute', 'dest_compute'))
            if status not in snapshot_mod.FINAL_STATUSES:
                hosts |= {source, dest}
            args['moving'] = sorted(host for host in hosts if host)
        return send(passage)

    injection.action = noting
    return injection


def _field(record, name):
    """A field of Nova's record at a point, None when not set (or none)."""
    is_set = getattr(record, 'obj_attr_is_set', None)
    if is_set is None or not is_set(name):
        return None
    return getattr(record, name)


def check_points(check, steps, kinds):
    """Refuse an injection at a point no later step can pass.

    ``check`` names the file; ``kinds`` maps a step kind to its unit.
    """
    for position, step in enumerate(steps):
        if step.kind != Inject.name:
            continue
        later = [s for s in steps[position + 1:] if s.kind != Inject.name]
        if step.args.get('do'):
            _check_do_target(check.at_step(step.index).field('inject'),
                             step, steps)
        point = step.args['point']
        passing = [other for other in later
                   if point in kinds[other.kind].points]
        if passing:
            if (step.args.get('do') and step.args['do'][0] == 'delete') \
                    or any(step.args.get(kind) for kind in DEATHS):
                _attach(step, passing[0])
            continue
        passable = set()
        for other in later:
            passable |= kinds[other.kind].points
        check.at_step(step.index).fail(step.args['when'], (
            'no later step passes race point %r (later steps: %s; the '
            'points they can pass: %s)' % (
                point, ', '.join(s.kind for s in later) or 'none',
                ', '.join(sorted(passable)) or 'none')))


def died_windows(host, before, after):
    """The windows of ``host``'s compute, dead in the middle of a step.

    Its record stays as its last save left it, while Placement changed
    for the step's work there (the scheduler's claim of a build it never
    recorded, a move's allocations it never got to): until it starts
    again (its start-up periodic), its tracker may count up to what each
    consumer gained on it during the step less (``below``), and what each
    lost more (``above``).
    """
    roots = snapshot_mod.host_roots(before).get(host, {host})
    gained, lost = {}, {}
    consumers = set(before.allocations) | set(after.allocations)
    for consumer in sorted(consumers):
        was = snapshot_mod.held_in(before, consumer, roots)
        now = snapshot_mod.held_in(after, consumer, roots)
        for rc in set(was) | set(now):
            change = now.get(rc, 0) - was.get(rc, 0)
            into = gained if change > 0 else lost
            into[rc] = into.get(rc, 0) + abs(change)
    why = ('compute %s died during the step: its record is its last '
           'save until it starts again' % host)
    return [base.Window(host, side, held, why, base.COMPUTE_DIED)
            for side, held in (('below', gained), ('above', lost))
            if any(held.values())]


class ClaimWindow(object):
    """``server`` may hold the scheduler's claim on ``host`` with no host.

    Nova's placement of a build or an unshelve is in two halves: the
    conductor has the scheduler claim the chosen host in Placement
    (``select_destinations``) and casts the work to that compute
    (``build_and_run_instance``, ``unshelve_instance``); only the
    compute's own claim (``instance_claim``) gives the server its host.
    A compute that dies between the two leaves the server waiting on no
    host, BUILD (or SHELVED_OFFLOADED, task ``unshelving``), while
    Placement holds the scheduler's claim in that host's tree: a state
    Nova's own code expects (the periodic's
    ``_remove_deleted_instances_allocations`` skips such a consumer, "the
    instance has yet to start") and resolves when that compute starts
    again: its queued cast goes on, or ``init_host``'s
    ``_error_out_instances_whose_build_was_interrupted`` puts a build it
    lost in ERROR. So the window lasts while the server is in that state
    and ``host``'s compute is down (``covers``, ``open_while``); any other
    place of its allocation, or that state once the host is running
    again, is not covered.
    """

    #: Why Nova lags here and what catches up (see the class docstring).
    lag = base.CLAIM_WAITING

    def __init__(self, server, host, why):
        self.server = server
        self.host = host
        self.why = why

    @staticmethod
    def covers(server):
        """Whether ``server`` (a snapshot's) still waits for its compute."""
        return server.host is None and (
            server.status == 'BUILD' or server.task_state == 'unshelving')

    def open_while(self, snap, down):
        """Whether the window stays open at ``snap``, ``down`` stopped."""
        server = snap.servers.get(self.server)
        return (self.host in down and server is not None
                and self.covers(server))


def claim_windows(host, before, after):
    """The ``ClaimWindow`` of each server the death on ``host`` left hostless.

    Only a server that held nothing before the step (the claim is this
    step's scheduling) and now holds allocations in ``host``'s tree and
    nowhere else.
    """
    roots = snapshot_mod.host_roots(after).get(host, {host})
    opened = []
    for name, server in sorted(after.servers.items()):
        held = after.allocations_of(name)
        if (not held or before.allocations_of(name)
                or not ClaimWindow.covers(server)):
            continue
        if {snapshot_mod.root(after, rp) for rp in held} <= set(roots):
            opened.append(ClaimWindow(name, host, (
                'compute %s died before it took the build or unshelve of '
                '%s: the scheduler\'s claim waits there until it starts '
                'again' % (host, name))))
    return opened


def restarted_windows(host, before, after):
    """The window of ``host``'s compute, restarted in the middle of a move.

    Its start-up periodic counted the move then in flight (the incoming
    or outgoing guest); when the move then fails or rolls back without
    telling the tracker, it keeps counting it until its next periodic: up
    to the most the moving server (or its migration) held on any host.
    """
    held = {}
    for consumer, migration in sorted(after.migrations.items()):
        if host not in (migration.source, migration.dest):
            continue
        most = {}
        for snap in (before, after):
            for roots in snapshot_mod.host_roots(snap).values():
                for holder in (migration.server, consumer):
                    for rc, amount in snapshot_mod.held_in(
                            snap, holder, roots).items():
                        most[rc] = max(most.get(rc, 0), amount)
        for rc, amount in most.items():
            held[rc] = held.get(rc, 0) + amount
    if not any(held.values()):
        return []
    return [base.Window(host, 'above', held, (
        'compute %s restarted during the step: its start-up periodic '
        'counted the move in flight, until its next periodic' % host),
        base.COMPUTE_RESTARTED)]


def _not_refusable(check):
    check.fail('refused', 'only a request for a host (do: {%s: <host>}) is '
               'refused or not' % ' | '.join(names.HOST_INTERJECTIONS))


def _parse_host_do(check, value, do, scenario, state):
    """``refused`` and the host of ``do: {delete_service: host | role}``.

    Returns ``refused``; counts the service deleted when it goes through.
    """
    action, who = do
    field = 'do.%s' % action
    if 'refused' not in value:
        check.fail('refused', 'say whether the API refuses the %s: '
                   '"refused: true" (409: the host has instances or '
                   'migrations in progress) or "refused: false"' % action)
    refused = value['refused']
    if not isinstance(refused, bool):
        check.fail('refused', 'true or false, not %s'
                   % errors.show(refused))
    if who in names.ROLES:
        if not refused:
            check.fail(field, 'a role names a host the move has in '
                       'progress, whose delete Nova refuses: name the '
                       'host whose service goes')
        return refused
    host = check.known(who, scenario.hosts, field)
    if host in state.service_deleted:
        check.fail(field, 'the compute service of %r was deleted' % host)
    if not refused:
        if value.get('times', 1) != 1:
            check.fail('times', 'a service is deleted once: times is 1, '
                       'not %s' % errors.show(value['times']))
        if host not in state.stopped:
            check.fail(field, 'compute %r is running; stop it first '
                       '(stop_compute): a running compute re-creates the '
                       'records the delete removes' % host)
        # As the delete_service step: a deleted service is neither
        # disabled nor forced down any more.
        state.service_deleted.add(host)
        state.disabled.discard(host)
        state.forced_down.discard(host)
    return refused


def _role_host(check, kind, role, server, scenario, state):
    """The host ``role`` names at the point, as far as the loader can tell.

    The loader tracks which computes are stopped, so it must know which
    one dies: the server's host where the scenario named it (a boot or an
    evacuate with ``host`` and no move since) is its ``source`` (and
    ``server_host``); the ``dest`` is the one other running compute.
    """
    if server is None:
        alive = sorted(name for name in state.servers
                       if name not in state.deleted)
        if len(alive) != 1:
            check.fail('server', 'say which server\'s %s %s: the scenario '
                       'has %s' % (role, kind, ', '.join(alive) or 'none'))
        server = alive[0]
    source = evacuate_step.known_host(scenario, server)
    if role in ('source', 'server_host'):
        host = source
    else:
        others = sorted(set(scenario.hosts) - {source} - state.stopped)
        host = others[0] if source is not None and len(others) == 1 \
            else None
    if host is None:
        check.fail(kind, 'cannot tell which compute %r is for %s here '
                   '(the loader tracks stopped computes): name the host'
                   % (role, server))
    return host


def _attach(inject, target):
    """Tie a delete to the step it lands in (its first passer)."""
    if not hasattr(target, 'interjected'):
        target.interjected = []
    target.interjected.append(inject)
    if target.kind == 'resize' and inject.args.get('do') and (
            target.args.get('server') == inject.args['do'][1]):
        # The new flavor bounds the delete's window only for the server
        # that is resized.
        inject.args['move_flavor'] = target.args.get('flavor')


def _check_do_target(check, step, steps):
    """A request's server must be booted in the scenario."""
    action, server = step.args['do']
    if action in names.HOST_INTERJECTIONS:
        return
    booted = {s.args.get('server') for s in steps if s.kind == 'boot'}
    if server not in booted:
        check.fail('do.%s' % action, 'no server %r is booted in this '
                   'scenario (booted: %s)' % (
                       server, ', '.join(sorted(b for b in booted if b))
                       or 'none'))


KIND = Inject()
