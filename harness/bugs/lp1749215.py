"""LP#1749215 put back into Nova: a failed resize_instance keeps allocations.

Its reintroduction fixture, for ``harness reproduce 1749215``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1749215``;
the bug's story and scenarios are in ``lp1749215.yaml`` next to it.
"""

from harness.bugs import base


class FailedResizeInstanceKeepsAllocations(base.Reintroduction):
    """LP#1749215 as it was: a failed resize_instance left its allocations.

    Fixed by caf167862dd82e98f0189c9598856de57dfa7d35 ("compute: Cleans
    up allocations after failed resize", master, Rocky). Before it,
    ``ComputeManager.resize_instance`` on the source had no clean-up of
    Placement: when the hypervisor's ``migrate_disk_and_power_off``
    raised, the instance kept the new flavor against the destination and
    the migration the old flavor against the source. The fix split the
    body into ``_resize_instance`` and wrapped it so that a failure calls
    ``_revert_allocation`` (the migration's allocation back to the
    instance), as today. (The same commit added the like clean-up to
    finish_resize, since reworked by ea297d6ffb for LP#1825537; that half
    is not put back here.)

    This fixture makes ``_revert_allocation`` do nothing when called from
    ``resize_instance`` itself (told apart by its caller's frame); its
    other callers run as today.
    """

    def _setUp(self):
        from nova.compute import manager

        self.useFixture(base.SkippedWhenCalledFrom(
            manager.ComputeManager, '_revert_allocation', manager,
            ('resize_instance',), result=False))
