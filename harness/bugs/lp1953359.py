"""LP#1953359 put back into Nova: the destination's periodic uses the old NUMA.

Its reintroduction fixture, for ``harness reproduce 1953359``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1953359``;
the bug's story and scenarios are in ``lp1953359.yaml`` next to it.
"""

from nova import objects

from harness.bugs import base


class PeriodicIgnoresIncomingMigrationContext(base.Reintroduction):
    """LP#1953359 as it was: the destination's periodic used the old NUMA.

    Fixed by 32c1044d86a8d02712c8e3abdf8b3e4cff234a9c "[rt] Apply
    migration context for incoming migrations" in ``ResourceTracker.
    _update_available_resource`` (master, Yoga, 2021-12-06; Closes-Bug:
    #1953359 and #1952915).
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

        periodic = self.useFixture(base.Inside(
            resource_tracker.ResourceTracker, '_update_available_resource'))
        self.useFixture(base.Replaced(
            objects.Instance, 'apply_migration_context',
            when=periodic.running))
