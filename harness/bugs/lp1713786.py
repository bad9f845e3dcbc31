"""LP#1713786 put back into Nova: a failed evacuation claim keeps dst's part.

Its reintroduction fixture, for ``harness reproduce 1713786``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1713786``;
the bug's story and scenarios are in ``lp1713786.yaml`` next to it.
"""

from harness.bugs import base


class FailedEvacuationClaimKeepsAllocation(base.Reintroduction):
    """LP#1713786 as it was: a failed evacuation claim left dst's part.

    Fixed by 5bc137f7ebc266f8a73d6febc7c10d8d648924e0 ("Remove dest node
    allocation if evacuate MoveClaim fails", master; 21d7f8b11f on
    stable/pike). The fix added, to ``ComputeManager.rebuild_instance``'s
    handler of ``ComputeResourcesUnavailable`` from the rebuild claim
    (after the migration is set 'failed'), a
    ``delete_allocation_for_evacuated_instance(..., node_type=
    'destination')``. Before it, that handler only set the migration
    failed, notified and aborted.

    This fixture undoes that addition: when
    ``_do_rebuild_instance_with_claim`` raises
    ``ComputeResourcesUnavailable``, the resource tracker's next
    ``delete_allocation_for_evacuated_instance`` (the handler's) does
    nothing. A failure of anything else (the other handler's delete) and
    the source's cleanup run as today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova.compute import resource_tracker
        from nova import exception

        claim = self.useFixture(base.RaisedIn(
            manager.ComputeManager, '_do_rebuild_instance_with_claim',
            errors=exception.ComputeResourcesUnavailable))
        self.useFixture(base.Replaced(
            resource_tracker.ResourceTracker,
            'delete_allocation_for_evacuated_instance', when=claim.take))
