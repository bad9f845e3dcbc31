"""LP#1825537: a resize whose finish_resize fails on the destination must
leave the allocations where the instance is.

The scenario (tests/regressions/scenarios/bug_1825537.yaml) resizes a
server to a host whose hypervisor fails finish_migration and asserts the
server is ERROR on the destination with its migration in error, that it
holds the new flavor against the destination and nothing holds anything
against the source, again after periodics, and that deleting it frees
everything.
"""

from harness import bugs
from harness.core import invariants as invariants_mod
from harness.core import scenario as scenario_mod
from harness import testing

(FINISH_FAILS,) = scenario_mod.load(bugs.get('1825537').scenario_path)


class TestBug1825537(testing.ScenarioTestCase):

    # This bug is about Placement's allocations, which every invariant but
    # tracker_agrees covers. When finish_migration raises, Nova 34 (fix
    # included) leaves the source's tracker counting the old flavor until
    # its next periodic, while Placement holds nothing there (the fix freed
    # Placement only, as for LP#1821594); and the destination's
    # _finish_resize puts the instance's flavor back to the old one, which
    # the destination's tracker then counts, while the fix keeps the new
    # flavor allocated there (as Nova's own test_bug_1825537 asserts).
    invariants = [name for name in invariants_mod.INVARIANTS
                  if name != 'tracker_agrees']

    @bugs.related_bug('1825537')
    def test_bug_1825537_finish_migration_fails_on_dest(self):
        self.run_scenario(FINISH_FAILS)
