"""LP#1763766 put back into Nova: a rebuild may change NUMA constraints.

Its reintroduction fixture, for ``harness reproduce 1763766``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1763766``;
the bug's story and scenarios are in ``lp1763766.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class RebuildIgnoresNUMAChange(base.Reintroduction):
    """LP#1763766 as it was: the API let a new image change NUMA needs.

    Fixed by 6f5358ac1992b17b7f3f99d9a32290e0d4740dae ("Block rebuild when
    NUMA topology changed", master, Ussuri). Before it, ``API.rebuild``
    accepted any new image: the compute rebuilt with a no-op claim, so
    the server kept its NUMA topology, pins and allocation while its image
    (instance system metadata, request spec) asked for other constraints.
    The fix added ``API._validate_numa_rebuild``, called when the image
    changes, which raises ``ImageNUMATopologyRebuildConflict`` when the
    flavor's and new image's constraints differ from the flavor's and old
    image's.

    This fixture makes that check accept every image again, its one
    addition; the rest of the rebuild is today's.
    """

    def _setUp(self):
        def _validate_numa_rebuild(instance, image, flavor):
            return None

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.api.API._validate_numa_rebuild',
            staticmethod(_validate_numa_rebuild)))
