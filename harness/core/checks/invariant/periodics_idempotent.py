"""``periodics_idempotent``: the periodic run again moves nothing."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core import names
from harness.core.problems import Problem
from harness.core import steps as steps_mod

RECONCILE = names.RECONCILE


class PeriodicsIdempotent(base.Invariant):
    """The periodic run again on every compute moves nothing.

    Running the periodics on every running compute moves no
    allocation, no usage and no provider generation. The hosts go in
    name order after odd checked steps and reversed after even ones.

    The periodics are ``update_available_resource`` only: of the compute
    manager's periodic tasks it is the one that can change Placement
    without time passing (``_remove_deleted_instances_allocations`` and
    the inventory it reports). ``_poll_unconfirmed_resizes``,
    ``_reclaim_queued_deletes``, ``_poll_shelved_instances`` and
    ``_cleanup_running_deleted_instances`` touch allocations only once a
    configured time has passed; ``_run_pending_deletes`` and
    ``_cleanup_incomplete_migrations`` only delete instance files. The
    tracker's own view is not compared: putting it right is the
    periodic's job.

    The periodics run inside ``cloud.trial()``, which checkpoints the
    cloud (databases, clock, trackers, report clients' caches,
    hypervisors, race points) and puts it back afterwards: the next step
    sees the trackers as the step left them, a tracker left stale stays
    stale, as it would in a deployment, for the next step to trip over.
    Injections waiting for a later step neither fire nor record
    meanwhile. The snapshot after the periodics is left in
    ``context.after_periodics`` (``nothing_leaks`` reads it).

    Its windows (``pending``): a compute node whose provider Placement
    has not caught up with yet (a node removed, added or rebalanced
    since its host last ran the periodic: the step kind's ``pending``)
    is left out: creating, deleting or taking over its provider is that
    periodic's job.
    """

    name = 'periodics_idempotent'
    order = 50
    summary = ('Running update_available_resource on every compute again '
               'moves nothing in Placement.')
    honours = ('periodics_idempotent',)

    def windows(self, opened, context):
        """Node -> the host whose periodic brings Placement up to it."""
        pending = {node: host for node, host in (opened or {}).items()
                   if host not in context.reconciled}
        step = context.step
        if step.error is None:
            pending.update(steps_mod.get(step.kind).pending(step.args))
        return pending

    def check(self, context):
        hosts = sorted(context.cloud.computes)
        if context.checked % 2 == 0:
            hosts.reverse()
        problems, context.after_periodics = periodics_idempotent(
            context.cloud, context.snapshot, hosts)
        pending = context.windows.get(self.name) or {}
        return [problem for problem in problems
                if not about_providers(problem, pending)]


def periodic_changes(before, after, hosts=()):
    """Problems for what moved in Placement between two snapshots."""
    order = ' then '.join(hosts) or 'every host'
    problems = []
    for consumer in sorted(set(before.allocations) | set(after.allocations)):
        was = before.allocations_of(consumer)
        now = after.allocations_of(consumer)
        for provider in sorted(set(was) | set(now)):
            if was.get(provider, {}) != now.get(provider, {}):
                problems.append(Problem(
                    'periodics_idempotent', '%s on %s' % (consumer, provider),
                    text=(
                        'periodics_idempotent: %s on %s moved consumer %s on '
                        '%s: %s -> %s' % (
                            RECONCILE, order, consumer, provider,
                            views.fmt(was.get(provider, {})),
                            views.fmt(now.get(provider, {}))))))
    for name in sorted(set(before.providers) | set(after.providers)):
        old = before.providers.get(name)
        new = after.providers.get(name)
        if old is None or new is None:
            problems.append(Problem(
                'periodics_idempotent', 'provider %s' % name,
                text=(
                    'periodics_idempotent: %s on %s %s provider %s' % (
                        RECONCILE, order,
                        'created' if old is None else 'deleted', name))))
            continue
        for rc in sorted(set(old.usages) | set(new.usages)):
            if old.usages.get(rc, 0) != new.usages.get(rc, 0):
                problems.append(Problem(
                    'periodics_idempotent', 'provider %s, %s' % (name, rc),
                    text=(
                        'periodics_idempotent: %s on %s moved the usage of '
                        '%s, %s: %s -> %s' % (
                            RECONCILE, order, name, rc,
                            old.usages.get(rc, 0), new.usages.get(rc, 0)))))
        if old.generation != new.generation:
            problems.append(Problem(
                'periodics_idempotent', 'provider %s generation' % name,
                text=(
                    'periodics_idempotent: %s on %s moved the generation of '
                    'provider %s: %s -> %s' % (RECONCILE, order, name,
                                               old.generation,
                                               new.generation))))
    return problems


def about_providers(problem, providers):
    """Whether a ``periodic_changes`` problem names one of ``providers``."""
    subject = problem.subject
    if subject.startswith('provider '):
        name = subject[len('provider '):].split(',')[0].split(' ')[0]
    else:
        name = subject.rsplit(' on ', 1)[-1]
    return name in providers


def periodics_idempotent(cloud, before, hosts):
    """Run the periodic on ``hosts`` in order, on a copy; (problems, after).

    See the unit's docstring: ``cloud.trial()`` puts everything back.
    """
    with cloud.trial():
        for host in hosts:
            cloud.run_periodic(RECONCILE, host)
        after = cloud.snapshot()
    return periodic_changes(before, after, hosts), after


CHECK = PeriodicsIdempotent()
