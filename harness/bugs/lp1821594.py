"""LP#1821594 put back into Nova: a failed confirm leaks the source side.

Its reintroduction fixture, for ``harness reproduce 1821594``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1821594``;
the bug's story and scenarios are in ``lp1821594.yaml`` next to it.
"""

import threading

import fixtures

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

        self.useFixture(_SkipAfterFailure(
            manager.ComputeManager, '_confirm_resize',
            '_delete_allocation_after_move'))


class _SkipAfterFailure(fixtures.Fixture):
    """``skipped`` does nothing once, right after ``during`` raised."""

    def __init__(self, cls, during, skipped):
        super().__init__()
        self.cls, self.during, self.skipped = cls, during, skipped

    def _setUp(self):
        state = threading.local()
        real_during = getattr(self.cls, self.during)
        real_skipped = getattr(self.cls, self.skipped)

        def during(obj, *args, **kwargs):
            state.failed = False
            try:
                return real_during(obj, *args, **kwargs)
            except Exception:
                state.failed = True
                raise

        def skipped(obj, *args, **kwargs):
            if getattr(state, 'failed', False):
                state.failed = False
                return None
            return real_skipped(obj, *args, **kwargs)

        for name, func in ((self.during, during), (self.skipped, skipped)):
            self.useFixture(fixtures.MonkeyPatch('%s.%s.%s' % (
                self.cls.__module__, self.cls.__name__, name), func))
