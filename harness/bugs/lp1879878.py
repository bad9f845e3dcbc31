"""LP#1879878 put back: confirm and revert save the status outside the lock.

Its reintroduction fixture, for ``harness reproduce 1879878``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1879878``;
the bug's story and scenarios are in ``lp1879878.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ConfirmMarksMigrationBeforeTrackerLock(base.Reintroduction):
    """LP#1879878 as it was: the migration's status saved outside the lock.

    Fixed by a57800d3825ef2fb833d8024c6f7e5c550f55e2f "Move confirm
    resize under semaphore" (master, Victoria, Stephen Finucane,
    Partial-Bug: #1879878; its companion
    dc9c7a5ebf11253f86127238d33dff7401465155 "Move revert resize under
    semaphore" did the same for revert with ``drop_move_claim_at_dest``
    and closed the bug). Before it,
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

    This fixture saves the status before taking the lock again, for both
    halves. Confirm: it replaces ``drop_move_claim_at_source`` (called
    only by the two confirm paths, at the point the old code called
    ``drop_move_claim``) by one that sets and saves ``migration.status =
    'confirmed'``, then calls Nova's own locked method, whose repeated
    assignment writes the same value. Revert: before the companion fix,
    ``ComputeManager.revert_resize`` on the destination set and saved
    ``migration.status = 'reverted'`` right after
    ``_terminate_volume_connections`` and only then called the tracker's
    ``drop_move_claim``, where it now calls ``drop_move_claim_at_dest``.
    The fixture saves it there again: after
    ``_terminate_volume_connections`` of an instance whose task state is
    ``resize_reverting`` (only revert_resize calls it then), it sets and
    saves the reverting migration's status; Nova's own locked method
    follows, its repeated assignment writing the same value. A periodic
    on the source in between (at the race point
    ``tracker.drop_move_claim_at_dest``) sees a migration no longer in
    progress and an instance still on the destination, and drops the
    guest's usage from the source, to which the revert brings the guest
    back uncounted. The windows between the saves and the lock are the
    old ones; the claims dropped, their flavors and prefixes, and
    everything else are today's.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.compute import resource_tracker
        from nova.compute import task_states
        from nova import objects

        real = resource_tracker.ResourceTracker.drop_move_claim_at_source

        def drop_move_claim_at_source(rt, context, instance, migration):
            migration.status = 'confirmed'
            migration.save()
            return real(rt, context, instance, migration)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            'drop_move_claim_at_source', drop_move_claim_at_source))

        terminate = manager.ComputeManager._terminate_volume_connections

        def _terminate_volume_connections(compute, context, instance, bdms):
            terminate(compute, context, instance, bdms)
            if instance.task_state == task_states.RESIZE_REVERTING:
                migration = objects.Migration.get_by_instance_and_status(
                    context.elevated(), instance.uuid, 'reverting')
                migration.status = 'reverted'
                migration.save()

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.'
            '_terminate_volume_connections', _terminate_volume_connections))
