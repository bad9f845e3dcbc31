"""LP#1886418 put back into Nova: trait updates use a cached generation.

Its reintroduction fixture, for ``harness reproduce 1886418``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1886418``;
the bug's story and scenarios are in ``lp1886418.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class DisabledTraitUsesCachedGeneration(base.Reintroduction):
    """LP#1886418 as it was: the trait write used the cached generation.

    Fixed by 1b661c2669d9d75b3d4622418e84a5c4046c2072 ("Reduce gen
    conflict in COMPUTE_STATUS_DISABLED handling", master, Ussuri). The
    fix gave ``SchedulerReportClient.set_traits_for_provider`` a
    ``generation`` argument and made
    ``ComputeVirtAPI.update_compute_provider_status`` pass the generation
    of the traits it had just read from Placement; without it the report
    client uses its cached provider tree's generation, stale once
    allocations against the provider changed.

    This fixture drops that argument again, so the cached generation is
    used; ``update_compute_provider_status`` is the only caller that
    passes it.
    """

    def _setUp(self):
        from nova.scheduler.client import report
        real = report.SchedulerReportClient.set_traits_for_provider

        def set_traits_for_provider(client, context, rp_uuid, traits,
                                    generation=None):
            return real(client, context, rp_uuid, traits)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'set_traits_for_provider', set_traits_for_provider))
