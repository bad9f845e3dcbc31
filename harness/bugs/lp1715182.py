"""LP#1715182 put back into Nova: a live-migration rollback keeps the dest.

Its reintroduction fixture, for ``harness reproduce 1715182``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1715182``;
the bug's story and scenarios are in ``lp1715182.yaml`` next to it.
"""

from harness.bugs import base


class RollbackKeepsDestAllocation(base.Reintroduction):
    """LP#1715182 as it was: a rolled-back live migration kept the dest.

    Fixed by f90c61cd88edce74e3dbfd069beb2c33793d3371 ("Remove dest node
    allocations during live migration rollback", master, Queens;
    backported to Pike as 76a3465271; it also closed LP#1714237, the
    aborted live migration). Before it,
    ``ComputeManager._rollback_live_migration`` restored the server on the
    source without touching Placement, so the allocation the scheduler had
    made against the destination stayed. The fix removed the destination
    from the instance's allocations there; 3626019fa0 ("Make live
    migration hold resources with a migration allocation") turned that
    into today's ``self._revert_allocation(context, instance, migration)``
    in the same place, which puts the migration's allocation on the source
    back under the instance in place of the destination's.

    This fixture makes ``_revert_allocation`` do nothing when called from
    ``_rollback_live_migration`` (told apart by its caller's frame); its
    other callers (prep_resize, finish_resize failures, the queued
    live-migration abort) run as today.
    """

    def _setUp(self):
        from nova.compute import manager

        self.useFixture(base.SkippedWhenCalledFrom(
            manager.ComputeManager, '_revert_allocation', manager,
            ('_rollback_live_migration',), result=False))
