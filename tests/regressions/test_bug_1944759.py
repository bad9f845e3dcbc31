"""LP#1944759: a periodic on the source between resize_instance and
finish_resize must not drop the outbound migration's pinned CPUs.

The scenarios (tests/regressions/scenarios/bug_1944759.yaml) inject
update_available_resource on the source right before the destination's
finish_resize, then confirm, and separately revert, asserting pinned CPUs
and allocations on both hosts at every step and again after periodics.
"""

import os

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

CONFIRM, REVERT = scenario_mod.load(bugs.get('1944759').scenario_path)
DEFERRED = scenario_mod.load(os.path.join(
    os.path.dirname(__file__), 'scenarios', 'bug_1944759_deferred.yaml'))[0]


class TestBug1944759(testing.ScenarioTestCase):

    @bugs.related_bug('1944759')
    def test_bug_1944759_periodic_before_finish_resize_then_confirm(self):
        self.run_scenario(CONFIRM)

    @bugs.related_bug('1944759')
    def test_bug_1944759_periodic_before_finish_resize_then_revert(self):
        self.run_scenario(REVERT)

    @bugs.related_bug('1944759')
    def test_bug_1944759_periodic_deferred_by_the_claim_runs_before_window(
            self):
        # With the bug put back: the periodic waits for the destination's
        # claim to release the tracker's lock and runs then, before the
        # window opens (see the scenario file), in every run.
        self.run_scenario(DEFERRED,
                          fixtures=[bugs.get('1944759').reintroduce()])
