"""LP#1679750: a local delete must remove the server's allocations.

The scenario (tests/regressions/scenarios/bug_1679750.yaml) stops the
server's compute, lets the API see it down, deletes the server (the API
deletes it locally) and asserts nothing is allocated right away, then
again once the compute is back and its periodic has run.
"""

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

(LOCAL_DELETE,) = scenario_mod.load(bugs.get('1679750').scenario_path)


class TestBug1679750(testing.ScenarioTestCase):

    @bugs.related_bug('1679750')
    def test_bug_1679750_local_delete_frees_allocations(self):
        self.run_scenario(LOCAL_DELETE)
