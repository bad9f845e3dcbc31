"""LP#1879878: a periodic on the source racing confirm must not free the
guest twice.

The scenarios (tests/regressions/scenarios/bug_1879878.yaml) inject
update_available_resource on the source right after confirm saves
migration.status=confirmed (with the fix, inside the resource tracker's
lock, so the periodic waits for the move claim to be dropped), for an
unpinned guest on Nova's fake driver and for a pinned guest on profiled
NUMA hosts, asserting each host's tracker, pinned CPUs and allocations,
the server's status and its migration's, at every step and again after
periodics.
"""

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

CONFIRM, CONFIRM_PINNED = scenario_mod.load(
    bugs.get('1879878').scenario_path)


class TestBug1879878(testing.ScenarioTestCase):

    @bugs.related_bug('1879878')
    def test_bug_1879878_periodic_at_confirmed_status_then_confirm(self):
        self.run_scenario(CONFIRM)

    @bugs.related_bug('1879878')
    def test_bug_1879878_periodic_at_confirmed_status_pinned_guest(self):
        self.run_scenario(CONFIRM_PINNED)
