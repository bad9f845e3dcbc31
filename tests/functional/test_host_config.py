"""A profiled host's device_spec and versions, checked as its compute will.

Nova's libvirt compute parses ``[pci] device_spec`` at start
(``nova.pci.whitelist``) and refuses ``live_migratable`` devices on a
libvirt older than 10.0.0 or a QEMU older than 8.2.2
(``LibvirtDriver._check_pci_whitelist``,
``MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION`` / ``..._QEMU_VERSION``); it does
not start on a libvirt older than ``MIN_LIBVIRT_VERSION`` (8.0.0). Each is
refused here before any service starts, naming the host, the profile and
the field. The host: a PF at 0000:3b:00.0 with VFs 0000:3b:00.1-2.
"""

import copy
import os

import ddt
import fixtures
import yaml

from harness.cloud import config
from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.runners import runner
from harness import testing

PROFILE = {
    'description': 'a host with one E810 port and two VFs',
    'sockets': 1,
    'disk_gb': 100,
    'cells': [{'socket': 0, 'cpus': '0-3', 'memory_mb': 8192}],
    'devices': [{'kind': 'pf', 'address': '0000:3b:00.0', 'cell': 0,
                 'vendor': '8086', 'product': '1592', 'vfs': 2,
                 'vf_product': '1889'}],
}
REGEX_VFS = {'domain': '.*', 'bus': '3b', 'slot': '00', 'function': '[1-2]'}
NEWEST_NEEDED = {'libvirt': '10.0.0', 'qemu': '8.2.2'}


@ddt.ddt
class TestDeviceSpecAsNovaReadsIt(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def scenario(self, specs, hypervisor=None):
        doc = copy.deepcopy(PROFILE)
        doc['nova'] = {'pci': {'device_spec': specs}}
        if hypervisor:
            doc['hypervisor'] = hypervisor
        self.profile = os.path.join(self.dir, 'nic.yaml')
        with open(self.profile, 'w') as f:
            yaml.safe_dump(doc, f)
        return scenario_mod.parse(
            {'name': 'nic', 'hosts': {'h1': {'profile': self.profile}},
             'steps': [{'run_periodic': 'update_available_resource'}]},
            'c.yaml', 'c.yaml')

    def assertRefused(self, scenario, field, *words):
        error = str(self.assertRaises(errors.ScenarioError, config.validate,
                                      scenario))
        self.assertIn("c.yaml, scenario 'nic', host h1 (profile %s), "
                      'field "%s"' % (self.profile, field), error)
        for word in words:
            self.assertIn(word, error)

    @ddt.data([{'address': '0000:3b:00.*', 'physical_network': 'p1'}],
              [{'address': '*:3b:*.*'}],
              [{'address': REGEX_VFS, 'physical_network': 'p1'}],
              # The PF's address: Nova matches its VFs by it too.
              [{'address': '0000:3b:00.0', 'physical_network': 'p1'}])
    def test_taken(self, specs):
        config.validate(self.scenario(specs))

    @ddt.data([{'address': '0000:3c:*.*'}],
              [{'address': dict(REGEX_VFS, bus='3c')}],
              [{'address': '0000:3b:00.*', 'vendor_id': '15b3'}])
    def test_matching_no_device(self, specs):
        self.assertRefused(self.scenario(specs), 'nova.pci.device_spec[0]',
                           'matches no device', "Nova's own matching")

    @ddt.unpack
    @ddt.data(({'address': '0000:3b:00.9'}, 'Invalid [pci]device_spec'),
              ({'address': dict(REGEX_VFS, bus='((')}, 'address'))
    def test_nova_refuses(self, spec, reason):
        self.assertRefused(self.scenario([spec]), 'nova.pci.device_spec[0]',
                           'Nova refuses it', reason)

    def test_live_migratable_needs_the_versions_nova_gates_it_on(self):
        specs = [{'address': REGEX_VFS, 'physical_network': 'p1',
                  'live_migratable': True}]
        # Unsaid: what Nova's fake libvirt reports, Nova's minimum (8.0.0
        # and 6.2.0), older than the 10.0.0 / 8.2.2 the VFIO variant needs.
        self.assertRefused(self.scenario(specs), 'hypervisor',
                           'libvirt 8.0.0 and QEMU 6.2.0',
                           "live_migratable but it's not supported by "
                           'libvirt')
        self.assertRefused(self.scenario(specs, {'libvirt': '10.0.0'}),
                           'hypervisor', 'libvirt 10.0.0 and QEMU 6.2.0')
        config.validate(self.scenario(specs, NEWEST_NEEDED))

    def test_older_than_nova_supports(self):
        self.assertRefused(
            self.scenario([{'address': '0000:3b:00.*'}],
                          {'libvirt': '7.10.0'}),
            'hypervisor.libvirt', '7.10.0 is older than the oldest libvirt '
            'this Nova supports (8.0.0)')

    def test_a_live_migratable_vf_host_starts_with_its_versions(self):
        # The stand-up Nova refused with an InvalidConfiguration naming no
        # host: with the versions said, the compute starts and reports the
        # VFs the spec names (not their PF: the regex names functions 1-2).
        timeline = runner.run(self.scenario(
            [{'address': REGEX_VFS, 'physical_network': 'p1',
              'live_migratable': True}], NEWEST_NEEDED))
        devices = timeline.entries[-1].snapshot.devices['h1']
        self.assertEqual({'0000:3b:00.1': 'type-VF',
                          '0000:3b:00.2': 'type-VF'},
                         {address: device.type
                          for address, device in devices.items()})
