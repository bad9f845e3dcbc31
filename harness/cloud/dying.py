"""A compute that dies at a race point, and one that restarts there.

``inject: {before: finish_resize, stop: dest}`` (``die``): at the point,
nova-compute on that host dies as a killed process does. It consumes no
more messages (its RPC servers stop listening; casts sent to it from then
on wait in its queue, as casts to a stopped compute do: ``Cloud.
stop_compute``), no heartbeat or periodic runs there, and the work it had
in flight at the point ends with it: when the point is passed in that
compute's own code (its RPC handler, a step of its executor, or a save
made there), ``ComputeDied`` is raised into that code. It is a
``BaseException``, so Nova's ``except Exception`` handlers (the ones that
set a migration to error or revert a task state) do not run, as they do
not run in a process that is gone; ``finally`` blocks and context managers
do, so the locks the work held are released (a new process would not see
them held). The race points' RPC wrapper (``harness.cloud.race``) ends
the handler there: a call's caller gets ``MessagingTimeout`` at once, as
it would once ``rpc_response_timeout`` passed without a reply, and a
cast's sender has long moved on anyway. In an executor task the task
ends (its future keeps the exception, unread).

Nova then sees the compute as it sees a stopped one: up until
``service_down_time`` has passed since its last heartbeat (the point),
down after. ``start_compute`` starts it again (``init_host``), as after a
``stop_compute``.

``restart`` (``restart``) is a death followed at once by a start with the
guests kept, as a service manager restarting the crashed process does:
the new compute starts (``init_host``, its start-up reconciliation) once
the dead one's work has unwound to its RPC handler or executor step, then
receives what was cast to it meanwhile. A restart needs the point to be
passed in such a handler or step of the host (not in a build's spawned
thread, which no wrapper sees end).

A periodic that the clock runs on the host when it dies (in the test's
own thread) is not interrupted: the compute stops, the periodic runs to
its end. Nor is a handler of the host that only waits for the point's
cast to return (the cloud runs casts as calls): what it does after the
cast, it had done before the cast arrived in a deployment.
"""

import threading

import oslo_messaging

from harness.cloud import activity
from harness.cloud import mode
from harness.core import errors


class ComputeDied(BaseException):
    """The service on ``host`` died: the code it was running ends here.

    A ``BaseException`` so that Nova's ``except Exception`` clean-up does
    not run (the process is gone), and oslo.messaging's dispatcher does
    not turn it into a reply.
    """

    def __init__(self, host, restart=False):
        super().__init__('nova-compute on %s died' % host)
        self.host = host
        self.restart = restart


def die(cloud, host, restart=False):
    """Kill nova-compute on ``host`` now (see the module docstring).

    Raises ``ComputeDied`` when the caller runs that compute's work.
    """
    cloud.kill_compute(host)
    if in_work_of(host):
        raise ComputeDied(host, restart=restart)
    if restart:
        # Nothing of it runs here: start it again now.
        revive(cloud, host)


def in_work_of(host):
    """Whether the current code is ``host``'s compute's own work.

    Its RPC handlers and executor tasks run in (green)threads of their
    own and carry the host they act as; the test's main thread (a periodic
    the clock runs) does not die with the compute.
    """
    return activity.acting_host() == host and not _in_main_thread()


def _in_main_thread():
    if mode.EVENTLET:
        import greenlet
        return greenlet.getcurrent().parent is None
    return threading.current_thread() is threading.main_thread()


def ended(cloud, died, call=True):
    """A handler of the dead compute has unwound: answer for it.

    Restarts the compute if asked. ``call``: an RPC handler, whose caller
    then gets ``MessagingTimeout`` (a cast's sender ignores it).
    """
    if died.restart:
        revive(cloud, died.host)
    if call:
        raise oslo_messaging.MessagingTimeout(
            'No reply: nova-compute on %s died handling the message'
            % died.host)


def revive(cloud, host):
    """Start ``host``'s compute again, guests kept, then hand it its casts.

    Nothing it does is recorded as a race point nor fires an injection
    (it is part of the injected restart, as an injected periodic's work
    is); the casts queued for it run after, as the operation's own.
    """
    queued = cloud.casts.queued.pop(host, [])
    race = cloud.race
    was = race.record, race.injections
    race.record, race.injections = False, []
    try:
        cloud.restart_compute(host, keep_hypervisor_state=True)
    except errors.HarnessError as exc:
        race.failures.append(('restart %s' % host, None, exc))
        cloud.casts.queued.setdefault(host, [])[:0] = queued
        return
    finally:
        race.record, race.injections = was[0], was[1] + race.injections
    for call, client, ctxt, method, kwargs in queued:
        cloud.casts.run(call, client, ctxt, method, kwargs)
