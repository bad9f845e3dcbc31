"""LP#1896463 put back: an evacuation ends outside the tracker's lock.

Its reintroduction fixture, for ``harness reproduce 1896463``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1896463``;
the bug's story and scenarios are in ``lp1896463.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class EvacuationEndsOutsideTrackerLock(base.Reintroduction):
    """LP#1896463 as it was: the evacuation's end not under the lock.

    Fixed by 7675964af81472f3dd57db952d704539e61a3e6e "Set instance host
    and drop migration under lock" (master, Wallaby; Balazs Gibizer,
    Closes-Bug: #1896463). Before it, ``ComputeManager._do_rebuild_
    instance`` ended an evacuation on the destination itself: it applied
    the migration context, set and saved the instance's host and node,
    dropped the migration context and set the migration done, holding no
    lock. The fix moved those lines, unchanged, into
    ``ResourceTracker.finish_evacuation``, under the tracker's lock
    (``compute_resources``), which update_available_resource holds while
    it reads the node's instances and then its migrations in progress.

    This fixture puts ``finish_evacuation``'s own body in its place, the
    lock decorator left off (``__wrapped__``: oslo.concurrency's
    ``synchronized`` keeps the function it wraps there), so the end runs
    unlocked where the manager ends the evacuation, as it did before the
    fix; everything it does is today's.
    """

    def _setUp(self):
        from nova.compute import resource_tracker

        locked = resource_tracker.ResourceTracker.finish_evacuation
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            'finish_evacuation', locked.__wrapped__))
