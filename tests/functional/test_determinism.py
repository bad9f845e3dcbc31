"""tools/determinism.py end to end, small: one quick scenario, twice.

Runs in this process (``workers=0``): it finds the scenario's test in the
suite, runs that test twice, and the two runs give one verdict and one
timeline.
"""

# Nova (and its monkey patching) comes in with the module, not inside the
# test, as with every functional test module.
from harness.cloud import fixture as cloud  # noqa: F401
from harness import testing
from tools import determinism

SCENARIO = 'boot__boot_on_a_fake_host_with_periodics_around_it'


class TestDeterminism(testing.TestCase):

    def test_one_scenario_twice_is_steady(self):
        report = determinism.check(runs=2, workers=0,
                                   pattern='^%s$' % SCENARIO)
        self.assertFalse(report.interrupted)
        self.assertEqual('', report.error)
        (summary,) = report.summaries
        self.assertEqual(SCENARIO, summary.item)
        self.assertEqual(2, summary.runs)
        self.assertEqual(['pass'], list(summary.verdicts))
        self.assertEqual(1, len(summary.timelines), summary.divergence())
        self.assertEqual(1, len(summary.points), summary.divergence())
        self.assertFalse(summary.flaky)
        timeline, points = (summary.texts[key] for key in (
            list(summary.timelines)[0], list(summary.points)[0]))
        # The rendered timeline, then the detail of every step.
        self.assertTrue(timeline.startswith('== timeline 1\n#  step'),
                        timeline)
        self.assertIn('before build_and_run_instance on ', points)
        self.assertEqual(['no'], [line.split()[5] for line in
                                  determinism.table(report.summaries)[1:]])
