"""A known open bug's verdict, on Nova: "LP#<bug> looks fixed".

``scenarios/known_open_bugs.yaml`` passes while LP#1848343 makes the
breaks it declares (``test_scenarios`` runs it). Here the same scenario
declares one break more, one Nova 34 does not make (the destination's
tracker agrees with Placement throughout: the migration never reached
it): the scenario must fail, saying the bug looks fixed there.
"""

import os

import testtools

from harness.core import scenario as scenario_mod
from harness import testing

SCENARIO = os.path.join(os.path.dirname(__file__), 'scenarios',
                        'known_open_bugs.yaml')


class TestKnownOpenBug(testing.TestCase):

    def run_inner(self, scenario):
        """Run ``scenario`` as a scenario test does, inside this test."""

        class Inner(testing.ScenarioTestCase):
            # Only the verdict is under test here.
            compare_without_checks = False

            def test_scenario(self):
                self.run_scenario(scenario)

        result = testtools.TestResult()
        Inner('test_scenario').run(result)
        return result

    def test_bug_1848343_a_break_that_does_not_happen_looks_fixed(self):
        declared = scenario_mod.load(SCENARIO)[0]
        doc = dict(declared.raw)
        doc['known_open_bug'] = dict(doc['known_open_bug'])
        doc['known_open_bug']['breaks'] = list(
            doc['known_open_bug']['breaks']) + [
            {'check': 'tracker_agrees', 'subject': 'host dst, *', 'step': 4}]
        scenario = scenario_mod.parse(doc, SCENARIO + ' (one break more)',
                                      SCENARIO)
        result = self.run_inner(scenario)
        self.assertEqual([], result.errors)
        self.assertEqual(1, len(result.failures))
        text = result.failures[0][1]
        self.assertIn('LP#1848343 looks fixed: tracker_agrees on host dst, '
                      '* no longer breaks at step 4', text)
        # The breaks that do happen are not reported.
        self.assertNotIn('nothing_leaks', text)
