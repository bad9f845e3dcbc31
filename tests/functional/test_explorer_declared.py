"""The explorer expects a scenario's declared breaks, as ``harness run``.

The first scenario of known_open_bugs.yaml shows LP#1848343 (a delete
while the scheduler looks for a host leaks the allocation) and declares
the breaks it makes at its step 4, the migration. Its recorded run must
pass, as the scenario test does, and so must a replay with a periodic put
in before that step: the breaks then happen at the replay's step 5,
which is still the scenario's step 4.
"""

import os

from harness.core import scenario as scenario_mod
from harness.runners import explorer
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing

SCENARIO = os.path.join(os.path.dirname(__file__), 'scenarios',
                        'known_open_bugs.yaml')


class TestDeclaredBreaks(testing.TestCase):

    def test_a_known_open_bugs_breaks_fail_no_run(self):
        scenario = scenario_mod.load(SCENARIO)[0]
        self.assertEqual('1848343', scenario.known_open_bug.bug)
        self.assertEqual({4}, {one.step for one in
                               scenario.known_open_bug.breaks})
        found = explorer.Explorer(workers=1).explore(scenario)
        self.assertEqual([], [str(outcome) for outcome in found.failed])
        # The recorded run and at least one replay with its injection
        # before the migration (the others cannot run: no migration is
        # in flight to name a host, as the scheduler finds none).
        replays = [outcome for outcome in found.outcomes
                   if outcome.injections]
        self.assertNotEqual([], replays, found.summary())
        self.assertEqual({4}, {injection.at.step for outcome in replays
                               for injection in outcome.injections})
