"""Race points: named moments of a move operation where a test acts.

The points a cloud passes, each ``before`` and ``after``:

- every RPC method a compute receives (``prep_resize``, ``resize_instance``,
  ``finish_resize``, ``confirm_resize``, ``live_migration``,
  ``post_live_migration_at_destination``, ...), on the receiving host;
- the compute manager's own steps that RPC does not show because they run
  in the source's executor: ``_do_live_migration``,
  ``_post_live_migration``, ``_rollback_live_migration``;
- the conductor's and scheduler's RPC methods (``conductor.migrate_server``,
  ``scheduler.select_destinations``) and the conductor's task boundaries
  (``conductor.MigrationTask``, ``conductor.LiveMigrationTask``, ...);
- state changes: ``instance.host`` (a save that moves the instance) and
  ``migration.status=<new status>`` (e.g. ``migration.status=finished``),
  on the host whose code saves them;
- the resource tracker's methods that a move calls at the edge of its
  lock (``names.TRACKER_STEPS``), as ``tracker.<method>`` (e.g.
  ``tracker.drop_move_claim_at_dest``, revert_resize's drop of the
  destination's claim), on the tracker's host: ``before`` is passed
  before the method takes the tracker's lock and ``after`` once it freed
  it, so a periodic injected there runs at once, never deferred;
- a multi-node compute's driver asked whether a node it no longer lists
  was deleted (``is_node_deleted``, in ``update_available_resource``,
  between its read of the host's compute nodes and its delete of an
  orphan; ``harness.cloud.nodes``), on that host.

A test injects an action at a point::

    cloud.race.at('finish_resize', when='before').run(
        'update_available_resource', host='source')

Hosts may be named by role: ``source`` and ``dest`` are read from the
migration in flight for the server the point concerns, ``server_host``
from the server's record as the point saw it (the host of a rebuild, or
of an unshelve once claimed). A role that names a compute not running
(an evacuation's source) cannot take a periodic. An injection fires
once, at the first matching pass, unless ``times`` says otherwise
(``times=None``: every time). While an injected action runs, no other
injection fires and nothing is recorded: the point list stays the list of
what the operation itself did. A periodic injected at a point inside the
resource tracker's lock (a claim's ``migration.status=pre-migrating``,
confirm's ``migration.status=confirmed``) waits for that lock, as a real
periodic would, and runs the moment the code releases it, before that code
goes on: the same moment in every run.

An injection may also kill a compute at the point (``.stop(host)``, or
restart it: ``.stop(host, restart=True)``; see ``harness.cloud.dying``):
the work the compute had there ends with ``dying.ComputeDied``, which the
wrappers here stop at the compute's RPC handler (a call's caller gets
``MessagingTimeout``, as from a compute that never answers) or executor
step, where a restart then starts the compute again.

``cloud.race.recording`` lists every point passed, in order, with its host
and server; the race explorer replays scenarios from it.
"""

import contextlib
import dataclasses
import threading
import typing

import fixtures
from oslo_concurrency import lockutils

from nova.compute import resource_tracker
from nova.conductor.tasks import base as conductor_tasks
from nova import context as nova_context
from nova import objects

from harness.cloud import activity
from harness.cloud import dying
from harness.core import errors
from harness.core import hooks
from harness.core import names

WHEN = ('before', 'after')
# Roles read from the migration in flight, and the one read from the
# server itself (its host as the point saw it: a rebuild's or unshelve's
# compute, which no migration names).
ROLES = {'source': 'source_compute', 'dest': 'dest_compute',
         'destination': 'dest_compute'}
SERVER_HOST = 'server_host'

# Compute manager steps that run in the source's executor, out of RPC's
# sight, but bound the windows that matter for live migration.
COMPUTE_STEPS = ('_do_live_migration', '_post_live_migration',
                 '_rollback_live_migration')
# The resource tracker's lock; a periodic cannot start inside it.
RT_LOCK = 'compute_resources'


@dataclasses.dataclass
class Passage(object):
    """One pass through a point."""
    point: str
    when: str
    host: typing.Optional[str]
    server: typing.Optional[str]
    # The migration in flight for the server, for hosts named by role.
    migration: typing.Any = dataclasses.field(
        default=None, repr=False, compare=False)
    # Nova's write count when the point was passed (Activity.version).
    version: int = dataclasses.field(default=0, repr=False, compare=False)
    # Whether an injected periodic here had to wait for the tracker's lock,
    # and the (task, host) runs done once it was released.
    deferred: bool = dataclasses.field(default=False, repr=False,
                                       compare=False)
    deferred_runs: list = dataclasses.field(default_factory=list, repr=False,
                                            compare=False)
    # The (task, host) periodics an injection ran here, at once or once
    # the lock was released (``harness.runners.healed`` reads them).
    runs: list = dataclasses.field(default_factory=list, repr=False,
                                   compare=False)
    # How many points had been recorded when they ran (so the next point
    # the operation passed is recording[deferred_at]).
    deferred_at: typing.Optional[int] = dataclasses.field(
        default=None, repr=False, compare=False)
    # The host of the server the point concerns, as its record said then
    # (the ``server_host`` role), when the point had the instance.
    server_host: typing.Optional[str] = dataclasses.field(
        default=None, repr=False, compare=False)
    # The roles (source, dest, server_host) that named a host here, when
    # noted (see noting_roles); None when not.
    roles: typing.Optional[tuple] = dataclasses.field(
        default=None, repr=False, compare=False)

    def __str__(self):
        return '%s %s on %s%s' % (
            self.when, self.point, self.host or '-',
            ' (%s)' % self.server if self.server else '')


class Injection(object):
    """An action waiting at a point; made by ``RacePoints.at``."""

    def __init__(self, points, point, when, host, server, times):
        self._points = points
        self.point = point
        self.when = when
        self.host = host
        self.server = server
        self.remaining = times
        self.action = None
        self.description = None
        self.fired = []
        # The calls an overlap carried on (``Held``), in firing order.
        self.carried = []

    def run(self, task, host):
        """At the point, run periodic ``task`` on ``host`` (or a role)."""
        self.action = lambda where: self._points.run_task(task, host, where)
        self.description = '%s on %s' % (task, host)
        self._points.add(self)
        return self

    def overlap(self, task, host, moment):
        """At a tracker point, run ``task`` overlapping the held call.

        The point's call (a tracker method: ``tracker.<method>``,
        ``before``) carries on in a thread of its own, started when the
        periodic ``task`` on ``host`` (or a role) reaches ``moment``
        (``names.OVERLAP_MOMENTS``): it runs there and then until it ends
        or waits for a lock (the tracker's, which the periodic holds),
        and the periodic goes on; the operation goes on once the call
        has ended. A periodic that never reaches ``moment`` fails the
        injection (the call then runs as it would have).
        """
        points = self._points
        if moment not in names.OVERLAP_MOMENTS:
            raise errors.HarnessError(
                'no moment %r of a periodic; known: %s' % (
                    moment, ', '.join(names.OVERLAP_MOMENTS)))

        def overlapping(passage):
            held = getattr(passage, 'held', None)
            if held is None or passage.when != 'before':
                raise errors.HarnessError(
                    '%s holds no call to overlap (before a tracker.<...> '
                    'point)' % passage)
            target = points.resolve_host(host, passage)
            self.carried.append(held)
            hook = (moment, target,
                    lambda: held.carry_on(points._cloud))
            points._moments.append(hook)
            try:
                points._cloud.clock.run(task, target, wait=False)
            finally:
                missed = hook in points._moments
                if missed:
                    points._moments.remove(hook)
            if missed:
                raise errors.HarnessError('%s on %s never reached %s' % (
                    task, target, moment))

        self.action = overlapping
        self.description = '%s on %s overlapping the call from %s' % (
            task, host, moment)
        self._points.add(self)
        return self

    def stop(self, host, restart=False, expect=None, noted=None):
        """At the point, nova-compute on ``host`` (or a role) dies.

        With ``restart`` it starts again at once (``harness.cloud.dying``).
        ``expect``: the host a role must name there (the one a scenario's
        loader counted as stopped); ``noted``: a mapping whose ``host`` is
        set to the host the role named.
        """
        points = self._points

        def die(passage):
            target = points.resolve_host(host, passage)
            if expect is not None and target != expect:
                raise errors.HarnessError(
                    '%s names %s at %s, not %s as the scenario expects'
                    % (host, target, passage, expect))
            if restart and dying.in_work_of(target) and \
                    target not in points.handling():
                raise errors.HarnessError(
                    'cannot restart %s at %s: the point is passed in a '
                    'thread of its own, whose end no handler sees'
                    % (target, passage))
            if noted is not None:
                noted['host'] = target
            dying.die(points._cloud, target, restart=restart)
        self.action = die
        self.description = '%s %s' % ('restart' if restart else 'stop',
                                      host)
        self._points.add(self)
        return self

    def do(self, action, server, **options):
        """At the point, send the API request ``action`` for ``server``.

        ``action`` is one of ``names.INTERJECTIONS`` (see
        ``harness.cloud.interject``, which takes ``options``: a host's
        request's ``refused`` and ``noted``).
        """
        from harness.cloud import interject
        return self.call(interject.action(self._points._cloud, action,
                                          server, **options))

    def call(self, func, description=None):
        """At the point, call ``func(passage)``.

        If that returns a callable, it is called too, with no argument,
        once every injection at the point has run (and points are
        recorded again).
        """
        self.action = func
        self.description = description or getattr(func, '__name__', 'call')
        self._points.add(self)
        return self

    def matches(self, passage):
        return (self.remaining is None or self.remaining > 0) and matches(
            passage, self.point, self.when, self.host, self.server)

    @property
    def subject(self):
        return '%s %s' % (self.when, self.point)

    @property
    def never(self):
        return 'the run never passed %s' % self.subject

    def __str__(self):
        return '%s %s: %s' % (self.when, self.point, self.description)


def matches(passage, point, when, host=None, server=None):
    """Whether an injection at ``point`` would fire at ``passage``.

    ``when`` it is passed, narrowed to ``host`` and ``server`` if given;
    how many times it may fire aside.
    """
    return (passage.point == point and passage.when == when
            and (host is None or host == passage.host)
            and (server is None or server == passage.server))


class RacePoints(fixtures.Fixture):
    """Record and act at race points; see the module docstring."""

    def __init__(self, cloud):
        super().__init__()
        self._cloud = cloud

    def _setUp(self):
        self.reset()
        self._cloud.activity.add_listener(self._saved)
        self._hook_tracker_lock()
        real_execute = conductor_tasks.TaskBase.execute
        points = self

        def execute(task):
            name = 'conductor.%s' % type(task).__name__
            instance = getattr(task, 'instance', None)
            migration = getattr(task, 'migration', None)
            points.fire(name, 'before', None, instance, migration)
            result = real_execute(task)
            points.fire(name, 'after', None, instance, migration)
            return result

        self.useFixture(fixtures.MonkeyPatch(
            'nova.conductor.tasks.base.TaskBase.execute', execute))
        self._wrap_migrations_read()
        # The tracker's methods are wrapped when the first compute starts
        # (attach): after the fixtures a run sets up before its computes.
        self._trackers_wrapped = False

    def _wrap_trackers(self):
        """Pass ``tracker.<step>`` around each of ResourceTracker's steps.

        On the class, not on each compute's tracker (a kept cloud and a
        checkpoint put new tracker objects in place: harness.cloud.reuse,
        checkpoint), and once the first compute starts: around what the
        class has then, a bug's reintroduction included (set up before the
        computes: harness.cloud.reuse.start_services), so the points and
        the call an injection holds there are its code's. Put back at
        the end only if still in place (the reintroduction's own clean-up,
        earlier, puts Nova's method back).
        """
        if self._trackers_wrapped:
            return
        self._trackers_wrapped = True
        cls = resource_tracker.ResourceTracker
        for step in names.TRACKER_STEPS:
            found = vars(cls)[step]
            wrapped = self._tracker_step(found, step)
            setattr(cls, step, wrapped)
            self.addCleanup(_put_back, cls, step, wrapped, found)

    def _tracker_step(self, real, step):
        point = 'tracker.' + step
        points = self

        def wrapped(tracker, *args, **kwargs):
            instance, migration = _subjects(args, kwargs)
            passage = points.fire(point, 'before', tracker.host, instance,
                                  migration, call=lambda: real(
                                      tracker, *args, **kwargs))
            held = vars(passage).pop('held', None) if passage else None
            if held is not None and held.tasks is not None:
                # Carried on in a thread of its own (Injection.overlap).
                result = held.outcome(points._cloud)
            else:
                result = real(tracker, *args, **kwargs)
            points.fire(point, 'after', tracker.host, instance, migration)
            return result

        wrapped.__name__ = step
        return wrapped

    def _wrap_migrations_read(self):
        """Call the moment hooks of ``instances_read`` on their host.

        update_available_resource reads the node's instances, then its
        migrations in progress (ResourceTracker._update_available_resource:
        MigrationList.get_in_progress_and_error, called by nothing else),
        under the tracker's lock: an injection's held call may carry on
        between the two (``Injection.overlap``).
        """
        real = objects.MigrationList.get_in_progress_and_error
        points = self

        # A classmethod still (fixtures.MonkeyPatch keeps the kind).
        def get_in_progress_and_error(cls, context, host, node):
            due = [hook for hook in points._moments
                   if hook[:2] == (names.INSTANCES_READ, host)]
            for hook in due:
                points._moments.remove(hook)
                hook[2]()
            return real(context, host, node)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.migration.MigrationList.get_in_progress_and_error',
            get_in_progress_and_error))

    # -- wiring services ---------------------------------------------------

    def attach(self, service, host=None):
        """Put the points of ``service`` (a started Nova service) in place.

        ``host`` names a compute; controllers' points carry their binary
        (``conductor.migrate_server``).
        """
        prefix = '' if host else '%s.' % service.binary.split('-', 1)[-1]
        endpoints = service.rpcserver.dispatcher.endpoints
        # Nova 34 registers its manager's endpoints in a tracking wrapper
        # (``_endpoint``); older releases register them as they are.
        managers = [service.manager] + list(
            getattr(service.manager, 'additional_endpoints', []))
        for index, endpoint in enumerate(endpoints):
            if (getattr(endpoint, '_endpoint', None) is not None
                    or any(endpoint is m for m in managers)):
                endpoints[index] = _PointsEndpoint(
                    endpoint, self, prefix, host)
        if host:
            self._wrap_trackers()
            manager = service.manager
            for step in COMPUTE_STEPS:
                setattr(manager, step, self._wrap(
                    getattr(manager, step), step, host))
                self.addCleanup(_forget, manager, step)

    def _wrap(self, method, point, host):
        points = self

        def wrapped(*args, **kwargs):
            instance, migration = _subjects(args, kwargs)
            with activity.acting_as(host), points._handling(host):
                try:
                    points.fire(point, 'before', host, instance, migration)
                    result = method(*args, **kwargs)
                    points.fire(point, 'after', host, instance, migration)
                except dying.ComputeDied as died:
                    if died.host != host:
                        raise
                    # The step's executor task ends with its compute.
                    dying.ended(points._cloud, died, call=False)
                    return None
            return result

        wrapped.__name__ = point
        return wrapped

    # -- injections --------------------------------------------------------

    def at(self, point, when='before', host=None, server=None, times=1):
        """An injection at ``point``; finish it with ``.run`` or ``.call``.

        ``host`` and ``server`` narrow which passes match; ``times`` is how
        many matching passes fire it (``None``: all).
        """
        if when not in WHEN:
            raise errors.HarnessError(
                "'when' is 'before' or 'after', not %r" % (when,))
        return Injection(self, point, when, host, server, times)

    def add(self, injection):
        self.injections.append(injection)

    def found_at(self, passage, problems):
        """Note what a check made at ``passage`` found."""
        self.found += [dataclasses.replace(
            problem, subject='%s (%s)' % (problem.subject, passage),
            text='at %s: %s' % (passage, problem)) for problem in problems]

    def take_found(self):
        """What checks at points found since the last call."""
        found, self.found = self.found, []
        return found

    def clear(self):
        self.injections = []

    def reset(self):
        """Forget what was recorded and injected, as a new cloud would."""
        self.recording = []
        self.injections = []
        self.failures = []
        # What checks made at points found (``found_at``): Problem records,
        # for the step that passed the point to report.
        self.found = []
        self.record = True
        # Told of each passage recorded, before the injections it matches
        # are looked for (the explorer forks its replays there: ``fire``).
        self.on_passage = None
        # Per greenthread: an injected action neither records nor fires
        # the points it passes itself; another greenthread meanwhile (a
        # delete's terminate_instance, cast from the action) does, the
        # same way whenever the hub gets to it.
        self._local = threading.local()
        self._deferred = []
        # (moment, host, callback): what runs when a periodic on that
        # host reaches that moment (Injection.overlap).
        self._moments = []

    @contextlib.contextmanager
    def _handling(self, host):
        """While a wrapper of ``host``'s RPC handler or step runs here."""
        hosts = getattr(self._local, 'handling', ())
        self._local.handling = hosts + (host,)
        try:
            yield
        finally:
            self._local.handling = hosts

    def handling(self):
        """Hosts whose handler (or executor step) runs in this thread."""
        return getattr(self._local, 'handling', ())

    @property
    def _injecting(self):
        return getattr(self._local, 'injecting', False)

    @_injecting.setter
    def _injecting(self, value):
        self._local.injecting = value

    def state(self):
        """What ``set_state`` puts back (for ``Cloud.trial``)."""
        return (list(self.recording), list(self.injections),
                list(self.failures), self.record, self._injecting,
                list(self._deferred))

    def set_state(self, state):
        (recording, injections, failures, self.record, self._injecting,
         deferred) = state
        self.recording = list(recording)
        self.injections = list(injections)
        self.failures = list(failures)
        self._deferred = list(deferred)

    def _hook_tracker_lock(self):
        """Run deferred periodics the moment the tracker's lock is freed.

        In the greenthread that releases it, before that code goes on: a
        greenthread of their own would wait for the lock and then run
        whenever eventlet's hub got to it, which depends on when the
        libvirt driver's calls through eventlet's thread pool return (wall
        time): the same scenario then lost pinned CPUs in some runs and
        not in others.
        """
        # Held for the cloud's life: oslo keeps named locks only while
        # someone holds them, and Nova must take this same one.
        self._rt_lock = lock = lockutils.internal_fair_lock(RT_LOCK)
        real_release = lock._release_write_lock
        points = self

        def release_write_lock(me):
            real_release(me)
            while points._deferred:
                points._deferred.pop(0)()

        # Another cloud alive in this process may have hooked it already:
        # clean-up puts back exactly what was there.
        previous = vars(lock).get('_release_write_lock')
        lock._release_write_lock = release_write_lock
        if previous is None:
            self.addCleanup(vars(lock).pop, '_release_write_lock', None)
        else:
            self.addCleanup(setattr, lock, '_release_write_lock', previous)

    def run_task(self, task, host, passage):
        """Run a periodic for an injection, host named or by role.

        At a point inside the resource tracker's lock (a periodic needs
        that lock), the periodic waits for the lock, as a real periodic
        would: it runs as soon as the code at the point releases it, in the
        releasing greenthread, before that code goes on (so before the
        operation's next RPC), the same way every run.
        """
        target = self.resolve_host(host, passage)
        if self._rt_lock.is_writer(check_pending=False):
            passage.deferred = True
            points = self

            def run_when_released():
                # As for any injected action: no injection fires and
                # nothing is recorded in this greenthread while it runs.
                points._injecting = True
                passage.deferred_at = len(points.recording)
                try:
                    points._cloud.clock.run(task, target, wait=False)
                    passage.deferred_runs.append((task, target))
                    passage.runs.append((task, target))
                except Exception as exc:
                    points.failures.append(
                        ('%s on %s' % (task, target), passage, exc))
                finally:
                    points._injecting = False

            self._deferred.append(run_when_released)
            return
        self._cloud.clock.run(task, target, wait=False)
        passage.runs.append((task, target))

    def resolve_host(self, host, passage):
        if host == SERVER_HOST:
            found = passage.server_host
            if found is None:
                raise errors.HarnessError(
                    'host %r at %s: the server is on no host yet'
                    % (host, passage))
            return self._running(host, passage, found)
        if host not in ROLES:
            return host
        return self._running(host, passage,
                             self._migration_host(host, passage))

    def _running(self, role, passage, found):
        # A periodic runs only on a running compute (an evacuation's
        # source is down).
        if found not in self._cloud.computes:
            raise errors.HarnessError(
                'host %r at %s: compute %s is not running'
                % (role, passage, found))
        return found

    def _migration_host(self, host, passage):
        migration = passage.migration
        if migration is None:
            raise errors.HarnessError(
                'host %r at %s: no migration is in flight for %s'
                % (host, passage, passage.server or 'this point'))
        found = getattr(migration, ROLES[host])
        if found is None and ROLES[host] == 'dest_compute' and (
                passage.host not in (None, migration.source_compute)):
            # Nova records the destination on the migration only in the
            # destination's prep_resize; before that, a compute other than
            # the source that receives the move is the destination.
            found = passage.host
        if found is None:
            raise errors.HarnessError(
                'host %r at %s: the migration in flight names no %s yet'
                % (host, passage, ROLES[host]))
        return found

    # -- passing points ----------------------------------------------------

    def fire(self, point, when, host, instance=None, migration=None,
             call=None):
        """Pass a point: record it, then run the injections it matches.

        ``call``: the call the operation makes there (a tracker point's),
        which an injection may carry on elsewhere (``Injection.overlap``).
        Returns the passage (None while an injected action runs).
        """
        if self._injecting:
            return None
        server = None
        if instance is not None:
            server = self._cloud.servers.names().get(instance.uuid)
        passage = Passage(point, when, host, server,
                          version=self._cloud.activity.version)
        if call is not None:
            # Not a field: no record keeps it (a call of this run), and it
            # goes once the point is passed (the tracker step's wrapper).
            passage.held = Held(call, host)
        if instance is not None and getattr(
                instance, 'obj_attr_is_set', lambda f: False)('host'):
            passage.server_host = instance.host
        if self.record:
            self.recording.append(passage)
            hooks.notify('point_passed', passage)
            if self.on_passage is not None:
                # May arm injections that fire at this very passage.
                self.on_passage(passage)
        noting = self.record and _NOTING_ROLES
        due = [inj for inj in self.injections if inj.matches(passage)]
        if due or noting:
            # Read once, for the roles noted and the injections alike.
            passage.migration = migration or _latest_migration(instance)
        if noting:
            passage.roles = self._roles(passage)
        if not due:
            return passage
        self._injecting = True
        # What the actions want done once no injection runs any more
        # (interject: wait until a request's threads are parked).
        afterwards = []
        try:
            for injection in due:
                if injection.remaining is not None:
                    injection.remaining -= 1
                injection.fired.append(passage)
                try:
                    then = injection.action(passage)
                except Exception as exc:
                    # Raised here it would land inside Nova's own error
                    # handling; keep it for check() to report instead.
                    self.failures.append((injection, passage, exc))
                    continue
                if callable(then):
                    afterwards.append((injection, then))
        finally:
            self._injecting = False
        for injection, then in afterwards:
            try:
                then()
            except Exception as exc:
                self.failures.append((injection, passage, exc))
        return passage

    def _roles(self, passage):
        named = []
        for role in ('source', 'dest', SERVER_HOST):
            try:
                self.resolve_host(role, passage)
            except errors.HarnessError:
                continue
            named.append(role)
        return tuple(named)

    def check(self):
        """Raise if an injected action failed since the last check.

        ``interject.AnsweredOtherwise`` if each failure is one (the
        request ran and Nova answered other than the scenario said), else
        ``InjectionFailed`` (an action that could not run).
        """
        if self.failures:
            from harness.cloud import interject
            failures, self.failures = self.failures, []
            kind = errors.InjectionFailed
            if all(isinstance(exc, interject.AnsweredOtherwise)
                   for _, _, exc in failures):
                kind = interject.AnsweredOtherwise
            raise kind('\n'.join(
                'injection "%s" failed %s: %s' % (injection, passage, exc)
                for injection, passage, exc in failures))

    def _saved(self, obj, method, when, changes):
        if method != 'save':
            return
        host = activity.acting_host()
        if isinstance(obj, objects.Instance) and 'host' in changes:
            self.fire('instance.host', when, host, obj)
        elif isinstance(obj, objects.Migration) and 'status' in changes:
            instance = _MigrationSubject(obj.instance_uuid)
            self.fire('migration.status=%s' % obj.status, when, host,
                      instance, obj)

    def passed(self, when=None):
        """The recorded points as strings, for reports and tests."""
        return [str(p) for p in self.recording
                if when is None or p.when == when]


class Held(object):
    """The call an operation makes at a point, maybe carried on elsewhere.

    ``carry_on`` runs it in a thread of its own, one of Nova's executor's
    (so the cloud's waits count it), acting as ``host``, until it ends or
    waits for a lock; the operation then takes its ``outcome`` (waiting
    for it to end) instead of making the call itself.
    """

    def __init__(self, call, host):
        self.call = call
        self.host = host
        self.tasks = None
        self.result = None
        self.error = None

    def carry_on(self, cloud):
        def held_call():
            try:
                self.result = self.call()
            except BaseException as exc:
                # Raised where the operation made the call (outcome).
                self.error = exc

        with activity.acting_as(self.host):
            with cloud.activity.spawned(park=cloud.timeout) as tasks:
                activity.thread_pool_factory.spawn(held_call)
        self.tasks = tasks

    def outcome(self, cloud):
        cloud.activity.wait_done(self.tasks, cloud.timeout,
                                 lambda: 'a call carried on at a point')
        if self.error is not None:
            raise self.error
        return self.result


class _PointsEndpoint(object):
    """An RPC endpoint that passes a point before and after each method.

    Wraps the endpoint Nova's service registered (its own tracking
    wrapper), so Nova's task tracking and decorators all still run.
    """

    def __init__(self, endpoint, points, prefix, host):
        self._endpoint = endpoint
        self._points = points
        self._prefix = prefix
        self._host = host

    def __getattr__(self, name):
        attr = getattr(self._endpoint, name)
        if name.startswith('_') or not callable(attr) or name == 'target':
            return attr
        points = self._points
        point = self._prefix + name
        host = self._host

        def passed(ctxt, *args, **kwargs):
            instance, migration = _subjects((ctxt,) + args, kwargs)
            with activity.acting_as(host), points._handling(host):
                try:
                    points.fire(point, 'before', host, instance, migration)
                    result = attr(ctxt, *args, **kwargs)
                    points.fire(point, 'after', host, instance, migration)
                except dying.ComputeDied as died:
                    if died.host != host:
                        raise
                    # The handler dies with its compute: no reply.
                    dying.ended(points._cloud, died)
            return result

        return passed


class _MigrationSubject(object):
    """Stands for the instance of a migration at a status point."""

    def __init__(self, uuid):
        self.uuid = uuid


def _subjects(args, kwargs):
    """The instance and migration a call is about, if it names them."""
    instance = kwargs.get('instance')
    migration = kwargs.get('migration')
    for arg in args:
        if instance is None and isinstance(arg, objects.Instance):
            instance = arg
        if migration is None and isinstance(arg, objects.Migration):
            migration = arg
    return instance, migration


# Whether every point passed notes the roles that name a host there.
_NOTING_ROLES = False


@contextlib.contextmanager
def noting_roles():
    """While in effect, each recorded passage notes its ``roles``.

    Which of ``source`` and ``dest`` an injection there could run on, as
    an injection resolves them (from the migration in flight then); the
    race explorer leaves out the interleavings that could not run. Off by
    default: it reads the migration at every point (the points passed stay
    the same: ``tests/functional/test_explorer.py``).
    """
    global _NOTING_ROLES
    _NOTING_ROLES = True
    try:
        yield
    finally:
        _NOTING_ROLES = False


def _latest_migration(instance):
    if instance is None:
        return None
    ctxt = nova_context.get_admin_context()
    found = objects.MigrationList.get_by_filters(
        ctxt, {'instance_uuid': instance.uuid})
    return max(found, key=lambda m: m.id) if found else None


def _forget(obj, name):
    obj.__dict__.pop(name, None)


def _put_back(cls, name, wrapped, found):
    """Put ``found`` back as ``cls.name`` if ``wrapped`` is still there."""
    if vars(cls).get(name) is wrapped:
        setattr(cls, name, found)
