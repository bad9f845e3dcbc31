"""LP#1862633 put back into Nova: a failed port binding update on unshelve
keeps the scheduler's allocation.

Its reintroduction fixture, for ``harness reproduce 1862633``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1862633``;
the bug's story and scenarios are in ``lp1862633.yaml`` next to it.
"""

from nova.compute import manager
from nova.network import neutron
from nova.scheduler.client import report

from harness.bugs import base


class UnshelveNetworkFailureKeepsAllocation(base.Reintroduction):
    """LP#1862633 as it was: the allocation outlives a network failure.

    Fixed by e65d4a131a7ebc02261f5df69fa1b394a502f268 ("Clean up
    allocation if unshelve fails due to neutron", master; Closes-Bug).

    Before it, ``ComputeManager._unshelve_instance`` called
    ``setup_instance_network_on_host`` ahead of its ``try`` block, so a
    Neutron failure there skipped the block's clean-up, which deletes the
    allocations the scheduler made for the instance
    (``delete_allocation_for_instance``). This fixture skips that delete
    when, in the same thread, the network setup of the unshelve running
    there raised. Everything else runs as installed.
    """

    def _setUp(self):
        unshelving = self.useFixture(base.Inside(
            manager.ComputeManager, '_unshelve_instance'))
        network_failed = self.useFixture(base.RaisedIn(
            neutron.API, 'setup_instance_network_on_host'))
        self.useFixture(base.Replaced(
            report.SchedulerReportClient, 'delete_allocation_for_instance',
            when=lambda: unshelving.running() and network_failed.take()))
