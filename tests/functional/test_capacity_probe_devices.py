"""The capacity probe's device rule on a device tracked in Placement.

``tests/functional/capacity/evacuate_then_delete_device.yaml``: a guest
with one NVMe drive evacuated to h2 and deleted leaves h2's PCI tracker
holding the drive until h2's next periodic, inside ``delete``'s window,
while Placement has freed the drive's provider; a guest of both drives,
which Placement allows there, is refused meanwhile. The scenario encodes
that (the boot of two drives expects "No valid host was found") and
passes with the invariants every run checks; with the probe on, the
refused drive is reported at the delete, by the compute's claim and the
scheduler's filter alike, with both views. Elsewhere (the evacuation's
window, the last step: h2's drives both held by a guest Placement counts
there, the device's phantom-capacity request refused) Nova's answers
agree with the rules. And phantom capacity on a recorded finding: a
drive whose provider Placement counts used but the host's pools free.
"""

import os

from tests.functional import test_capacity_probe

HERE = os.path.dirname(os.path.abspath(__file__))


class TestEvacuationThenDelete(test_capacity_probe.ProbeScenarioTest):

    SCENARIO = os.path.join(HERE, 'capacity',
                            'evacuate_then_delete_device.yaml')

    def test_the_probe_reports_the_refused_drive_at_the_delete(self):
        timeline = self.run_it(capacity_probe=True)
        # At the delete, and again after the refused boot (the window is
        # still open); h2's periodic (step 8) puts it right.
        self.assertEqual([6, 7], [e.index for e in timeline.failed])
        entry = timeline.failed[0]
        self.assertEqual('delete vm1', entry.label)
        [problem] = entry.problems
        # The drive the evacuation took on h2: Placement's first
        # candidate, the provider of 0000:d8:00.0 (the step's expectation
        # shows one drive allocated; which one is the subject).
        self.assertEqual(('capacity_probe',
                          'host h2, device h2_0000:D8:00.0'),
                         (problem.check, problem.subject))
        text = str(problem)
        # The host, the request, both of Nova's views, the tracker's and
        # Placement's, and the window.
        self.assertIn('capacity_probe: user-visible window: host h2 refuses '
                      'one CUSTOM_PCI_8086_0B60 device (8086:0b60, '
                      'type-PCI) of provider h2_0000:D8:00.0', text)
        self.assertIn("in the compute's claim and the scheduler's "
                      "PciPassthroughFilter", text)
        self.assertIn('Placement: CUSTOM_PCI_8086_0B60 free 1 (total 1, '
                      'reserved 0, used 0)', text)
        self.assertIn('tracker: 0000:d8:00.0 allocated (vm1)', text)
        self.assertIn('(moved before) deleted, counted until the next '
                      'periodic', text)

    def test_without_the_probe_it_passes_as_today(self):
        timeline = self.run_it(capacity_probe=False)
        self.assertEqual([], timeline.failed)
        # The start and nine steps.
        self.assertEqual(10, len(timeline))


class TestEvacuationClaimsAnotherDrive(test_capacity_probe.ProbeScenarioTest):
    """Phantom capacity, on a recorded finding.

    ``findings/devices_pci_in_placement_evacuation_ignores_allocated_
    device.yaml``: the evacuation's claim on h2 takes drive 0000:d8:00.0
    while Placement allocated the provider of 0000:d9:00.0 (vm1 holds
    both h2 units then, as the finding's step 8 expectation shows). h2's
    PCI pools count 0000:d9:00.0 free, its provider is full: one drive of
    it, which Placement refuses, is taken by both views.
    """

    SCENARIO = os.path.join(
        os.path.dirname(os.path.dirname(HERE)), 'findings',
        'devices_pci_in_placement_evacuation_ignores_allocated_device.yaml')

    def test_the_probe_reports_the_drive_placement_refuses(self):
        timeline = self.run_it(capacity_probe=True)
        [evacuation] = [e for e in timeline if e.index == 8]
        self.assertEqual('evacuate vm1 to h2', evacuation.label)
        [problem] = [p for p in evacuation.problems
                     if p.check == 'capacity_probe']
        self.assertEqual(('host h2, device_phantom_capacity '
                          'h2_0000:D9:00.0', 'refused', 'taken'),
                         (problem.subject, problem.expected, problem.actual))
        text = str(problem)
        self.assertIn("host h2 would take one CUSTOM_PCI_8086_0B60 device "
                      "(8086:0b60, type-PCI) of provider h2_0000:D9:00.0, "
                      "no NUMA topology that Placement refuses (phantom "
                      "capacity), in the compute's claim and the "
                      "scheduler's PciPassthroughFilter", text)
        self.assertIn('Placement: CUSTOM_PCI_8086_0B60 free 0 (total 1, '
                      'reserved 0, used 1); tracker: 0000:d9:00.0 '
                      'available', text)
