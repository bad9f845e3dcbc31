"""LP#1825537 put back into Nova: a failed finish_resize "reverts" allocations.

Its reintroduction fixture, for ``harness reproduce 1825537``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1825537``;
the bug's story and scenarios are in ``lp1825537.yaml`` next to it.
"""

from harness.bugs import base


class FinishResizeFailureRevertsAllocations(base.Reintroduction):
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

        def revert_allocation(compute, context, instance, migration):
            return compute._revert_allocation(context, instance, migration)

        finishing = self.useFixture(base.Inside(
            manager.ComputeManager, 'finish_resize'))
        self.useFixture(base.Replaced(
            manager.ComputeManager, '_delete_allocation_after_move',
            when=finishing.running, instead=revert_allocation))
