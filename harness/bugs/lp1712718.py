"""LP#1712718 put back into Nova: a failed build keeps its allocation.

Its reintroduction fixture, for ``harness reproduce 1712718``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1712718``;
the bug's story and scenarios are in ``lp1712718.yaml`` next to it.
"""

import sys

import fixtures

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

        real = report.SchedulerReportClient.delete_allocation_for_instance
        manager_file = manager.__file__
        patch_file = sys.modules[fixtures.MonkeyPatch.__module__].__file__

        def delete_allocation_for_instance(client, *args, **kwargs):
            # The nearest frame outside fixtures' MonkeyPatch (it wraps a
            # function it puts on a class).
            frame = sys._getframe(1)
            while frame.f_code.co_filename == patch_file:
                frame = frame.f_back
            caller = frame.f_code
            if (caller.co_filename == manager_file
                    and caller.co_name in _BUILD_SITES):
                return True
            return real(client, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'delete_allocation_for_instance',
            delete_allocation_for_instance))
