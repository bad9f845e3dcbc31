"""LP#1750618 put back into Nova: a rebuild with a new image claims again.

Its reintroduction fixture, for ``harness reproduce 1750618``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1750618``;
the bug's story and scenarios are in ``lp1750618.yaml`` next to it.
"""

import inspect

import fixtures

from harness.bugs import base


class RebuildNewImageClaims(base.Reintroduction):
    """LP#1750618 as it was: a rebuild through the scheduler made a claim.

    Fixed by a39029076c7997236a7f999682fb1e998c474204 ("Only attempt a
    rebuild claim for an evacuation to a new host", master, Rocky;
    3c5e519a88 on stable/queens). A rebuild with a new image goes through
    the scheduler, and the conductor then passes the chosen node
    (``scheduled_node``) to the compute.
    ``ComputeManager.rebuild_instance`` chose the resource tracker's
    ``rebuild_claim`` when ``recreate or scheduled_node is not None``; the
    fix made it ``evacuate`` (then ``recreate``) alone, a ``NopClaim``
    otherwise.

    This fixture restores the old condition at the one place the choice
    is used: ``_do_rebuild_instance_with_claim`` is given the tracker's
    ``rebuild_claim`` when it is not an evacuation but a scheduled node is
    set. Everything else in the rebuild is today's.
    """

    def _setUp(self):
        from nova.compute import manager

        real = manager.ComputeManager._do_rebuild_instance_with_claim
        signature = inspect.signature(real)

        def _do_rebuild_instance_with_claim(compute, *args, **kwargs):
            bound = signature.bind(compute, *args, **kwargs)
            scheduled = bound.arguments['scheduled_node'] is not None
            if scheduled and not bound.arguments['evacuate']:
                bound.arguments['rebuild_claim'] = compute.rt.rebuild_claim
            return real(*bound.args, **bound.kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.'
            '_do_rebuild_instance_with_claim',
            _do_rebuild_instance_with_claim))
