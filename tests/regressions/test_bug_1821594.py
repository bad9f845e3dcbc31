"""LP#1821594: a confirm whose source clean-up fails must still free the
source.

The scenario (tests/regressions/scenarios/bug_1821594.yaml) resizes a
server from a host whose hypervisor fails confirm_migration, confirms,
and asserts the server is ERROR on the destination with its migration in
error, that it holds the new flavor against the destination and nothing
holds anything against the source, again after periodics, and that
deleting it frees everything.
"""

from harness import bugs
from harness.core import invariants as invariants_mod
from harness.core import scenario as scenario_mod
from harness import testing

(CONFIRM_FAILS,) = scenario_mod.load(bugs.get('1821594').scenario_path)


class TestBug1821594(testing.ScenarioTestCase):

    # This bug is about Placement's allocations, which every invariant but
    # tracker_agrees covers. When confirm_migration raises, Nova 34 (fix
    # included) leaves the move claim on the source's tracker, which
    # counts the old flavor until its next periodic while Placement holds
    # nothing there: the fix freed Placement only, by design.
    invariants = [name for name in invariants_mod.INVARIANTS
                  if name != 'tracker_agrees']

    @bugs.related_bug('1821594')
    def test_bug_1821594_confirm_migration_fails_on_source(self):
        self.run_scenario(CONFIRM_FAILS)
