"""LP#1818914: confirm must free the source's usage without a periodic.

The scenario (tests/regressions/scenarios/bug_1818914.yaml) resizes and
confirms with no periodic run before confirm, asserting each host's
resource tracker usage (the compute node record os-hypervisors shows)
after boot, resize and confirm, and that periodics change nothing.
"""

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

(CONFIRM,) = scenario_mod.load(bugs.get('1818914').scenario_path)


class TestBug1818914(testing.ScenarioTestCase):

    @bugs.related_bug('1818914')
    def test_bug_1818914_confirm_frees_source_usage_without_periodic(self):
        self.run_scenario(CONFIRM)
