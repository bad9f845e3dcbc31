"""The capacity probe on issue 44's scenario, against Nova itself.

``tests/functional/capacity/live_migrate_then_delete.yaml``: a pinned
guest live-migrated to dest and deleted leaves dest's tracker pinning CPU
2 until dest's next periodic, inside ``delete``'s window; a guest of two
dedicated CPUs, which Placement allows there, is refused meanwhile. The
scenario encodes that (the second boot expects "No valid host was
found") and passes with the invariants every run checks; with the probe
on, the refusal is reported at the delete itself, with both views. The
probe's last-step run (dest then holds a guest of both its dedicated
CPUs, src nothing) and its run while the live migration's window is open
(dest pins CPU 2 of 1 PCPU used) find nothing: Nova's answers there
agree with the rules.
"""

import io
import os

import fixtures

from harness.cloud import reuse
from harness.core import invariants
from harness.core import scenario as scenario_mod
from harness.runners import cli
from harness.runners import runner
from harness import testing

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, 'capacity', 'live_migrate_then_delete.yaml')
FINDING = 'delete_after_move_keeps_pinned_cpus_until_periodic'


class ProbeScenarioTest(testing.TestCase):
    """Runs the one scenario of ``SCENARIO`` with the probe on or off."""

    SCENARIO = SCENARIO

    def run_it(self, capacity_probe):
        [scenario] = scenario_mod.load(self.SCENARIO)
        pool = self.useFixture(reuse.CloudPool())
        checker = invariants.Checker(capacity_probe=capacity_probe)
        return runner.run(scenario, keep_going=True, checks=[checker],
                          test_id=self.id(), pool=pool)


class TestLiveMigrationThenDelete(ProbeScenarioTest):

    def test_the_probe_reports_the_refused_boot_at_the_delete(self):
        timeline = self.run_it(capacity_probe=True)
        # At the delete, and again after the refused boot (the window is
        # still open); dest's periodic (step 5) puts it right.
        self.assertEqual([3, 4], [e.index for e in timeline.failed])
        entry = timeline.failed[0]
        self.assertEqual('delete vm1', entry.label)
        [problem] = entry.problems
        self.assertEqual(('capacity_probe', 'host dest, dedicated'),
                         (problem.check, problem.subject))
        text = str(problem)
        # The host, the request, the tracker's view and Placement's.
        self.assertIn('host dest refuses 2 dedicated CPUs', text)
        self.assertIn('tracker: cell 0: CPU 2 pinned of 2,3', text)
        self.assertIn('Placement: PCPU free 2 (total 2, reserved 0, '
                      'used 0)', text)
        self.assertIn('(moved before) deleted, counted until the next '
                      'periodic', text)

    def test_without_the_probe_it_passes_as_today(self):
        timeline = self.run_it(capacity_probe=False)
        self.assertEqual([], timeline.failed)
        # The start and six steps.
        self.assertEqual(7, len(timeline))


class TestTheSwitch(testing.TestCase):
    """``harness run``: the probe on unless turned off; known findings."""

    def setUp(self):
        super().setUp()
        # The run's default, whatever the environment of this test says.
        self.useFixture(fixtures.EnvironmentVariable(invariants.PROBE_ENV))

    def run_cli(self, *argv, path=SCENARIO):
        out = io.StringIO()
        # The periodic check is not what this is about: the run is shorter
        # without it, and the probe's verdict does not depend on it.
        code = cli.main(['run', '--no-periodic-check'] + list(argv)
                        + [path], out=out)
        return code, out.getvalue()

    def test_on_by_default_it_fails_at_the_delete(self):
        code, out = self.run_cli()
        self.assertEqual(cli.EXIT_FAIL, code, out)
        self.assertIn('FAILED step 3 (delete vm1)', out)
        self.assertIn('host dest refuses 2 dedicated CPUs', out)

    def test_turned_off_it_passes(self):
        code, out = self.run_cli('--no-capacity-probe')
        self.assertEqual(cli.EXIT_PASS, code, out)

    def with_finding(self, *steps):
        """The scenario declaring the finding's probe break at ``steps``."""
        [scenario] = scenario_mod.load(SCENARIO)
        doc = scenario.document()
        doc['known_finding'] = {'finding': FINDING, 'breaks': [
            {'check': 'capacity_probe', 'subject': 'host dest, dedicated',
             'step': step} for step in steps]}
        return self.write_yaml(doc, 'declared.yaml')

    def test_a_known_finding_passes_while_it_shows(self):
        # The delete and the refused boot (the window is still open).
        code, out = self.run_cli(path=self.with_finding(3, 4))
        self.assertEqual(cli.EXIT_PASS, code, out)

    def test_a_known_finding_whose_break_stops_looks_fixed(self):
        # Nothing is refused after dest's periodic (step 5).
        code, out = self.run_cli(path=self.with_finding(3, 4, 5))
        self.assertEqual(cli.EXIT_FAIL, code, out)
        self.assertIn('finding %s looks fixed: capacity_probe on host dest, '
                      'dedicated no longer breaks at step 5' % FINDING, out)

    def test_a_known_finding_with_the_probe_off_is_a_note(self):
        # Turned off by the user: the break cannot show, nothing is fixed.
        code, out = self.run_cli('--no-capacity-probe',
                                 path=self.with_finding(3, 4))
        self.assertEqual(cli.EXIT_PASS, code, out)
        self.assertIn('note: finding %s: capacity_probe is not checked in '
                      'this run' % FINDING, out)
