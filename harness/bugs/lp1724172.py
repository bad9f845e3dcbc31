"""LP#1724172 put back into Nova: a source without the guest cleans nothing.

Its reintroduction fixture, for ``harness reproduce 1724172``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1724172``;
the bug's story and scenarios are in ``lp1724172.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class EmptiedSourceKeepsEvacuatedAllocation(base.Reintroduction):
    """LP#1724172 as it was: only guests still defined were cleaned up.

    Fixed by 9cacaad14e8c18e99e85d9dc04308fee91303f8f ("cleanup evacuated
    instances not on hypervisor", master, Train). Before it,
    ``ComputeManager._destroy_evacuated_instances`` walked only the
    evacuated instances its driver still reported
    (``_get_instances_on_driver``); the fix added a second loop over all
    the evacuations from the host, which loads each instance not reported
    by the driver (``objects.Instance.get_by_uuid``), removes the source
    node from its allocation and completes its migration.

    This fixture undoes that widening: while
    ``_destroy_evacuated_instances`` runs, loading an instance the driver
    did not report raises ``InstanceNotFound``, which that loop takes as
    "already deleted" and skips, so such an evacuation is left as before
    the fix (allocation kept, migration 'done'). Guests the driver reports
    are handled as today.
    """

    def _setUp(self):
        from nova.compute import manager
        from nova import exception
        from nova import objects

        cleaning = self.useFixture(base.Inside(
            manager.ComputeManager, '_destroy_evacuated_instances'))
        real_on_driver = manager.ComputeManager._get_instances_on_driver
        real_get = objects.Instance.get_by_uuid

        def _get_instances_on_driver(compute, *args, **kwargs):
            found = real_on_driver(compute, *args, **kwargs)
            call = cleaning.call()
            if call is not None:
                call.reported = getattr(call, 'reported', set()) | {
                    inst.uuid for inst in found}
            return found

        def get_by_uuid(cls, context, uuid, *args, **kwargs):
            call = cleaning.call()
            if call is not None and \
                    uuid not in getattr(call, 'reported', ()):
                raise exception.InstanceNotFound(instance_id=uuid)
            return real_get(context, uuid, *args, **kwargs)

        base.patch_method(self, manager.ComputeManager,
                          '_get_instances_on_driver',
                          _get_instances_on_driver)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.Instance.get_by_uuid', get_by_uuid))
