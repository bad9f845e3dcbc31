"""LP#1679750 put back into Nova: a local delete leaves the allocations behind.

Its reintroduction fixture, for ``harness reproduce 1679750``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1679750``;
the bug's story and scenarios are in ``lp1679750.yaml`` next to it.
"""

from harness.bugs import base


class LocalDeleteKeepsAllocations(base.Reintroduction):
    """LP#1679750 as it was: a local delete left the allocations behind.

    Fixed by ea9d0af31395fbe1686fa681cd91226ee580796e "Delete allocations
    from API if nova-compute is down" (Change-Id
    If507e23f0b7e5fa417041c3870d77786498f741d, master, Rocky 18.0.0;
    Closes-Bug: #1679750). When the server's compute is down, the
    API deletes the instance itself (``API._local_delete``); before the
    fix it did not touch Placement, so the instance's allocations stayed
    against the down compute node until that compute came back and its
    periodic found them belonging to a deleted instance. The fix added one
    call to ``_local_delete``: ``placementclient.
    delete_allocation_for_instance(context, instance.uuid, force=True)``.

    This fixture makes exactly that call do nothing while ``_local_delete``
    runs; every other caller of the report client (computes, conductor,
    the API's other paths) is untouched.
    """

    def _setUp(self):
        from nova.compute import api as compute_api
        from nova.scheduler.client import report

        local_delete = self.useFixture(base.Inside(
            compute_api.API, '_local_delete'))
        self.useFixture(base.Replaced(
            report.SchedulerReportClient, 'delete_allocation_for_instance',
            when=local_delete.running, result=False))
