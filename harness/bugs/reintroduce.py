"""Fixtures that put a fixed bug back into today's Nova.

Each one restores the behaviour Nova had before a bug's fix, with the
narrowest patch that does it, and names the fixing commit. A regression
test earns its place when it passes on Nova as installed and fails under
its bug's fixture. They are for that proof, for ``harness reproduce``
and for ``--reintroduce`` (``harness run``, ``harness explore``).
"""

import threading

import fixtures

from nova.compute import task_states
from nova import objects


class Reintroduction(fixtures.Fixture):
    """A bug put back: patches of Nova's code and nothing else.

    What a patch remembers lives for one call (a thread-local flag set and
    cleared around it), so nothing carries from one run to the next: a
    ``reuse.CloudPool`` may keep the fixture in place with its cloud for
    every later run with the same bug put back.
    """

    stateless = True


class OldFlavorSetOnlyAtDestination(Reintroduction):
    """LP#1944759 as it was: old_flavor set only by finish_resize.

    Fixed by b841e553214be9a732703e2dfed6c97698ef9b71 ("Store old_flavor
    already on source host during resize", master; c8b04d183f56 on
    stable/wallaby). The fix added ``instance.old_flavor =
    instance.flavor`` to the source's ``ComputeManager._resize_instance``,
    in the save that points ``instance.host`` at the destination (task
    state RESIZE_MIGRATED). Before it, that save wrote no old_flavor: the
    database kept what it had (None: confirm and revert clear it), and only
    the destination's ``_finish_resize`` set it, as it still does.

    This fixture makes exactly that save leave old_flavor out again (and
    the in-memory instance, as before the fix, carries none). Every other
    save, and every other field of that save, is untouched.
    """

    def _setUp(self):
        real_save = objects.Instance.save

        def save(instance, *args, **kwargs):
            changes = instance.obj_what_changed()
            if ('host' in changes and 'old_flavor' in changes
                    and instance.task_state == task_states.RESIZE_MIGRATED):
                instance.old_flavor = None
                instance.obj_reset_changes(['old_flavor'])
            return real_save(instance, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.instance.Instance.save', save))


class ComputesHealInstanceAllocations(Reintroduction):
    """LP#1707071 as it was: each compute's periodic "heals" allocations.

    Fixed by 5390210a4fa46e2af6b6aec9b41c03147b52760c ("Remove provider
    allocs in confirm/revert resize", Fixes-bug) on top of
    09e169bd7a74deaf52d9d6d38ff37799cab24157 ("placement: refactor healing
    of allocations in RT", Partial-bug), both master, Pike; Queens then
    gave the source side of a move to the migration record. Before
    09e169bd, ``update_available_resource`` on every compute rewrote
    Placement from its own view: each instance the host tracks got its
    allocations PUT as its flavor against this compute node alone (a PUT
    replaces everything the consumer holds), and every consumer holding
    allocations against the node that the host did not track as an
    instance had all of its allocations DELETEd. During a move both hosts
    see the instance, so source and destination overwrote each other
    ("compute nodes fight over allocations"). 09e169bd made the heal
    delete only for local-deleted instances and write nothing else; that
    policy is today's ``ResourceTracker._remove_deleted_instances_allocations``
    (the method 09e169bd introduced).

    This fixture replaces exactly that method, called at the same point of
    the periodic with the same arguments, by the old heal: a PUT of
    ``{this node: flavor}`` for each tracked instance whose allocations
    differ, then a DELETE of each untracked instance consumer against the
    node. Migration consumers are left alone: they did not exist before
    the fix (the old heal only knew instances), and keeping them makes the
    patch no wider than the fight it restores. Nothing else changes.
    """

    def _setUp(self):
        from nova.scheduler import utils as scheduler_utils

        def heal(rt, context, cn, migrations, instance_by_uuid):
            client = rt.reportclient
            migration_uuids = {m.uuid for m in migrations if 'uuid' in m}
            for uuid in sorted(rt.tracked_instances):
                instance = instance_by_uuid.get(uuid)
                if instance is None:
                    continue
                mine = {cn.uuid: {'resources': scheduler_utils.
                                  resources_from_flavor(instance,
                                                        instance.flavor)}}
                current = client.get_allocs_for_consumer(context, uuid)
                held = {rp: {'resources': alloc['resources']}
                        for rp, alloc in current['allocations'].items()}
                if held != mine:
                    client.put_allocations(context, uuid, {
                        'allocations': mine,
                        'consumer_generation': current.get(
                            'consumer_generation'),
                        'project_id': instance.project_id,
                        'user_id': instance.user_id})
            against_node = client.get_allocations_for_resource_provider(
                context, cn.uuid).allocations
            for consumer in sorted(against_node):
                if (consumer not in rt.tracked_instances
                        and consumer not in migration_uuids):
                    client.delete_allocation_for_instance(
                        context, consumer, force=True)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            '_remove_deleted_instances_allocations', heal))


class LocalDeleteKeepsAllocations(Reintroduction):
    """LP#1679750 as it was: a local delete left the allocations behind.

    Fixed by the change "Delete allocations from API if nova-compute is
    down" (Change-Id If507e23f0b7e5fa417041c3870d77786498f741d, master,
    Rocky; Closes-Bug: #1679750). When the server's compute is down, the
    API deletes the instance itself (``API._local_delete``); before the
    fix it did not touch Placement, so the instance's allocations stayed
    against the down compute node until that compute came back and its
    periodic found them belonging to a deleted instance. The fix added one
    call to ``_local_delete``: ``placementclient.
    delete_allocation_for_instance(context, instance.uuid, force=True)``.

    This fixture makes exactly that call do nothing while ``_local_delete``
    runs; every other caller of the report client (computes, conductor,
    the API's other paths) is untouched.
    """

    def _setUp(self):
        from nova.compute import api as compute_api
        from nova.scheduler.client import report

        state = threading.local()
        real_local_delete = compute_api.API._local_delete
        real_delete = report.SchedulerReportClient.\
            delete_allocation_for_instance

        def _local_delete(api, *args, **kwargs):
            state.local_delete = True
            try:
                return real_local_delete(api, *args, **kwargs)
            finally:
                state.local_delete = False

        def delete_allocation_for_instance(client, *args, **kwargs):
            if getattr(state, 'local_delete', False):
                return False
            return real_delete(client, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.api.API._local_delete', _local_delete))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'delete_allocation_for_instance',
            delete_allocation_for_instance))


class DropMoveClaimOnlyForTrackedMigrations(Reintroduction):
    """LP#1818914 as it was: confirm freed the source only via a periodic.

    Fixed by the change for LP#1818914 in ``ResourceTracker.
    drop_move_claim`` (sha-unverified: the fixing commit's sha is not in
    the stored corpora; master, Stein; Nova's functional test
    ``test_resize_confirm_assert_hypervisor_usage_no_periodics`` guards
    it). Before it, ``drop_move_claim`` subtracted the flavor's usage only
    inside ``if instance['uuid'] in self.tracked_migrations:``; for an
    instance the tracker did not track as a migration it only removed the
    instance from ``tracked_instances``. The source of a resize tracks the
    outbound migration only once its periodic has run, so confirm, which
    passes the old flavor explicitly, freed nothing on the source's
    compute node record until the next ``update_available_resource``.
    The fix moved ``if instance_type is not None:`` (today ``if flavor is
    not None:`` in ``_drop_move_claim``) out of that branch.

    This fixture restores the guard: when the instance is not in
    ``tracked_migrations``, ``_drop_move_claim`` is called with no flavor,
    which skips exactly the subtraction (and its save), while the
    bookkeeping after it (popping ``tracked_migrations``, discarding from
    ``tracked_instances``) runs as before.
    """

    def _setUp(self):
        from nova.compute import resource_tracker

        real = resource_tracker.ResourceTracker._drop_move_claim

        def _drop_move_claim(rt, context, instance, nodename, flavor=None,
                             prefix='new_'):
            if instance['uuid'] not in rt.tracked_migrations:
                flavor = None
            return real(rt, context, instance, nodename, flavor=flavor,
                        prefix=prefix)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker._drop_move_claim',
            _drop_move_claim))


class PeriodicIgnoresIncomingMigrationContext(Reintroduction):
    """LP#1953359 as it was: the destination's periodic used the old NUMA.

    Fixed by the change for LP#1953359 in ``ResourceTracker.
    _update_available_resource`` (sha-unverified: the fixing commit's sha
    is not in the stored corpora; master; the code cites the bug).
    Between ``resize_instance`` on the source pointing ``instance.host``
    at the destination and ``finish_resize`` on the destination applying
    the migration context, the destination's periodic counts the instance
    as its own, with the instance's current (source) flavor and NUMA
    topology, not the ones it claimed on the destination. The fix applies
    the migration context of such instances (incoming, unfinished
    migrations) in memory before counting usage; before it, nothing did.

    This fixture makes ``Instance.apply_migration_context`` a no-op while
    ``_update_available_resource`` runs on a compute (the loop the fix
    added is its only caller there); everywhere else, including
    ``finish_resize``, it applies the context as usual.
    """

    def _setUp(self):
        from nova.compute import resource_tracker

        state = threading.local()
        real_update = resource_tracker.ResourceTracker.\
            _update_available_resource
        real_apply = objects.Instance.apply_migration_context

        def _update_available_resource(rt, *args, **kwargs):
            state.periodic = True
            try:
                return real_update(rt, *args, **kwargs)
            finally:
                state.periodic = False

        def apply_migration_context(instance):
            if getattr(state, 'periodic', False):
                return None
            return real_apply(instance)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            '_update_available_resource', _update_available_resource))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.instance.Instance.apply_migration_context',
            apply_migration_context))


class ConfirmMarksMigrationBeforeTrackerLock(Reintroduction):
    """LP#1879878 as it was: confirm saved 'confirmed' outside the lock.

    Fixed by "Move confirm resize under semaphore" (sha-unverified: the
    fixing commit's sha is not in the stored corpora; master, Victoria,
    Stephen Finucane, Closes-Bug: #1879878; a companion change did the
    same for revert with ``drop_move_claim_at_dest``). Before it,
    ``ComputeManager._confirm_resize`` set ``migration.status =
    'confirmed'`` and saved it, and only then called the resource
    tracker's ``drop_move_claim(context, instance, migration.source_node,
    old_flavor, prefix='old_')``, which takes the tracker's lock
    (``compute_resources``). A periodic ``update_available_resource`` on
    the source in between saw a migration no longer in progress and an
    instance on another host, so it counted nothing for the guest; the
    drop then subtracted the old flavor again (negative usage;
    CPUUnpinningInvalid for a pinned guest). The fix added
    ``ResourceTracker.drop_move_claim_at_source``, whose body, under the
    lock, saves the status, drops the claim with the old flavor and
    ``old_`` prefix, and drops the migration context.

    This fixture saves the status before taking the lock again: it
    replaces ``drop_move_claim_at_source`` (called only by the two
    confirm paths, at the point the old code called ``drop_move_claim``)
    by one that sets and saves ``migration.status = 'confirmed'``, then
    calls Nova's own locked method, whose repeated assignment writes the
    same value. The window between the save and the lock is the old one;
    the claim dropped, its flavor and prefix, and everything else are
    today's. The revert half (``drop_move_claim_at_dest``) is left alone:
    on Nova 34 that method passes the new flavor explicitly, so a
    destination periodic in the old window does no harm there.
    """

    def _setUp(self):
        from nova.compute import resource_tracker

        real = resource_tracker.ResourceTracker.drop_move_claim_at_source

        def drop_move_claim_at_source(rt, context, instance, migration):
            migration.status = 'confirmed'
            migration.save()
            return real(rt, context, instance, migration)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            'drop_move_claim_at_source', drop_move_claim_at_source))


class ConfirmFailureKeepsSourceAllocations(Reintroduction):
    """LP#1821594 as it was: a failed confirm leaked the source side.

    Fixed by "Delete allocations even if _confirm_resize raises"
    (sha-unverified: the fixing commit's sha is not in the stored corpora;
    master, Train, backported to Stein, Rocky and Queens; LP#1821594
    "Error in confirm_migration leaves stale allocations and 'confirming'
    migration state"). Before it, ``ComputeManager.confirm_resize`` ran
    ``_confirm_resize`` and only after it returned deleted the
    allocations the migration record holds against the source node
    (``_delete_allocation_after_move``); when the hypervisor's
    ``confirm_migration`` raised, the instance went to ERROR on the
    destination and the old flavor stayed allocated against the source
    for good. The fix moved that delete into a ``finally`` around
    ``_confirm_resize``, so it runs whether or not the source's clean-up
    fails (the unit test ``test_confirm_resize_driver_confirm_migration_
    fails``: "Allocations should always be cleaned up even if cleaning up
    the source host fails"). The same change put ``errors_out_migration``
    on ``confirm_resize`` so the migration goes to 'error' instead of
    staying 'confirming'.

    This fixture restores the allocation half: when ``_confirm_resize``
    raises, the ``_delete_allocation_after_move`` that the ``finally``
    then makes is skipped, as the old code never reached it; a confirm
    that succeeds deletes as today. The migration-status half is left as
    today's (the accounting the test checks does not depend on it).
    """

    def _setUp(self):
        from nova.compute import manager

        self.useFixture(_SkipAfterFailure(
            manager.ComputeManager, '_confirm_resize',
            '_delete_allocation_after_move'))


class _SkipAfterFailure(fixtures.Fixture):
    """``skipped`` does nothing once, right after ``during`` raised."""

    def __init__(self, cls, during, skipped):
        super().__init__()
        self.cls, self.during, self.skipped = cls, during, skipped

    def _setUp(self):
        state = threading.local()
        real_during = getattr(self.cls, self.during)
        real_skipped = getattr(self.cls, self.skipped)

        def during(obj, *args, **kwargs):
            state.failed = False
            try:
                return real_during(obj, *args, **kwargs)
            except Exception:
                state.failed = True
                raise

        def skipped(obj, *args, **kwargs):
            if getattr(state, 'failed', False):
                state.failed = False
                return None
            return real_skipped(obj, *args, **kwargs)

        for name, func in ((self.during, during), (self.skipped, skipped)):
            self.useFixture(fixtures.MonkeyPatch('%s.%s.%s' % (
                self.cls.__module__, self.cls.__name__, name), func))


class FinishResizeFailureRevertsAllocations(Reintroduction):
    """LP#1825537 as it was: a failed finish_resize "reverted" allocations.

    Fixed by ea297d6ffba81c5dc982afe6519de09ff3744cad (master, Train, and
    backported to the branches the regression had reached; its subject is
    not in the stored corpora, which hold ``nova/compute/manager.py`` and
    the regression test ``test_bug_1825537`` at that commit with the fix
    and the fixed assertions). Change I2d9ab06b485f76550dbbff46f79f40ff4c97d12f
    (Rocky, backported to Pike) had made ``ComputeManager.finish_resize``
    call ``self._revert_allocation(context, instance, migration)`` when
    ``_finish_resize_helper`` raised, as ``resize_instance`` does on the
    source. On the destination that is wrong: the source's
    ``resize_instance`` has already pointed ``instance.host`` here, and the
    instance stays here in ERROR, but the revert moves the migration
    record's old-flavor allocation against the source back to the
    instance, replacing its new-flavor allocation against this node. The
    fix replaced that one call, in the same ``except`` block, by
    ``self._delete_allocation_after_move(context, instance, migration)``
    (the delete confirm makes), keeping the instance's allocation here.

    This fixture puts the old call back: while ``finish_resize`` runs,
    ``_delete_allocation_after_move`` (whose only caller there is that
    ``except`` block) calls Nova's own ``_revert_allocation`` with the same
    arguments instead. ``_revert_allocation`` is the method the old code
    called, as it is today: at ea297d6f it already moved the migration's
    allocations to the instance with ``move_allocations`` (the instance
    gets the migration's allocation, the migration none) and has since
    lost only a log line for a migration holding more than one provider.
    Confirm and live migration, the other callers, are untouched.
    """

    def _setUp(self):
        from nova.compute import manager

        state = threading.local()
        real_finish_resize = manager.ComputeManager.finish_resize
        real_delete = manager.ComputeManager._delete_allocation_after_move

        def finish_resize(compute, *args, **kwargs):
            state.finishing = True
            try:
                return real_finish_resize(compute, *args, **kwargs)
            finally:
                state.finishing = False

        def _delete_allocation_after_move(compute, context, instance,
                                          migration):
            if getattr(state, 'finishing', False):
                return compute._revert_allocation(context, instance,
                                                  migration)
            return real_delete(compute, context, instance, migration)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.finish_resize',
            finish_resize))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.'
            '_delete_allocation_after_move', _delete_allocation_after_move))
