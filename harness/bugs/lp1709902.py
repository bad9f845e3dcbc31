"""LP#1709902 put back into Nova: a restarted source keeps evacuated allocs.

Its reintroduction fixture, for ``harness reproduce 1709902``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1709902``;
the bug's story and scenarios are in ``lp1709902.yaml`` next to it.
"""

from harness.bugs import base


class RestartedSourceKeepsEvacuatedAllocation(base.Reintroduction):
    """LP#1709902 as it was: the source's part of an evacuation stayed.

    Fixed by 9b9c2c52f323c536fb90bb29a40efbed1b129594 ("delete allocation
    of evacuated instance", master, Queens). The fix added, to
    ``ComputeManager._destroy_evacuated_instances`` (run by ``init_host``),
    the removal of the source node from the evacuated instance's
    allocation (today ``remove_provider_tree_from_instance_allocation``
    of the source node's provider). Before it, the method destroyed the
    local guest and set the migration 'completed' only.

    This fixture undoes that addition: while
    ``_destroy_evacuated_instances`` runs, the report client's
    ``remove_provider_tree_from_instance_allocation`` (called there for
    that removal only) does nothing and reports success, so the guest is
    destroyed and the migration completed as today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.scheduler.client import report

        cleaning = self.useFixture(base.Inside(
            manager.ComputeManager, '_destroy_evacuated_instances'))
        self.useFixture(base.Replaced(
            report.SchedulerReportClient,
            'remove_provider_tree_from_instance_allocation',
            when=cleaning.running, result=True))
