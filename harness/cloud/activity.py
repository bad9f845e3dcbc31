"""Follow the work Nova has in flight, so that waits need no polling.

The cloud runs RPC casts as calls (``nova_env.CastsWaited`` over Nova's
``CastAsCallFixture``), so an API request returns only when every RPC
chain it started has returned. What can
still be running afterwards is work Nova handed to its executors (the build
of a server, a live migration). ``Activity`` counts those tasks as they are
submitted and finished, so a wait is one condition variable, woken by
Nova itself. It also observes saves of instances, migrations and compute
nodes, and Placement writes, for race points and the explorer.
"""

# Nova's eventlet patching first: the thread-local "acting host" below
# must be made from patched threading, or every greenthread shares one.
from harness.cloud import nova_env  # noqa: F401,I100

import contextlib  # noqa: E402
import threading  # noqa: E402

import fixtures  # noqa: E402

from nova import objects  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from nova import thread_pool_factory  # noqa: E402

from harness.core import errors  # noqa: E402

# Which service's code the current (green)thread runs, by host name; set
# where the harness hands work to a service (RPC dispatch, periodic runs)
# and carried into the executor tasks that work spawns.
_acting = threading.local()


def acting_host():
    """The host whose service runs the current code, or None."""
    return getattr(_acting, 'host', None)


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


class Activity(fixtures.Fixture):
    """Count Nova's executor tasks and watch instance and migration saves."""

    def _setUp(self):
        self._cond = threading.Condition()
        self._pending = {}
        self._listeners = []
        self.saves = 0
        real_spawn_on = thread_pool_factory.spawn_on

        def spawn_on(executor_type, func, *args, **kwargs):
            host = acting_host()

            def run_as_spawner(*a, **k):
                with acting_as(host):
                    return func(*a, **k)

            future = real_spawn_on(executor_type, run_as_spawner,
                                   *args, **kwargs)
            name = getattr(func, '__name__', repr(func))
            if name not in SERVICE_LOOPS:
                with self._cond:
                    self._pending[future] = name
                future.add_done_callback(self._finished)
            return future

        self.useFixture(fixtures.MonkeyPatch(
            'nova.thread_pool_factory.spawn_on', spawn_on))
        for cls in (objects.Instance, objects.Migration):
            self._observe(cls, 'save')
            self._observe(cls, 'create')
        self._observe(objects.Instance, 'destroy')
        self._observe(objects.ComputeNode, 'save')
        self.placement_writes = 0
        for verb in ('put', 'post', 'delete'):
            self._count_placement(verb)

    def _observe(self, cls, method):
        real = getattr(cls, method)
        activity = self

        def observed(obj, *args, **kwargs):
            changes = (frozenset(obj.obj_what_changed())
                       if method == 'save' else frozenset())
            activity._notify(obj, method, 'before', changes)
            result = real(obj, *args, **kwargs)
            activity._notify(obj, method, 'after', changes)
            activity.saves += 1
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
        fields the save writes (``save`` only; their new values are on
        ``obj``).
        """
        self._listeners.append(callback)

    def _notify(self, obj, method, when, changes):
        for callback in list(self._listeners):
            callback(obj, method, when, changes)

    def _finished(self, future):
        with self._cond:
            self._pending.pop(future, None)
            self._cond.notify_all()

    def idle(self):
        """Whether no executor task runs now."""
        with self._cond:
            return not self._pending

    def wait_idle(self, timeout, describe):
        """Block until no executor task runs, or raise after ``timeout``.

        ``describe`` is called on timeout and gives the state to report.
        """
        with self._cond:
            if self._cond.wait_for(lambda: not self._pending, timeout):
                return
            busy = sorted(self._pending.values())
        raise errors.OperationTimeout(
            'Nova was still busy after %ss (running: %s).\n%s'
            % (timeout, ', '.join(busy), describe()))
