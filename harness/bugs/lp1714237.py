"""LP#1714237 put back into Nova: an aborted live migration keeps the dest.

Its reintroduction fixture, for ``harness reproduce 1714237``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1714237``;
the bug's story and scenarios are in ``lp1714237.yaml`` next to it.
"""

from harness.bugs import base


class AbortKeepsDestAllocation(base.Reintroduction):
    """LP#1714237 as it was: an aborted live migration kept the dest.

    Fixed by f90c61cd88edce74e3dbfd069beb2c33793d3371 ("Remove dest node
    allocations during live migration rollback", master, Queens;
    backported to Pike as 76a3465271; the same commit closed LP#1715182,
    the failed pre_live_migration, whose fixture this one mirrors). An
    abort of a live migration that is preparing reaches
    ``ComputeManager._do_live_migration``, which rolls it back with
    ``_rollback_live_migration(..., migration_status='cancelled')``.
    Before the fix that rollback restored the server on the source
    without touching Placement, so the scheduler's allocation against the
    destination stayed. The fix removed the destination from the
    instance's allocations there; 3626019fa0 ("Make live migration hold
    resources with a migration allocation") turned that into today's
    ``self._revert_allocation(context, instance, migration)`` in the same
    place.

    This fixture makes ``_revert_allocation`` do nothing when called from
    ``_rollback_live_migration`` (told apart by its caller's frame); its
    other callers (prep_resize, resize_instance, the queued live-migration
    abort) run as today.
    """

    def _setUp(self):
        from nova.compute import manager

        self.useFixture(base.SkippedWhenCalledFrom(
            manager.ComputeManager, '_revert_allocation', manager,
            ('_rollback_live_migration',), result=False))
