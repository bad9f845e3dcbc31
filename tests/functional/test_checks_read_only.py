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
(``compare_without_checks``). The findings' classes run with the proofs
(``tox -e functional-proofs``), out of the README's command for its time.
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


PF_AND_VFS = """
name: a guest holding a VF of a PF that is in device_spec too
config:
  pci:
    alias:
      - '{"name": "vf", "vendor_id": "8086", "product_id": "1889",
         "device_type": "type-VF"}'
  filter_scheduler:
    enabled_filters: [ComputeFilter, PciPassthroughFilter]
hosts:
  h1: {profile: nfv-2s-10c-smt2-pf-vfs}
flavors:
  vf1: {vcpus: 1, ram: 512, disk: 1,
        extra_specs: {"pci_passthrough:alias": "vf:1"}}
steps:
  - boot: {server: vm1, flavor: vf1, host: h1}
"""


def _device_tree(tracker):
    """Each PCI device's links, checked for identity, as comparable data.

    The parent a VF names and the children a PF lists must be the very
    objects of the tracker's device list (what claim, allocate and free
    follow), and so must the devices its PCI pools hold.
    """
    pci = tracker.pci_tracker
    devices = {id(dev): dev for dev in pci.pci_devs}
    tree = []
    for dev in pci.pci_devs:
        parent = dev.parent_device
        if parent is not None and id(parent) not in devices:
            raise AssertionError('%s names a PF outside the device list'
                                 % dev.address)
        if any(id(child) not in devices or child.parent_device is not dev
               for child in dev.child_devices):
            raise AssertionError('%s lists a VF outside the device list '
                                 'or not naming it' % dev.address)
        tree.append((dev.address, dev.status,
                     parent.address if parent is not None else None,
                     tuple(sorted(c.address for c in dev.child_devices))))
    for pool in pci.stats.pools:
        if any(id(dev) not in devices for dev in pool['devices']):
            raise AssertionError('a PCI pool holds a device outside the '
                                 'device list')
    return sorted(tree)


class TestPciDeviceTrees(testing.TestCase):
    """Putting a tracker back keeps its PF/VF tree (nova/pci/manager.py).

    ``copy.deepcopy`` of a ``PciDevice`` copies its fields only, not the
    ``parent_device``/``child_devices`` links; a tracker put back from
    such a copy claims a VF without blocking its PF.
    """

    def test_a_trial_and_a_kept_cloud_keep_every_link(self):
        scenario = scenario_mod.parse(
            scenario_mod.safe_load(PF_AND_VFS), 'pf-and-vfs')
        checked = []
        runner.run(scenario, test_id=self.id(),
                   observers=[_AtRunDone(self.check_links, checked)])
        self.assertEqual(['checked'], checked)

    def check_links(self, cloud, timeline):
        rt = cloud.computes['h1'].manager.rt
        before = _device_tree(rt)
        # What the scenario left: vm1 holds one VF, which blocks its PF.
        statuses = sorted(status for _a, status, _p, _c in before)
        self.assertEqual(['allocated', 'available', 'available',
                          'available', 'unavailable'], statuses)
        self.assertEqual(('0000:12:00.1', '0000:12:00.2', '0000:12:00.3',
                          '0000:12:00.4'),
                         [row for row in before
                          if row[0] == '0000:12:00.0'][0][3])
        with cloud.trial():
            cloud.run_periodics()
        self.assertIs(rt, cloud.computes['h1'].manager.rt)
        self.assertEqual(before, _device_tree(rt))
        # A kept cloud's copy of a tracker (Checkpoint.tracker) too.
        from harness.cloud import checkpoint
        saved = checkpoint.Checkpoint(cloud)
        try:
            self.assertEqual(before, _device_tree(saved.tracker('h1')))
        finally:
            saved.close()


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
