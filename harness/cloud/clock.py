"""``Clock``: virtual time, and every periodic task under the test's control.

Nothing periodic runs by itself in a cloud: services start without timers
(no periodic loop, no heartbeat thread). The clock knows every periodic
task of every running service and runs them only when asked:

- ``run(task, host)`` runs one task now;
- ``advance(seconds)`` moves virtual time and fires, one by one, every task
  that comes due on the way, in this order: by due time, then host name,
  then task name. It returns what it fired.

Virtual time is what ``oslo_utils.timeutils.utcnow()`` returns (Nova's
timestamps, ``resize_confirm_window``, service liveness, reclaim ages) and
what oslo.service's periodic machinery reads as ``now``. Each ``utcnow()``
call moves it on by one microsecond, so two records never share a
timestamp and ordering by time is the order things happened.

Schedule: a task with spacing S first comes due S seconds after its
service starts, then every S seconds (a task Nova disabled, spacing < 0,
is not registered by oslo.service and so never fires; ``run`` still runs
it by name). Every service
also heartbeats (``report_state``, Nova's service-group DB driver) every
``report_interval`` seconds of virtual time, so it stays up however far
the clock moves, exactly as a running service would.
"""

import datetime
import warnings

import fixtures
from oslo_utils import timeutils

from harness.core import errors

HEARTBEAT = 'report_state'
EPOCH = datetime.datetime(2026, 1, 1, 0, 0, 0)


def _clear_time_override():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        timeutils.clear_time_override()


class _VirtualUtcnow(object):
    """What ``timeutils.utcnow()`` returns while a clock is installed.

    oslo.utils pops the next time from an override that is a list; this
    object pops the clock's time plus one microsecond more per call.
    """

    def __init__(self, clock):
        self._clock = clock
        self._ticks = 0

    def pop(self, index):
        self._ticks += 1
        return EPOCH + datetime.timedelta(seconds=self._clock.now,
                                          microseconds=self._ticks)


class Clock(fixtures.Fixture):
    """Virtual time and the schedule of every service's periodic tasks.

    :param runner: ``runner(task, host)`` runs a compute periodic task; the
        cloud gives its own ``run_periodic``.
    :param report_interval: seconds between heartbeats of each service.
    """

    def __init__(self, runner=None, report_interval=10):
        super().__init__()
        self._runner = runner
        self.report_interval = report_interval
        self.now = 0.0

    def _setUp(self):
        self._services = {}
        self._due = {}
        self.fired = []
        # oslo.utils' time override (what its TimeFixture uses), not a mock:
        # a mock would miss the column defaults that captured utcnow at
        # import. The override functions are deprecated in favour of mocks,
        # hence the silenced warnings.
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            self._utcnow = _VirtualUtcnow(self)
            timeutils.set_time_override(self._utcnow)
        self.addCleanup(_clear_time_override)
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_service.periodic_task.now', lambda: self.now))

    # -- services ----------------------------------------------------------

    def add_service(self, name, service):
        """Schedule the periodic tasks of ``service``, known as ``name``."""
        self._services[name] = service
        for task in self.tasks_of(name):
            self._due[(name, task)] = self.now + self.spacing(name, task)

    def remove_service(self, name):
        self._services.pop(name, None)
        for key in [k for k in self._due if k[0] == name]:
            del self._due[key]

    def tasks_of(self, name):
        """Names of the tasks the clock runs for service ``name``."""
        manager = self._services[name].manager
        tasks = [task for task, _ in getattr(manager, '_periodic_tasks', [])]
        return sorted(tasks + [HEARTBEAT])

    def runnable_tasks(self, name):
        """Every periodic task of service ``name``, disabled ones too.

        Nova disables some tasks by default (``_heal_instance_info_cache``
        with ``heal_instance_info_cache_interval = -1``): oslo.service then
        never schedules them, so ``advance`` never fires them, but a test
        may still ``run`` them by name.
        """
        manager = type(self._services[name].manager)
        return sorted([task for task in dir(manager)
                       if getattr(getattr(manager, task, None),
                                  '_periodic_task', False)] + [HEARTBEAT])

    def spacing(self, name, task):
        if task == HEARTBEAT:
            return self.report_interval
        return self._services[name].manager._periodic_spacing[task]

    def schedule(self):
        """(due time, service, task) of every task, in firing order."""
        return sorted((due, name, task)
                      for (name, task), due in self._due.items())

    def state(self):
        """Time, ticks and schedule now, for ``set_state`` to put back."""
        return (self.now, self._utcnow._ticks, dict(self._due),
                list(self.fired))

    def set_state(self, state):
        """Put back what ``state`` returned (same services running)."""
        now, ticks, due, fired = state
        self.now = now
        self._utcnow._ticks = ticks
        self._due = dict(due)
        self.fired = list(fired)

    # -- running -----------------------------------------------------------

    def run(self, task, host, wait=True):
        """Run ``task`` of the service ``host`` now (its schedule stays).

        ``wait=False`` returns without waiting for the work the task
        started (for injections, which run inside Nova's own work).
        """
        if host not in self._services:
            raise errors.UnknownName(
                'no running service %r; running: %s'
                % (host, ', '.join(sorted(self._services))))
        if task == HEARTBEAT:
            service = self._services[host]
            service.servicegroup_api._driver._report_state(service)
            return
        if task not in self.runnable_tasks(host):
            raise errors.UnknownName(
                'service %r has no periodic task %r; it has: %s'
                % (host, task, ', '.join(self.runnable_tasks(host))))
        self._runner(task, host, wait=wait)

    def advance(self, seconds):
        """Move virtual time on and fire what comes due; return it.

        Returns a list of ``(time, host, task)``, ``time`` in seconds since
        the clock started, in the order they ran.
        """
        if seconds < 0:
            raise errors.HarnessError(
                'the clock only moves forward (asked %s s)' % seconds)
        target = self.now + seconds
        fired = []
        while True:
            pending = [entry for entry in self.schedule()
                       if entry[0] <= target]
            if not pending:
                break
            due, name, task = pending[0]
            self.now = max(self.now, due)
            self._due[(name, task)] = due + self.spacing(name, task)
            self.run(task, name)
            fired.append((due, name, task))
        self.now = target
        self.fired.extend(fired)
        return fired
