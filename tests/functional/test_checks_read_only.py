"""The checks only read: a check that runs Nova code does it on a copy.

- ``Cloud.trial`` puts the cloud back exactly: after a periodic that
  reconciled a stale tracker inside the trial, the tracker is stale again,
  and every database, the clock and the race points are as before.
- Every scenario in ``findings/`` fails with the invariants on at the same
  step, with the same accounting records, as without them (before the
  checks ran on a copy, the periodic-idempotence check reconciled the
  trackers after every step and hid some of these windows).

That a whole run leaves the same timeline with and without checks is
proved for every scenario of the suite by ``ScenarioTestCase``
(``compare_without_checks``).
"""

import glob
import os

from harness.cloud import reuse
from harness.core import invariants
from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod
from harness.core import timeline as timeline_mod
from harness.runners import runner
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FINDINGS = sorted(glob.glob(os.path.join(ROOT, 'findings', '*.yaml')))
# A destination periodic before finish_resize leaves dst's tracker
# counting the guest's old flavor (small) until its next periodic
# (findings/resize_dest_periodic_before_finish_resize.yaml).
STALE_DEST = """
name: a stale destination tracker
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - inject: {before: finish_resize, run: update_available_resource, on: dest}
  - resize: {server: vm1, flavor: large}
"""


class _Finding(object):
    def __init__(self, path):
        self.path = path
        self.__name__ = os.path.splitext(os.path.basename(path))[0]


class TestTrial(testing.TestCase):

    def test_a_trial_puts_a_stale_tracker_back(self):
        scenario = scenario_mod.parse(
            scenario_mod.safe_load(STALE_DEST), 'stale-dest')
        checked = []
        runner.run(scenario, keep_going=True, test_id=self.id(),
                   observers=[_AtRunDone(self.check_trial, checked)])
        self.assertEqual(['checked'], checked)

    def check_trial(self, cloud, timeline):
        """On the cloud the resize left, still alive at ``run_done``."""
        self.assertEqual('resize vm1 to large', timeline.entries[-1].label)
        before = cloud.snapshot()
        rt = cloud.computes['dst'].manager.rt
        tracked = (set(rt.tracked_instances), set(rt.tracked_migrations))
        recording = list(cloud.race.recording)
        clock = cloud.clock.state()
        # dst counts the guest with its old flavor: 1 vCPU, not 2.
        self.assertEqual(1, before.trackers['dst'].vcpus_used)
        with cloud.trial():
            cloud.run_periodics()
            inside = cloud.snapshot()
        # Read before anything else reads the clock (every read ticks it).
        self.assertEqual(clock, cloud.clock.state())
        # Inside the trial the periodic put dst's tracker right...
        self.assertEqual(2, inside.trackers['dst'].vcpus_used)
        after = cloud.snapshot()
        # ...and afterwards it is as the step left it, in every part.
        self.assertEqual(1, after.trackers['dst'].vcpus_used)
        self.assertEqual(
            timeline_mod.comparable(timeline_mod.Entry(0, '', before)),
            timeline_mod.comparable(timeline_mod.Entry(0, '', after)))
        self.assertIs(rt, cloud.computes['dst'].manager.rt)
        self.assertEqual(tracked, (set(rt.tracked_instances),
                                   set(rt.tracked_migrations)))
        self.assertEqual(recording, cloud.race.recording)


class _AtRunDone(object):
    """Observer: call ``check(cloud, timeline)`` when the run is done.

    The runner tears its cloud down after ``run_done``; until then the
    cloud is as the last step left it.
    """

    def __init__(self, check, done):
        self.check = check
        self.done = done
        self.cloud = None

    def run_started(self, scenario, cloud):
        self.cloud = cloud

    def run_done(self, scenario, timeline):
        self.check(self.cloud, timeline)
        self.done.append('checked')


class _FailsAlike(object):
    """One finding file (``finding``) fails alike with and without checks.

    One generated class per file (``TestFinding_<file stem>``), so
    stestr spreads them over its workers.
    """

    finding = None

    def test_fails_alike_with_and_without_invariants(self):
        finding = self.finding
        # One cloud for both runs, put back to its checkpoint in between.
        pool = self.useFixture(reuse.CloudPool())
        for scenario in scenario_mod.load(finding.path):
            checked = runner.run(scenario, keep_going=True,
                                 checks=[invariants.Checker()],
                                 test_id=self.id() + '.checked', pool=pool)
            plain = runner.run(scenario, keep_going=True,
                               test_id=self.id() + '.plain', pool=pool)
            self.assertTrue(plain.failed, '%s passes' % scenario.name)
            first = plain.failed[0]
            self.assertEqual(first.index, checked.failed[0].index,
                             scenario.name)
            expected_keys = set(problems_mod.EXPECTATIONS) | {
                problems_mod.STEP_FAILED}
            self.assertEqual(
                _records(first.problems),
                _records(p for p in checked.failed[0].problems
                         if p.check in expected_keys))
            self.assertTrue(any(p.accounting for p in first.problems))


def _load_all():
    for path in FINDINGS:
        finding = _Finding(path)
        # The file's stem as it is, so ``stestr run lp1848343`` finds it.
        name = 'TestFinding_%s' % finding.__name__
        globals()[name] = type(name, (_FailsAlike, testing.TestCase), {
            'finding': finding, '__module__': __name__})


_load_all()


def _records(problems):
    return [(p.check, p.subject, repr(p.expected), repr(p.actual))
            for p in problems]
