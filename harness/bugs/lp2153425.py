"""LP#2153425 put back into Nova: live migration claims without limits.

Its reintroduction fixture, for ``harness reproduce 2153425``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 2153425``;
the bug's story and scenario are in ``lp2153425.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class LiveMigrationChecksWithoutLimits(base.Reintroduction):
    """LP#2153425 as it was: the destination's checks ran without limits.

    Fixed by f4709ec59f0c16358ee94a76e8e1addff5a5339e ("live-migration:
    Ensure limits are set before _call_livem_checks_on_host"), first
    released in Nova 34.0.0. ``LiveMigrationTask._find_destination`` set
    ``self.limits`` (the scheduler's, with the NUMATopologyFilter's
    per-cell CPU limit) only after it returned, so
    ``_call_livem_checks_on_host``, which asks the destination to claim
    the guest (``check_can_live_migrate_destination``), always sent none,
    and the claim fitted the guest's NUMA cell without the limit. The fix
    sets the selection's limits before that call.

    This fixture clears ``limits`` for the length of that call, as it was
    then; everything else the task does with its limits is untouched.
    """

    def _setUp(self):
        from nova.conductor.tasks import live_migrate

        real = live_migrate.LiveMigrationTask._call_livem_checks_on_host

        def checks(task, *args, **kwargs):
            limits, task.limits = task.limits, None
            try:
                return real(task, *args, **kwargs)
            finally:
                task.limits = limits

        self.useFixture(fixtures.MonkeyPatch(
            'nova.conductor.tasks.live_migrate.LiveMigrationTask.'
            '_call_livem_checks_on_host', checks))
