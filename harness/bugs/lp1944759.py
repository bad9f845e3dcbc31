"""LP#1944759 put back into Nova: old_flavor set only at the destination.

Its reintroduction fixture, for ``harness reproduce 1944759``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1944759``;
the bug's story and scenarios are in ``lp1944759.yaml`` next to it.
"""

import fixtures

from nova.compute import task_states
from nova import objects

from harness.bugs import base


class OldFlavorSetOnlyAtDestination(base.Reintroduction):
    """LP#1944759 as it was: old_flavor set only by finish_resize.

    Fixed by b841e553214be9a732703e2dfed6c97698ef9b71 ("Store old_flavor
    already on source host during resize", master; c8b04d183f56 on
    stable/wallaby). The fix added ``instance.old_flavor =
    instance.flavor`` to the source's ``ComputeManager._resize_instance``,
    in the save that points ``instance.host`` at the destination (task
    state RESIZE_MIGRATED). Before it, that save wrote no old_flavor: the
    database kept what it had (None: confirm and revert clear it), and only
    the destination's ``_finish_resize`` set it, as it still does.

    This fixture makes exactly that save leave old_flavor out again (and
    the in-memory instance, as before the fix, carries none). Every other
    save, and every other field of that save, is untouched.
    """

    def _setUp(self):
        real_save = objects.Instance.save

        def save(instance, *args, **kwargs):
            changes = instance.obj_what_changed()
            if ('host' in changes and 'old_flavor' in changes
                    and instance.task_state == task_states.RESIZE_MIGRATED):
                instance.old_flavor = None
                instance.obj_reset_changes(['old_flavor'])
            return real_save(instance, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.instance.Instance.save', save))
