"""LP#1821594 put back into Nova: a failed confirm leaks the source side.

Its reintroduction fixture, for ``harness reproduce 1821594``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1821594``;
the bug's story and scenarios are in ``lp1821594.yaml`` next to it.
"""

from harness.bugs import base


class ConfirmFailureKeepsSourceAllocations(base.Reintroduction):
    """LP#1821594 as it was: a failed confirm leaked the source side.

    Fixed by 03a6d26691c1f182224d59190b79f48df278099e "Delete allocations
    even if _confirm_resize raises" (master, 2019-03-25, backported to
    Stein, Rocky and Queens; LP#1821594
    "Error in confirm_migration leaves stale allocations and 'confirming'
    migration state"). Before it, ``ComputeManager.confirm_resize`` ran
    ``_confirm_resize`` and only after it returned deleted the
    allocations the migration record holds against the source node
    (``_delete_allocation_after_move``); when the hypervisor's
    ``confirm_migration`` raised, the instance went to ERROR on the
    destination and the old flavor stayed allocated against the source
    for good. The fix moved that delete into a ``finally`` around
    ``_confirm_resize``, so it runs whether or not the source's clean-up
    fails (the unit test ``test_confirm_resize_driver_confirm_migration_
    fails``: "Allocations should always be cleaned up even if cleaning up
    the source host fails"). The same change put ``errors_out_migration``
    on ``confirm_resize`` so the migration goes to 'error' instead of
    staying 'confirming'.

    This fixture restores the allocation half: when ``_confirm_resize``
    raises, the ``_delete_allocation_after_move`` that the ``finally``
    then makes is skipped, as the old code never reached it; a confirm
    that succeeds deletes as today. The migration-status half is left as
    today's (the accounting the test checks does not depend on it).
    """

    def _setUp(self):
        from nova.compute import manager

        confirm = self.useFixture(base.RaisedIn(
            manager.ComputeManager, '_confirm_resize'))
        self.useFixture(base.Replaced(
            manager.ComputeManager, '_delete_allocation_after_move',
            when=confirm.take))
