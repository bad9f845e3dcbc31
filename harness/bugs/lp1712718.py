"""LP#1712718 put back into Nova: a failed build keeps its allocation.

Its reintroduction fixture, for ``harness reproduce 1712718``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1712718``;
the bug's story and scenarios are in ``lp1712718.yaml`` next to it.
"""

from harness.bugs import base

# Where the fix's deletes are made, in nova/compute/manager.py: the
# build's reschedule path, and the nested function that runs the build
# and handles a final failure.
_BUILD_SITES = ('_do_build_and_run_instance',
                '_locked_do_build_and_run_instance')


class BuildFailureKeepsAllocation(base.Reintroduction):
    """LP#1712718 as it was: a rescheduled or failed build leaked.

    Fixed by c19ebcbd58bc673e336bc5fa3b815c7b0a20d628 ("Remove allocation
    when booting instance rescheduled or aborted", master, Queens). Before
    it, a compute whose build of an instance failed (final failure, the
    server going to ERROR with no host) or was rescheduled to another host
    left the allocation the scheduler had made against it in Placement.
    The fix made ``ComputeManager.build_and_run_instance``'s build
    function delete the instance's allocations when the build's result
    was FAILED or RESCHEDULED. The FAILED delete is still there
    (``_locked_do_build_and_run_instance``); d913de747187 ("Make conductor
    pass and use host_lists") moved the RESCHEDULED one into
    ``_do_build_and_run_instance``, before the cast back to the conductor,
    so that the conductor can claim an alternate host.

    This fixture makes exactly those two calls to
    ``SchedulerReportClient.delete_allocation_for_instance`` do nothing
    (they are told apart by their caller in nova/compute/manager.py);
    every other delete of allocations runs as today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.scheduler.client import report

        self.useFixture(base.SkippedWhenCalledFrom(
            report.SchedulerReportClient, 'delete_allocation_for_instance',
            manager, _BUILD_SITES, result=True))
