"""LP#1785318 put back into Nova: evacuation claims without the image.

Its reintroduction fixture, for ``harness reproduce 1785318``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1785318``;
the bug's story and scenarios are in ``lp1785318.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class EvacuationClaimWithoutImage(base.Reintroduction):
    """LP#1785318 as it was: the evacuation's claim got empty image meta.

    Fixed by 665ba461f3135857034cf33dd5f427d47fdd155e ("Fix
    image-defined numa claims during evacuate", master). The API sends an
    evacuation no ``image_ref``; before the fix
    ``ComputeManager.rebuild_instance`` then left ``image_meta`` as ``{}``
    and passed it to ``rebuild_claim``, whose claim computes the guest's
    NUMA topology from the flavor and that image meta. The fix added
    ``elif evacuate: image_meta = instance.image_meta`` (the image stashed
    in the instance's system metadata).

    This fixture gives ``ResourceTracker.rebuild_claim`` (called for
    evacuations only: a rebuild on its own host uses a ``NopClaim``) the
    empty image meta the code before the fix gave it. The rest of the
    rebuild gets the instance's image meta as today.
    """

    def _setUp(self):
        from nova.compute import resource_tracker
        from nova import objects

        real = resource_tracker.ResourceTracker.rebuild_claim

        def rebuild_claim(rt, *args, **kwargs):
            kwargs['image_meta'] = objects.ImageMeta.from_dict({})
            return real(rt, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.rebuild_claim',
            rebuild_claim))
