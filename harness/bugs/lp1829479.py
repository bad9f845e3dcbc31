"""LP#1829479 put back into Nova: a service delete keeps evacuated allocations.

Its reintroduction fixture, for ``harness reproduce 1829479``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1829479``;
the bug's story and scenarios are in ``lp1829479.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ServiceDeleteKeepsEvacuatedAllocations(base.Reintroduction):
    """LP#1829479 as it was: evacuated servers kept the dead host's part.

    Fixed by e5a34fffdf97fcda7d0abfdc9e23485479ca2c4f ("Clean up
    allocations left by evacuation when deleting service", master,
    Wallaby). ``SchedulerReportClient.delete_resource_provider`` with
    ``cascade`` deletes the allocations of the instances on the node's
    host; the fix added ``_remove_allocations_for_evacuated_instances``
    after that, which removes the node's provider tree from the
    allocation of every instance evacuated from the host (evacuation
    migrations still 'done'). Before it, those allocations stayed, and
    Placement refused to delete the provider they are against (the
    report client swallows ResourceProviderInUse).

    This fixture makes that one added call do nothing again; the cascade
    over the host's own instances and the provider delete are today's.
    """

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            '_remove_allocations_for_evacuated_instances',
            lambda self, context, compute_node: None))
