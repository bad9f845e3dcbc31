"""LP#1953359: the destination's periodic must count an incoming resize
with what the destination claimed.

The scenario (tests/regressions/scenarios/bug_1953359.yaml) pins the guest
to other CPUs on the source than the destination claims for it, injects
update_available_resource on the destination right before finish_resize,
and asserts the pinned CPU ids on both hosts through resize, confirm and
later periodics.
"""

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

(INCOMING,) = scenario_mod.load(bugs.get('1953359').scenario_path)


class TestBug1953359(testing.ScenarioTestCase):

    @bugs.related_bug('1953359')
    def test_bug_1953359_dest_periodic_before_finish_resize(self):
        self.run_scenario(INCOMING)
