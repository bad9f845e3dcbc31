"""LP#1661014 put back into Nova: a deleted compute node keeps its provider.

Its reintroduction fixture, for ``harness reproduce 1661014``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1661014``;
the bug's story and scenario are in ``lp1661014.yaml`` next to it.
"""

from harness.bugs import base


class OrphanNodeKeepsProvider(base.Reintroduction):
    """LP#1661014 as it was: an orphan compute node's provider stayed.

    Fixed by 965fffc09d6fffba7918117e170d5799c69fe99b ("Delete a compute
    node's resource provider when node is deleted", master, Ocata). When
    ``ComputeManager.update_available_resource`` deletes a compute node
    its driver no longer reports (a bare-metal node deleted), the fix made
    it delete the node's resource provider too
    (``reportclient.delete_resource_provider(context, cn, cascade=True)``,
    still there today). Before it, only the compute node record went: the
    provider stayed in Placement with its inventory, and Placement kept
    offering a host that no longer exists.

    This fixture makes ``delete_resource_provider`` do nothing when called
    from ``update_available_resource`` (told apart by its caller's frame);
    its other callers (the API's compute service delete) run as today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.scheduler.client import report

        self.useFixture(base.SkippedWhenCalledFrom(
            report.SchedulerReportClient, 'delete_resource_provider',
            manager, ('update_available_resource',)))
