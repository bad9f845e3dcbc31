"""LP#1713796 put back into Nova: a failed unshelve keeps its allocation.

Its reintroduction fixture, for ``harness reproduce 1713796``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1713796``;
the bug's story and scenarios are in ``lp1713796.yaml`` next to it.
"""

from harness.bugs import base


class FailedUnshelveKeepsAllocation(base.Reintroduction):
    """LP#1713796 as it was: a failed unshelve left its allocation.

    Fixed by f18202185d05e3f7e89fca6bbc17daf3c5dc4b98 ("Remove
    allocations when unshelve fails on host", master; a2e0bfdea8b3 on
    stable/pike). The fix added, to the ``except`` around the instance
    claim and the spawn in ``ComputeManager._unshelve_instance``, a
    ``reportclient.delete_allocation_for_instance`` of the instance: the
    scheduler's allocation against the host is dropped when the claim
    (``ComputeResourcesUnavailable``) or the spawn fails. Before it, that
    handler only logged and re-raised.

    This fixture undoes that addition: while ``_unshelve_instance`` runs,
    the report client's ``delete_allocation_for_instance`` does nothing
    (that handler is the method's only call of it). Everything else in
    the handler (image_ref, volume connections, nulling the host) runs as
    today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.scheduler.client import report

        unshelving = self.useFixture(base.Inside(
            manager.ComputeManager, '_unshelve_instance'))
        self.useFixture(base.Replaced(
            report.SchedulerReportClient, 'delete_allocation_for_instance',
            when=unshelving.running))
