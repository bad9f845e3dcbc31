"""Follow the work Nova has in flight, so that waits need no polling.

The cloud runs RPC casts as calls (``nova_env.CastsWaited`` over Nova's
``CastAsCallFixture``), so an API request returns only when every RPC
chain it started has returned. What can
still be running afterwards is work Nova handed to its executors (the build
of a server, a live migration). ``Activity`` counts those tasks as they are
submitted and finished, so a wait is one condition variable, woken by
Nova itself. It also observes saves of instances, migrations and compute
nodes, and Placement writes, for race points and the explorer.

And it knows which request waits for one of Nova's locks held by another
(oslo.concurrency's ``lockutils``: the instance lock, a plain one, and the
resource tracker's ``compute_resources``, a fair one): ``spawned()``
collects the tasks a block starts and ``wait_parked`` waits until each has
finished or the request it serves waits for such a lock (in whichever
greenthread: an RPC handler serves its caller's request). A request sent
from inside another operation (an ``inject: do``) thus runs as far as it
can before that operation goes on: the same interleaving every run.
"""

# The process's mode first (eventlet's patching, if so): the thread-local
# "acting host" below must be made from patched threading, or every
# greenthread shares one.
from harness.cloud import mode  # noqa: I100

import contextlib  # noqa: E402
import itertools  # noqa: E402
import threading  # noqa: E402

import fixtures  # noqa: E402
from oslo_concurrency import lockutils  # noqa: E402
from oslo_context import context as oslo_context  # noqa: E402

from nova import objects  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from harness.cloud import databases  # noqa: E402,H306
from harness.cloud import install  # noqa: E402

if mode.EVENTLET:
    from eventlet import tpool  # noqa: E402
else:
    # Native threading: Nova calls libvirt directly (utils.tpool_wrap
    # wraps nothing) and nothing may import eventlet.
    tpool = None

# Nova 34's nova.thread_pool_factory; nova.utils before.
thread_pool_factory = install.nova_spawn_module()

from harness.core import errors  # noqa: E402

# eventlet's own, before a cloud counts its calls (Nova may hold either).
_TPOOL_EXECUTE = tpool.execute if tpool is not None else None

# Which service's code the current (green)thread runs, by host name; set
# where the harness hands work to a service (RPC dispatch, periodic runs)
# and carried into the executor tasks that work spawns.
_acting = threading.local()


def acting_host():
    """The host whose service runs the current code, or None."""
    return getattr(_acting, 'host', None)


def current_chain():
    """The chain of work the current thread runs (see ``Activity``)."""
    return getattr(_acting, 'chain', None)


@contextlib.contextmanager
def in_chain(chain):
    """Run the block as part of ``chain``."""
    previous = current_chain()
    _acting.chain = chain
    try:
        yield
    finally:
        _acting.chain = previous


@contextlib.contextmanager
def acting_as(host):
    previous = acting_host()
    _acting.host = host
    try:
        yield
    finally:
        _acting.host = previous


# Long-lived loops that Nova starts through its executors and that never
# finish while a service runs (libvirt's event threads).
SERVICE_LOOPS = frozenset(['_dispatch_thread', '_conn_event_thread'])


def _request_id():
    """The request the current (green)thread serves, if any."""
    return getattr(oslo_context.get_current(), 'request_id', None)


class Task(object):
    """One executor task: its name, the request it serves, whether done.

    The work of a task may go on in other greenthreads: an RPC call it
    makes is handled in the receiving service's, under the same request
    (the request ID travels with the RPC context).
    """

    def __init__(self, name, request_id):
        self.name = name
        self.request_id = request_id
        self.done = False
        # Threading mode: whether a worker has taken it (a task queued
        # behind a full executor has not), and that executor.
        self.started = False
        self.executor = None
        # How many turns it has had.
        self.turns = 0

    def __str__(self):
        return '%s (%s)' % (self.name, 'done' if self.done else 'running')


class _Turn(object):
    """A chain's place in line (its number) and what it waits for."""

    __slots__ = ('number', 'ready')

    def __init__(self, number, ready):
        self.number = number
        self.ready = ready


class _WatchedLock(object):
    """A lockutils semaphore that says when its taker has to wait."""

    def __init__(self, lock, name, activity):
        self._lock = lock
        self._name = name
        self._activity = activity

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            waiter = object()
            self._activity._waiting(waiter, self._name)
            try:
                self._lock.acquire()
            except BaseException:
                self._activity._waiting(waiter, None)
                raise
            self._activity._took(waiter)
        return self._lock

    def __exit__(self, *exc_info):
        waiting = self._activity.waiting_for(self._name)
        self._lock.release()
        self._activity._released(self._name, waiting)

    def __getattr__(self, name):
        return getattr(self._lock, name)

    def __deepcopy__(self, memo):
        # Before Nova 33 a ProviderTree is deep-copied with its lock (from
        # 33 on its __getstate__ leaves the lock out); a named lock is one
        # per process anyway, and this one holds the whole activity.
        return self


def _fair_lock_busy(lock):
    """Whether taking this fasteners ReaderWriterLock's write side waits.

    It does unless the caller holds it already (re-entry) or nobody holds
    it or queues for it (its writers are served in order).
    """
    if lock.is_writer(check_pending=False):
        return False
    return lock.owner is not None or lock.has_pending_writers


class Activity(fixtures.Fixture):
    """Count Nova's executor tasks and watch instance and migration saves.

    Under native threading it also keeps Nova's threads from running at
    once. Work runs in chains: the test's own (``main``: API requests,
    periodics the clock fires) and one per executor task; an RPC call's
    handler, and work a chain hands to a thread and waits for, belong to
    the caller's chain. A chain is parked when it is done, waits for one
    of Nova's locks, waits for another chain (a harness wait, a future),
    or is a task queued behind a full executor. A spawner goes on once its
    new task is parked; the releaser of a lock another chain waits for
    goes on once every other chain is parked again. So between two points
    where a chain waits, it runs alone, as a greenthread does between two
    switches under eventlet, and a run is the same every time.

    :param timeout: how long a chain may run before the one waiting for
        it to park goes on anyway (and ``unparked`` says so).
    """

    def __init__(self, timeout=60.0):
        super().__init__()
        self.timeout = timeout

    def _setUp(self):
        self._cond = threading.Condition()
        # The test's own chain of work (it runs the API requests and the
        # periodics the clock fires), and its thread.
        self.main = Task('main', None)
        self._main_thread = threading.current_thread()
        # Threading mode: the chains in line for a turn, numbered in the
        # order they got in line.
        self._turns = {}
        self._numbers = itertools.count()
        # Executor -> how many of its tasks have started and not ended.
        self._busy = {}
        self._pending = {}
        self._listeners = []
        # While ``spawned()`` collects: the tasks started meanwhile, and
        # how long each may take to park (None: not waited for).
        self._collecting = None
        self._parking = None
        # Timeouts of tasks that never parked while spawned (see spawn_on).
        self.unparked = []
        # Casts whose call had no reply in time, their handler left
        # running (``nova_env.CastsWaited``): raised by the next wait_idle,
        # in either mode.
        self.unanswered = []
        # Who waits for a held lock now: token -> (lock, request ID).
        self._lock_waits = {}
        self.saves = 0
        real_spawn_on = getattr(thread_pool_factory, 'spawn_on', None)

        def spawn_on(executor_type, func, *args, **kwargs):
            host = acting_host()
            name = getattr(func, '__name__', repr(func))
            task = Task(name, _request_id())
            if mode.THREADING:
                task.executor = thread_pool_factory.get_executor(
                    executor_type)

            def run_as_spawner(*a, **k):
                if mode.THREADING:
                    with self._cond:
                        task.started = True
                        self._busy[task.executor] = (
                            self._busy.get(task.executor, 0) + 1)
                        self._cond.notify_all()
                    # Its turn comes once every chain before it waits.
                    self.await_turn(task, 'start %s' % task.name)
                with acting_as(host), in_chain(task):
                    return func(*a, **k)

            if mode.THREADING:
                # In line for its turn from the moment it is spawned: the
                # spawner goes on until it waits, as under eventlet.
                self.park(task, lambda: task.started)
            future = real_spawn_on(executor_type, run_as_spawner,
                                   *args, **kwargs)
            parking = self._started(future, task)
            if name not in SERVICE_LOOPS:
                future.add_done_callback(self._finished)
            self._park(task, parking)
            return future

        if hasattr(thread_pool_factory, 'spawn_on'):
            self.useFixture(fixtures.MonkeyPatch(
                thread_pool_factory.__name__ + '.spawn_on', spawn_on))
        else:
            # Nova 31 has no spawn_on: utils.spawn and spawn_n start
            # greenthreads, and work handed to its live migration executor
            # and pools goes through pass_context too.
            self.useFixture(fixtures.MonkeyPatch(
                'nova.utils.pass_context',
                self._counted(thread_pool_factory.pass_context)))
        real_internal_lock = lockutils.internal_lock

        def internal_lock(name, semaphores=None, blocking=True):
            lock = real_internal_lock(name, semaphores=semaphores,
                                      blocking=blocking)
            return _WatchedLock(lock, name, self) if blocking else lock

        # lockutils.lock takes its semaphore through this module global.
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_concurrency.lockutils.internal_lock', internal_lock))
        self._watch_fair_locks()
        for cls in (objects.Instance, objects.Migration):
            self._observe(cls, 'save')
            self._observe(cls, 'create')
        self._observe(objects.Instance, 'destroy')
        self._observe(objects.ComputeNode, 'save')
        self.placement_writes = 0
        for verb in ('put', 'post', 'delete'):
            self._count_placement(verb)
        self._count_native_calls()

    def _count_native_calls(self):
        """Count the calls a real thread of eventlet's pool has in hand.

        Nova's libvirt driver calls its connection through ``tpool``. A
        process forked while such a call runs (``harness.cloud.forking``)
        would wait for its answer for ever: the thread is the parent's.
        """
        self.native_calls = 0
        if tpool is None:
            return
        real_execute = tpool.execute
        activity = self

        def execute(*args, **kwargs):
            activity.native_calls += 1
            try:
                return real_execute(*args, **kwargs)
            finally:
                activity.native_calls -= 1

        # tpool.Proxy calls the module's global at every call.
        self.useFixture(fixtures.MonkeyPatch('eventlet.tpool.execute',
                                             execute))

    def _watch_fair_locks(self):
        """Say when a taker of a fair lock has to wait, as for plain ones.

        ``lockutils.lock(name, fair=True)`` (Nova's ``synchronized(...,
        fair=True)``: the resource tracker's ``compute_resources``) takes
        ``internal_fair_lock(name).write_lock()``, a fasteners
        ReaderWriterLock that cannot be tried without blocking. So the
        wait is seen around ``lockutils.lock`` (the module global that
        ``synchronized`` calls): busy when asked, the taker waits from
        then until the lock is its own. The lock object itself is left as
        it is (RacePoints hooks its release).
        """
        real_lock = lockutils.lock
        activity = self

        @contextlib.contextmanager
        def watched_fair_lock(name, *args, **kwargs):
            waiter = None
            fair_lock = lockutils.internal_fair_lock(name)
            if _fair_lock_busy(fair_lock):
                waiter = object()
                activity._waiting(waiter, name)
            waiting = ()
            try:
                with real_lock(name, *args, **kwargs) as taken:
                    if waiter is not None:
                        took, waiter = waiter, None
                        activity._took(took)
                    try:
                        yield taken
                    finally:
                        # Who waits as it is released (no one else runs).
                        waiting = activity.waiting_for(name)
            finally:
                if waiter is not None:
                    activity._waiting(waiter, None)
            # A re-entry releases nothing: the outer release hands over.
            if not fair_lock.is_writer(check_pending=False):
                activity._released(name, waiting)

        def lock(name, *args, **kwargs):
            # ``fair`` is the eighth parameter; synchronized names it.
            fair = kwargs.get('fair', args[6] if len(args) > 6 else False)
            if fair:
                return watched_fair_lock(name, *args, **kwargs)
            return real_lock(name, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'oslo_concurrency.lockutils.lock', lock))

    def _counted(self, real_pass_context):
        """Nova 31's ``utils.pass_context``, its greenthreads counted.

        Each is a task as an executor's is under ``spawn_on``: run as
        its spawner's host, done once its function returns or raises.
        """
        activity = self

        def pass_context(runner, func, *args, **kwargs):
            if runner in (tpool.execute, _TPOOL_EXECUTE):
                # A native thread the caller waits for: nothing to follow.
                return real_pass_context(runner, func, *args, **kwargs)
            host = acting_host()
            name = getattr(func, '__name__', repr(func))
            task = Task(name, _request_id())

            def run_as_spawner(*a, **k):
                try:
                    with acting_as(host):
                        return func(*a, **k)
                finally:
                    activity._finished(task)

            parking = activity._started(task, task)
            try:
                started = real_pass_context(runner, run_as_spawner,
                                            *args, **kwargs)
            except Exception:
                activity._finished(task)  # never started
                raise
            activity._park(task, parking)
            return started

        return pass_context

    def _observe(self, cls, method):
        real = getattr(cls, method)
        activity = self

        def observed(obj, *args, **kwargs):
            # The object's own fields set since it was read: what the
            # listeners ask about (an instance's host, a migration's
            # status). Not obj_what_changed(), which would also walk every
            # nested object (flavors, NUMA topology, info cache) at every
            # save, to answer nothing anyone asks.
            changes = (frozenset(obj._changed_fields)
                       if method == 'save' else frozenset())
            activity._notify(obj, method, 'before', changes)
            result = real(obj, *args, **kwargs)
            # Counted before the listeners hear of it: a point passed
            # after the save saw the record written (its version is
            # another than the point passed before it, which the
            # explorer would otherwise take for the same state).
            activity.saves += 1
            activity._notify(obj, method, 'after', changes)
            return result

        observed.__name__ = method
        self.useFixture(fixtures.MonkeyPatch(
            '%s.%s.%s' % (cls.__module__, cls.__name__, method), observed))

    def _count_placement(self, verb):
        # Installed after the PlacementFixture, so this wraps its client.
        path = 'nova.scheduler.client.report.SchedulerReportClient.' + verb
        real = getattr(report.SchedulerReportClient, verb)
        activity = self

        def counted(*args, **kwargs):
            activity.placement_writes += 1
            return real(*args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(path, counted))

    @property
    def version(self):
        """Grows with every write Nova makes to its records or Placement.

        Two moments with the same version saw the same database and
        Placement state (in-memory state aside).
        """
        return self.saves + self.placement_writes

    def add_listener(self, callback):
        """Call ``callback(obj, method, when, changes)`` around each save.

        ``when`` is ``'before'`` or ``'after'``; ``changes`` names the
        object's own fields the save writes (``save`` only; their new
        values are on ``obj``): a nested object's changes (an instance's
        flavor, say) are not named.
        """
        self._listeners.append(callback)

    def _notify(self, obj, method, when, changes):
        for callback in list(self._listeners):
            callback(obj, method, when, changes)

    def _started(self, key, task):
        """Count ``task`` (found by ``key``) as running, unless a loop.

        What it may take to park if ``spawned()`` collects (else None).
        """
        if task.name in SERVICE_LOOPS:
            return None
        with self._cond:
            self._pending[key] = task
            if self._collecting is None:
                return None
            self._collecting.append(task)
            return self._parking

    def _park(self, task, parking):
        """Wait until ``task`` is parked, if ``parking`` says how long.

        The spawner goes on once the new task is parked: tasks spawned
        from tasks (a cast sent by a call's handler) keep one order too.
        Never raised into Nova's code: the task then runs when it can,
        and ``unparked`` says so.
        """
        if parking is None:
            return
        try:
            self.wait_parked([task], parking,
                             lambda: 'spawned %s' % task.name)
        except errors.OperationTimeout as exc:
            self.unparked.append(exc)

    def _finished(self, future):
        with self._cond:
            task = self._pending.pop(future, None)
            if task is not None:
                task.done = True
                if task.started and task.executor is not None:
                    self._busy[task.executor] -= 1
            self._cond.notify_all()

    def _queued(self, task):
        """Whether ``task`` waits for a worker its executor has none of.

        Not yet started, and every worker the executor may have runs a
        task that has not ended (one that has ended frees its worker for
        the next in the queue, which then runs). Threading mode.
        """
        return (not task.started and task.executor is not None
                and self._busy.get(task.executor, 0)
                >= task.executor._max_workers)

    def _waiting(self, waiter, lock):
        """``waiter`` waits for ``lock`` now (None: no longer)."""
        with self._cond:
            if lock is None:
                self._lock_waits.pop(waiter, None)
            else:
                self._lock_waits[waiter] = (lock, _request_id(),
                                            self.chain())
            self._cond.notify_all()

    def _took(self, waiter):
        """``waiter`` has the lock it waited for: in line for its turn.

        Threading mode: from waiting for the lock to waiting for its turn
        in one step, so that the releaser, which waits for that step
        (``_released``), knows the taker is in line when it goes on.
        """
        chain = self.chain()
        with self._cond:
            self._lock_waits.pop(waiter, None)
            if mode.THREADING and chain is not None:
                self.park(chain)
            self._cond.notify_all()
        if mode.THREADING and chain is not None:
            self.await_turn(chain, 'a lock')

    def _released(self, lock, waiting):
        """``lock`` was released while ``waiting`` (tokens) waited for it.

        Threading mode: go on once one of them has taken it and is in line
        for its turn; it runs once this chain, and every other, waits.
        """
        if not waiting:
            return
        with self._cond:
            if not self._cond.wait_for(
                    lambda: any(waiter not in self._lock_waits
                                for waiter in waiting), self.timeout):
                self.unparked.append(errors.OperationTimeout(
                    'no one took lock %s within %ss of its release' % (
                        lock, self.timeout)))

    def _parked(self, task):
        """Whether ``task`` is done or waits (see the class docstring)."""
        if task.done:
            return True
        if mode.EVENTLET:
            # Its request waits for a lock, in whichever greenthread.
            return task.request_id is not None and any(
                request_id == task.request_id
                for _lock, request_id, _chain in self._lock_waits.values())
        return task in self._turns or any(
            chain is task
            for _lock, _request, chain in self._lock_waits.values())

    def chain(self):
        """The chain of work of the current thread (the test's: ``main``)."""
        chain = current_chain()
        if chain is None and threading.current_thread() is self._main_thread:
            return self.main
        return chain

    # -- threading mode: one chain at a time ---------------------------------

    def park(self, chain, ready=None):
        """Put ``chain`` in line for a turn, once ``ready()`` says so.

        A chain in line is parked. Its turn comes when it is ready, every
        other live chain is parked, and no chain in line before it is
        ready: one at a time, first come first served, decided under one
        lock. ``ready`` None: at once.
        """
        with self._cond:
            turn = self._turns.get(chain)
            if turn is None:
                self._turns[chain] = _Turn(next(self._numbers), ready)
            else:
                turn.ready = ready
            self._cond.notify_all()

    def await_turn(self, chain, what, ready=None):
        """Park ``chain`` (if not in line yet) and go on at its turn.

        Whether it came in time; if not (a chain that never waited within
        the cloud's timeout), ``unparked`` says so and it goes on anyway:
        never raised into Nova's code.
        """
        with self._cond:
            turn = self._turns.get(chain)
            if turn is None:
                turn = self._turns[chain] = _Turn(next(self._numbers), ready)
            elif ready is not None:
                turn.ready = ready
            self._cond.notify_all()
            came = self._cond.wait_for(lambda: self._has_turn(chain, turn),
                                       self.timeout)
            if not came:
                self.unparked.append(errors.OperationTimeout(
                    'Nova\'s threads did not wait within %ss for %s to go '
                    'on after %s (running: %s)' % (
                        self.timeout, chain, what, ', '.join(
                            str(other) for other in self._live_chains()
                            if other is not chain
                            and not self._parked(other)))))
            self._turns.pop(chain, None)
            chain.turns += 1
            self._cond.notify_all()
        return came

    def leave_line(self, chain):
        """Take ``chain`` out of line if it is still in it.

        For a caller whose RPC call ended without its handler taking the
        chain's turn (no reply within ``rpc_response_timeout``): it goes on
        itself and is not parked.
        """
        with self._cond:
            if self._turns.pop(chain, None) is not None:
                self._cond.notify_all()

    def _has_turn(self, chain, turn):
        if turn.ready is not None and not turn.ready():
            return False
        if any(other is not chain and not self._parked(other)
               for other in self._live_chains()):
            return False
        return not any(other is not chain and earlier.number < turn.number
                       and (earlier.ready is None or earlier.ready())
                       for other, earlier in self._turns.items())

    def waiting_for(self, lock):
        """The waits of other chains for ``lock`` now (threading mode)."""
        if mode.EVENTLET:
            return ()
        me = self.chain()
        with self._cond:
            return tuple(waiter for waiter, (name, _request, chain)
                         in self._lock_waits.items()
                         if name == lock and chain is not me)

    def _live_chains(self):
        return [self.main] + [task for task in self._pending.values()]

    @contextlib.contextmanager
    def spawned(self, park=None):
        """The executor tasks started in this block, as a list.

        Filled as they start; not nested. With ``park`` (seconds), each
        spawner waits until its new task is parked (``wait_parked``)
        before it goes on.
        """
        with self._cond:
            self._collecting = collected = []
            self._parking = park
        try:
            yield collected
        finally:
            with self._cond:
                self._collecting = None
                self._parking = None

    def wait_parked(self, tasks, timeout, describe):
        """Block until each task is done or its request waits for a lock.

        oslo.concurrency's locks count, plain (the instance lock) and fair
        (the resource tracker's ``compute_resources``), taken through
        ``lockutils.lock`` or ``synchronized``. Or raise after
        ``timeout``; ``describe`` gives the state to report.
        The caller waits on a condition the tasks signal, so they run
        meanwhile (the same greenthread hub); none of them is left half
        way, whatever the scheduler would have picked.
        """
        chain = self.chain()
        if mode.THREADING and chain is not None:
            # Each has run until it waits (or waits for a worker), and
            # this chain's turn has come again.
            if self.await_turn(chain, 'spawning', ready=lambda: all(
                    task.done or task.turns or self._queued(task)
                    for task in tasks)):
                return
            state = ', '.join(str(task) for task in tasks)
            raise errors.OperationTimeout(
                'Nova\'s tasks did not finish or wait within %ss (%s).\n%s'
                % (timeout, state, describe()))
        with self._cond:
            if self._cond.wait_for(
                    lambda: all(self._parked(task) for task in tasks),
                    timeout):
                return
            state = ', '.join(str(task) for task in tasks)
        raise errors.OperationTimeout(
            'Nova\'s tasks did not finish or wait for a lock within %ss '
            '(%s).\n%s' % (timeout, state, describe()))

    def wait_done(self, tasks, timeout, describe):
        """Block until each task is done, or raise after ``timeout``.

        Unlike ``wait_parked``, a task waiting for a lock is waited for
        until it took it and ended (a call an injection carried on in a
        thread of its own: harness.cloud.race).
        """
        chain = self.chain()
        if mode.THREADING and chain is not None:
            if self.await_turn(chain, 'waiting for %s' % ', '.join(
                    str(task) for task in tasks),
                    ready=lambda: all(task.done for task in tasks)):
                return
        else:
            with self._cond:
                if self._cond.wait_for(
                        lambda: all(task.done for task in tasks), timeout):
                    return
        raise errors.OperationTimeout(
            'Nova\'s tasks did not end within %ss (%s).\n%s' % (
                timeout, ', '.join(str(task) for task in tasks),
                describe()))

    def _check_answered(self):
        """Raise if a cast had no reply in time since last asked."""
        if self.unanswered:
            raise self.unanswered.pop(0)

    def _check_alone(self):
        """Raise if two of Nova's threads ran at once since last asked.

        A chain that never parked in time (``unparked``), or two threads
        that used one database at once (``databases.shared_uses``): the
        run would not be the same every time.
        """
        if self.unparked:
            raise self.unparked.pop(0)
        shared = databases.shared_uses()
        if shared:
            raise errors.OperationFailed(
                'two of Nova\'s threads ran at once (a harness bug: '
                'harness.cloud.activity): %s' % shared[0])

    def idle(self):
        """Whether no executor task runs now."""
        with self._cond:
            return not self._pending

    def wait_idle(self, timeout, describe):
        """Block until no executor task runs, or raise after ``timeout``.

        ``describe`` is called on timeout and gives the state to report.
        """
        chain = self.chain()
        if mode.THREADING and chain is not None:
            idle = self.await_turn(chain, 'waiting for Nova to finish',
                                   ready=lambda: not self._pending)
            if idle:
                self._check_answered()
                self._check_alone()
                return
        with self._cond:
            if self._cond.wait_for(lambda: not self._pending, timeout):
                self._check_answered()
                if mode.THREADING:
                    self._check_alone()
                return
            busy = sorted(task.name for task in self._pending.values())
        raise errors.OperationTimeout(
            'Nova was still busy after %ss (running: %s).\n%s'
            % (timeout, ', '.join(busy), describe()))
