"""Server operations sent from inside another one, at a race point.

An ``inject`` step may ``do`` an API request at a point instead of running
a periodic: delete the server in the middle of its build, move or
unshelve, or abort a live migration while it prepares. What a user does
in a deployment: the request reaches the API while a compute is busy.

The API handles the request at the point, in the thread that passed it.
A delete's casts to the compute (``terminate_instance``) run in a thread
of their own (``CastsWaited.threaded``): they must wait for the
instance's lock, held by the operation they interrupt, and run when that
operation lets go of it, as on a real message bus. Each such thread (and
each one a cast from it starts, the request's casts to the scheduler, a
confirm's on the way) runs, as soon as it is started, until it has
finished or waits for a lock held by someone else
(``Activity.wait_parked``), and the interrupted operation goes on only
then: so the delete's compute handler starts (records its action, passes
its race point) at the point, in every run, instead of whenever the
greenthread scheduler happens to pick it. An abort's cast
(``live_migration_abort``) takes no such lock and runs at once, as the
compute would handle it while its migration prepares.

A request the API refuses fails the run, as a failed injected periodic
does (``cloud.race.check``); so does a thread that neither finishes nor
waits for a plain lock within the cloud's timeout (a delete sent at a
point inside the resource tracker's fair lock, with no instance lock
held, would wait for that lock unseen: not supported).
"""

from harness.core import errors
from harness.core import names

#: Whether each of ``names.INTERJECTIONS`` sends its casts from a thread.
THREADED = {'delete': True, 'abort_live_migration': False,
            'force_complete_live_migration': False}
assert set(THREADED) == set(names.INTERJECTIONS)


def action(cloud, name, server):
    """``func(passage)`` that sends ``name`` for ``server``."""
    if name not in THREADED:
        raise errors.HarnessError('cannot do %r at a race point; known: %s'
                                  % (name, ', '.join(sorted(THREADED))))
    send = {'delete': cloud.servers.request_delete,
            'abort_live_migration': cloud.servers.abort_live_migration,
            'force_complete_live_migration':
                cloud.servers.force_complete_live_migration}[name]

    def act(passage):
        """Send the request; return what to wait for before going on."""
        if not THREADED[name]:
            try:
                send(server)
            except Exception as exc:
                # Reported by the next cloud.race.check(), as a failed
                # injected periodic is.
                cloud.race.failures.append((act.__name__, passage, exc))
            return None
        with cloud.activity.spawned(park=cloud.timeout) as tasks:
            try:
                with cloud.casts.threaded():
                    send(server)
            except Exception as exc:
                cloud.race.failures.append((act.__name__, passage, exc))

        def parked():
            # Run by the race point once its injections are done, so the
            # casts' own race points are recorded like any other.
            if cloud.activity.unparked:
                raise cloud.activity.unparked.pop(0)
            cloud.activity.wait_parked(
                tasks, cloud.timeout,
                lambda: cloud.servers.describe(server))
        return parked

    act.__name__ = '%s %s' % (name, server)
    return act
