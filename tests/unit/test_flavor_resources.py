"""What a flavor named in an expectation allocates, as Nova documents it.

Nova's CPU resources (admin guide, "CPU topologies" and "Resource
classes"): a shared vCPU is VCPU, a dedicated one PCPU; a ``mixed``
flavor's dedicated vCPUs are those ``hw:cpu_dedicated_mask`` names (a
``^`` mask: all but those), or a realtime flavor's realtime vCPUs
(``hw:cpu_realtime_mask``); ``hw:emulator_threads_policy=isolate`` asks
one more PCPU for the emulator threads of a pinned guest. Each case
below works the amounts out from that and the flavor.
"""

from harness.core import scenario
from harness import testing


def flavor(vcpus=4, **extra_specs):
    return scenario.Flavor('f', vcpus, 1024, 1, extra_specs=extra_specs)


class TestFlavorResources(testing.TestCase):

    def assertCpus(self, expected, flavor):
        resources = flavor.resources()
        self.assertEqual(1024, resources.pop('MEMORY_MB'))
        self.assertEqual(1, resources.pop('DISK_GB'))
        self.assertEqual(expected, resources)

    def test_shared_and_dedicated(self):
        self.assertCpus({'VCPU': 4}, flavor())
        self.assertCpus({'PCPU': 4}, flavor(**{'hw:cpu_policy': 'dedicated'}))

    def test_an_isolated_emulator_thread_takes_one_more_pcpu(self):
        self.assertCpus({'PCPU': 5}, flavor(**{
            'hw:cpu_policy': 'dedicated',
            'hw:emulator_threads_policy': 'isolate'}))
        # Shared with the guest's or the host's shared CPUs: nothing more.
        self.assertCpus({'PCPU': 4}, flavor(**{
            'hw:cpu_policy': 'dedicated',
            'hw:emulator_threads_policy': 'share'}))

    def test_mixed_by_dedicated_mask(self):
        # vCPU 0 dedicated, 1-3 shared.
        self.assertCpus({'PCPU': 1, 'VCPU': 3}, flavor(**{
            'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0'}))
        # All but vCPUs 0 and 1: 2 and 3 dedicated.
        self.assertCpus({'PCPU': 2, 'VCPU': 2}, flavor(**{
            'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0-1'}))
        # Six vCPUs, 1-3 and 5 dedicated.
        self.assertCpus({'PCPU': 4, 'VCPU': 2}, flavor(6, **{
            'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '1-3,5'}))

    def test_mixed_by_realtime_mask(self):
        # Realtime vCPUs are the dedicated ones: all but vCPU 0.
        self.assertCpus({'PCPU': 3, 'VCPU': 1}, flavor(**{
            'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes',
            'hw:cpu_realtime_mask': '^0'}))
        # Without hw:cpu_realtime the realtime mask means nothing.
        self.assertCpus({'VCPU': 4}, flavor(**{
            'hw:cpu_policy': 'mixed', 'hw:cpu_realtime_mask': '^0'}))

    def test_mixed_with_an_isolated_emulator_thread(self):
        self.assertCpus({'PCPU': 2, 'VCPU': 3}, flavor(**{
            'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0',
            'hw:emulator_threads_policy': 'isolate'}))

    def test_resources_extra_specs_override(self):
        self.assertCpus({'VCPU': 2}, flavor(**{'resources:VCPU': '2'}))
        self.assertCpus({}, flavor(**{'resources:VCPU': '0'}))
