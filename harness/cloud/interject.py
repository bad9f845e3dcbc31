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

A live migration sent this way (``live_migrate``) takes no lock on its
way to the source compute, which hands it to its live-migration executor
and answers: where that executor is busy (``[DEFAULT]
max_concurrent_live_migrations``, 1 by default, and the operation the
request lands in is a live migration of the same source), the new one
waits in the executor's queue (its migration ``queued``) until a worker
is free, as in a deployment; otherwise it runs there and then.

A request the API refuses fails the run, as a failed injected periodic
does (``cloud.race.check``); so does a thread that neither finishes nor
waits for a lock (the instance lock, or the resource tracker's fair
``compute_resources``) within the cloud's timeout.

A compute service's delete (``delete_service``, ``DELETE
/os-services/{id}``) names a host, or a role resolved at the point as a
periodic's is. The API answers it within the request (no casts): it
refuses (409) while the host has instances or migrations in progress, or
deletes the service, its compute nodes and their resource providers. The
refusal is an answer, not a failure: the step says which one it expects
(``refused``), and the other one fails the step
(``AnsweredOtherwise``, not an injection that could not run). The
answer is noted in the step's arguments (``host``, ``answer``).
"""

from nova.tests.functional.api import client as api_client

from harness.cloud import servers
from harness.core import errors
from harness.core import names

#: Whether each of ``names.INTERJECTIONS`` sends its casts from a thread.
THREADED = {'delete': True, 'abort_live_migration': False,
            'force_complete_live_migration': False, 'live_migrate': False,
            'delete_service': False}
assert set(THREADED) == set(names.INTERJECTIONS)
#: The API's answer to a service delete it refuses.
REFUSED = 409


class AnsweredOtherwise(errors.HarnessError):
    """An injected request Nova answered other than the scenario said.

    It ran (unlike an ``InjectionFailed``): a finding about Nova, which the
    race explorer counts as a failure, not as an injection that could not
    run there (``cloud.race.check`` raises it).
    """


def action(cloud, name, server, refused=None, noted=None):
    """``func(passage)`` that sends ``name`` for ``server``.

    For a host's request (``names.HOST_INTERJECTIONS``) ``server`` is the
    host or role, ``refused`` whether the API must refuse it, and
    ``noted`` a mapping the answer is noted in.
    """
    if name not in THREADED:
        raise errors.HarnessError('cannot do %r at a race point; known: %s'
                                  % (name, ', '.join(sorted(THREADED))))
    if name == 'delete_service':
        return delete_service(cloud, server, refused, noted)
    send = {'delete': cloud.servers.request_delete,
            'live_migrate': cloud.servers.request_live_migrate,
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


def delete_service(cloud, target, refused, noted=None):
    """``func(passage)`` that deletes ``target``'s compute service there.

    ``target``: a host, or a role resolved at the point. The API's answer
    must be a refusal (409) if ``refused``, a delete otherwise.
    """
    def act(passage):
        # A role no migration names here: the injection cannot run
        # (raised, it is an InjectionFailed).
        host = cloud.race.resolve_host(target, passage)
        service = cloud.services.get(host)
        if service is None:
            raise errors.HarnessError('host %s has no compute service to '
                                      'delete at %s' % (host, passage))
        try:
            cloud.api.api_delete('/os-services/%s' % service['id'])
        except api_client.OpenStackApiException as exc:
            answer = {'status': exc.response.status_code,
                      'message': servers.api_message(exc.response)}
        else:
            answer = {'status': 204, 'message': 'deleted'}
        if noted is not None:
            noted['host'] = host
            noted['answer'] = answer
        if (answer['status'] == REFUSED) != bool(refused):
            # Reported by the next cloud.race.check(): the step fails.
            otherwise = AnsweredOtherwise(
                'the API was to %s the delete of the compute service of '
                '%s; it answered %s %s' % (
                    'refuse' if refused else 'accept', host,
                    answer['status'], answer['message']))
            cloud.race.failures.append((act.__name__, passage, otherwise))
        return None

    act.__name__ = 'delete_service %s' % target
    return act
