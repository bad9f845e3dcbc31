"""The explorer excuses a tracker lag an injected periodic caught up early.

The first scenario of tests/functional/scenarios/live_migrate.yaml live
migrates a guest between fake hosts and expects the destination's
tracker to count nothing until its own periodic (``tracker: {}``):
without a NUMA topology the destination makes no claim, and
``post_live_migration_at_destination`` does not count the guest there
(the ``live-migrated here`` window of ``tracker_agrees``). A periodic
injected on the destination once it is chosen counts the guest early:
the tracker then holds what Placement holds, and the scenario's
expectation of the lag fails although nothing is wrong.

``harness.runners.healed`` takes those problems out of an explored
replay: the exploration fails in no interleaving, and counts the ones
it excused (``Report.healed``). The same replay run by ``harness run``
still fails that expectation, and only that: the tracker agrees with
Placement (no ``tracker_agrees`` problem), so the rule excused a lag
caught up, not a wrong count. (tests/unit/test_explorer_healed.py
proves each condition of the rule on hand-built snapshots.)
"""

import os

import fixtures

from harness.core import invariants
from harness.core import scenario as scenario_mod
from harness.runners import explorer
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCENARIOS = os.path.join(ROOT, 'tests', 'functional', 'scenarios',
                         'live_migrate.yaml')
NAME = "live migrate on fake hosts, scheduler's choice"
# The scenario's step that live migrates (boot, run_periodic, it).
LIVE_MIGRATE = 3


def live_migration():
    return next(scenario for scenario in scenario_mod.load(SCENARIOS)
                if scenario.name == NAME)


class TestHealedLag(testing.TestCase):

    def test_the_exploration_fails_in_no_interleaving(self):
        out = self.useFixture(fixtures.TempDir()).path
        report = explorer.Explorer(depth=1, workers=2, out_dir=out).explore(
            live_migration())
        self.assertEqual([], [str(o) for o in report.failed],
                         report.summary())
        self.assertGreater(report.healed, 0, report.summary())
        self.assertIn('caught up early', report.summary())

    def test_harness_run_still_holds_the_replay_to_its_expectation(self):
        scenario = live_migration()
        ruler = explorer.Explorer(depth=1)
        plan = ruler.plan(scenario)
        # The last point of the live migration, on the destination alone:
        # the destination was chosen long before.
        injection = [one for one in plan.runnable
                     if one[0].at.step == LIVE_MIGRATE
                     and one[0].hosts == ('dest',)][-1]
        job = ruler._job(scenario, injection)
        result = explorer.replay(job)
        self.assertFalse(result['failed'], result['problems'])
        self.assertGreater(result['healed'], 0)

        replayed = scenario_mod.parse(job['document'], job['where'],
                                      job['where'])
        timeline = runner.run(replayed, keep_going=True,
                              checks=[invariants.Checker()])
        failed = [(entry.label, problem.check, problem.subject)
                  for entry in timeline.failed for problem in entry.problems]
        self.assertEqual(
            [(replayed.steps[job['steps_at'][LIVE_MIGRATE - 1] - 1].label,
              'tracker', 'dst')], failed)
