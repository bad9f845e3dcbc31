"""harness determinism end to end, small: one quick scenario, twice.

Runs in this process (``workers=0``): it finds the scenario's test in the
suite, runs that test twice, watching it through the observer hooks, and
the two runs give one verdict, one timeline and one race-point record.
"""

import json
import os
import re

# Nova (and its monkey patching) comes in with the module, not inside the
# test, as with every functional test module.
from harness.cloud import fixture as cloud  # noqa: F401
from harness.core import scenario as scenario_mod
from harness.runners import determinism
from harness import testing

SCENARIO = 'boot__boot_on_a_fake_host_with_periodics_around_it'


class TestDeterminism(testing.TestCase):

    def test_one_scenario_twice_is_steady(self):
        report = determinism.check(runs=2, workers=0,
                                   pattern='%s$' % SCENARIO)
        self.assertFalse(report.interrupted)
        self.assertEqual('', report.error)
        (summary,) = report.summaries
        self.assertRegex(summary.item,
                         r'^test_scenarios\.Boot\.test_\d+_%s$' % SCENARIO)
        # What the test ran, as the hooks said: that scenario (as many
        # times as its test class runs it), the same in both runs.
        self.assertEqual([SCENARIO], summary.scenarios)
        one, two = (run.scenarios for run in report.runs)
        self.assertEqual(one, two)
        self.assertEqual({(SCENARIO, os.path.join(
            'tests', 'functional', 'scenarios', 'boot.yaml'))},
            {tuple(ran) for ran in one})
        self.assertEqual(2, summary.runs)
        self.assertEqual(['pass'], list(summary.verdicts))
        self.assertEqual(1, len(summary.timelines), summary.divergence())
        self.assertEqual(1, len(summary.points), summary.divergence())
        self.assertFalse(summary.flaky)
        timeline, points = (summary.texts[key] for key in (
            list(summary.timelines)[0], list(summary.points)[0]))
        # The run's timeline, from its start, every step with its
        # snapshot's fields.
        (scenario,) = [s for s in scenario_mod.load(
            os.path.join(determinism.ROOT, 'tests', 'functional', 'scenarios',
                         'boot.yaml')) if s.id == SCENARIO]
        self.assertTrue(timeline.startswith(
            '== timeline 1: %s\n-- step 0: start\n' % SCENARIO), timeline)
        first = timeline.split('\n== ')[0]
        steps = re.findall(r'^-- step (\d+): ', first, re.M)
        self.assertEqual([str(n) for n in range(len(scenario.steps) + 1)],
                         steps)
        self.assertIn('snapshot.allocations.vm1.host1.VCPU = 1', timeline)
        passages = [json.loads(line) for line in points.split('\n')
                    if line.startswith('{')]
        self.assertIn(('before', 'build_and_run_instance'),
                      [(p['when'], p['point']) for p in passages])
        self.assertTrue(all(isinstance(p['version'], int)
                            for p in passages))
        (row,) = determinism.table(report.summaries)[1:]
        self.assertRegex(row, r'^%s +2 +1 +1 +1 +no +\d+\.\d\d$'
                         % re.escape(summary.item))
