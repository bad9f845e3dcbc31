"""Devices in host profiles, the ``devices``/``pci`` expectations and the
``devices_agree`` invariant, without a cloud.
"""

import copy
import os

import fixtures
import yaml

from harness.cloud import libvirt
from harness.core import checking
from harness.core import errors
from harness.core import expect
from harness.core import invariants
from harness.core import profile_devices
from harness.core import profiles
from harness.core import scenario
from harness.core import snapshot
from harness import testing

# Two cells; a NIC port with two VFs on cell 0, a drive on cell 1.
VALID = {
    'description': 'a test host with devices',
    'sockets': 1,
    'disk_gb': 100,
    'cells': [
        {'socket': 0, 'cpus': '0-1', 'memory_mb': 4096},
        {'socket': 0, 'cpus': '2-3', 'memory_mb': 4096},
    ],
    'devices': [
        {'kind': 'pf', 'address': '0000:3b:00.0', 'cell': 0,
         'vendor': '8086', 'product': '1592', 'vfs': 2,
         'vf_product': '1889'},
        {'kind': 'pci', 'address': '0000:d8:00.0', 'cell': 1,
         'vendor': '8086', 'product': '0b60'},
        {'kind': 'mdev_gpu', 'address': '0000:af:00.0', 'cell': 1,
         'vendor': '10de', 'product': '13f2', 'mdev_types': ['nvidia-11']},
    ],
    'nova': {
        'pci': {'device_spec': [{'vendor_id': '8086',
                                 'product_id': '0b60'}],
                'report_in_placement': True},
        'devices': {'enabled_mdev_types': ['nvidia-11']},
    },
}


class TestShippedDeviceProfiles(testing.TestCase):

    def test_three_profiles_have_devices(self):
        with_devices = [name for name in profiles.known_profiles()
                        if profiles.load_profile(name).devices]
        self.assertGreaterEqual(len(with_devices), 3)
        self.assertIn('nfv-2s-10c-smt2-reserved', with_devices)

    def test_nfv_host_has_nics_on_both_cells(self):
        nfv = profiles.load_profile('nfv-2s-10c-smt2-reserved')
        pfs = [d for d in nfv.devices if d.kind == 'pf']
        self.assertEqual({0, 1}, {pf.cell for pf in pfs})
        for pf in pfs:
            vfs = [d for d in nfv.devices if d.pf == pf.address]
            self.assertEqual(4, len(vfs))
            self.assertEqual({pf.cell}, {vf.cell for vf in vfs})
            self.assertEqual({'1889'}, {vf.product for vf in vfs})

    def test_vf_counts_per_pf(self):
        # Two PFs of four VFs each (the test above): the fake's vf_ratio
        # of each; a host without VFs has none.
        nfv = profiles.load_profile('nfv-2s-10c-smt2-reserved')
        pfs = sorted(d.address for d in nfv.devices if d.kind == 'pf')
        self.assertEqual({pf: 4 for pf in pfs},
                         profile_devices.vf_counts(nfv.devices))
        # A host whose only device is a whole PCI drive.
        dev = profiles.load_profile('dev-1s-8c-smt2')
        self.assertEqual({}, profile_devices.vf_counts(dev.devices))

    def test_xeon_drives_and_gpu(self):
        xeon = profiles.load_profile('xeon-2s-20c-smt2')
        kinds = {d.address: (d.kind, d.cell) for d in xeon.devices}
        self.assertEqual(('pci', 1), kinds['0000:d8:00.0'])
        self.assertEqual(('mdev_gpu', 1), kinds['0000:af:00.0'])


class TestDeviceProfiles(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def write(self, doc):
        path = os.path.join(self.dir, 'host.yaml')
        with open(path, 'w') as f:
            f.write(yaml.safe_dump(doc))
        return path

    def assertRefused(self, doc, field, *words):
        path = self.write(doc)
        exc = self.assertRaises(errors.ProfileError,
                                profiles.load_profile, path)
        message = str(exc)
        self.assertTrue(message.startswith(path + ': ' + field), message)
        for word in words:
            self.assertIn(word, message)

    def variant(self):
        return copy.deepcopy(VALID)

    def test_valid_expands_vfs(self):
        profile = profiles.load_profile(self.write(VALID))
        by_address = {d.address: d for d in profile.devices}
        self.assertEqual(['0000:3b:00.0', '0000:3b:00.1', '0000:3b:00.2',
                          '0000:af:00.0', '0000:d8:00.0'],
                         sorted(by_address))
        vf = by_address['0000:3b:00.2']
        self.assertEqual(('vf', 0, '0000:3b:00.0', '1889'),
                         (vf.kind, vf.cell, vf.pf, vf.product))
        self.assertEqual(('nvidia-11',),
                         by_address['0000:af:00.0'].mdev_types)

    def test_vdpa_pf_makes_its_vfs_vdpa_devices(self):
        doc = self.variant()
        doc['devices'][0]['vdpa'] = True
        # A VF written out under the vDPA PF is one of its vDPA devices.
        doc['devices'].append({'kind': 'vf', 'address': '0000:3b:00.3',
                               'cell': 0, 'vendor': '8086',
                               'product': '1889', 'pf': '0000:3b:00.0'})
        by_address = {d.address: d for d in profiles.load_profile(
            self.write(doc)).devices}
        self.assertEqual(
            {'0000:3b:00.0': (True, 'type-PF'), '0000:3b:00.1':
             (True, 'vdpa'), '0000:3b:00.2': (True, 'vdpa'),
             '0000:3b:00.3': (True, 'vdpa'), '0000:d8:00.0':
             (False, 'type-PCI'), '0000:af:00.0': (False, 'type-PCI')},
            {address: (d.vdpa, d.nova_type)
             for address, d in by_address.items()})

    def test_serial_shows_on_the_pf_and_its_vfs(self):
        doc = self.variant()
        doc['devices'][0]['serial'] = 'MT0000X00001'
        by_address = {d.address: d for d in profiles.load_profile(
            self.write(doc)).devices}
        self.assertEqual(
            {'0000:3b:00.0': 'MT0000X00001', '0000:3b:00.1': 'MT0000X00001',
             '0000:3b:00.2': 'MT0000X00001', '0000:d8:00.0': '',
             '0000:af:00.0': ''},
            {address: d.serial for address, d in by_address.items()})

    def test_serial_only_on_a_pf_and_a_serial_number(self):
        doc = self.variant()
        doc['devices'][1]['serial'] = 'MT1'
        self.assertRefused(doc, 'devices[1].serial', 'only a pf device')
        doc = self.variant()
        doc['devices'][0]['serial'] = 'MT 1'
        self.assertRefused(doc, 'devices[0].serial', 'a serial number')

    def test_vf_numbers_count_from_0_in_address_order(self):
        # As the kernel names a PF's VFs in sysfs (virtfn0, virtfn1, ...).
        doc = self.variant()
        doc['devices'][0]['vfs'] = 9
        profile = profiles.load_profile(self.write(doc))
        self.assertEqual(
            [0, 1, 6, 7, 8, None, None],
            [libvirt.vf_number(profile, address) for address in (
                '0000:3b:00.1', '0000:3B:00.2', '0000:3b:00.7',
                '0000:3b:01.0', '0000:3b:01.1', '0000:3b:00.0',
                '0000:d8:00.0')])

    def test_vdpa_only_on_a_pf_and_true_or_false(self):
        doc = self.variant()
        doc['devices'][1]['vdpa'] = True
        self.assertRefused(doc, 'devices[1].vdpa', 'only a pf device')
        doc = self.variant()
        doc['devices'][0]['vdpa'] = 'yes'
        self.assertRefused(doc, 'devices[0].vdpa', 'true or false')

    def test_vfs_wrap_to_the_next_slot(self):
        self.assertEqual(
            ['0000:3b:00.7', '0000:3b:01.0', '0000:3b:01.1'],
            profile_devices.vf_addresses('0000:3b:00.0', 9)[-3:])

    def test_conf_overrides(self):
        conf = profiles.load_profile(self.write(VALID)).conf_overrides()
        self.assertEqual(['{"product_id": "0b60", "vendor_id": "8086"}'],
                         conf[('pci', 'device_spec')])
        self.assertIs(True, conf[('pci', 'report_in_placement')])
        self.assertEqual(['nvidia-11'],
                         conf[('devices', 'enabled_mdev_types')])

    def test_vf_without_pf(self):
        doc = self.variant()
        doc['devices'].append({'kind': 'vf', 'address': '0000:5e:00.1',
                               'cell': 0, 'vendor': '8086',
                               'product': '1889', 'pf': '0000:5e:00.0'})
        self.assertRefused(doc, 'devices[3].pf', 'no PF there')

    def test_vf_needs_pf_field(self):
        doc = self.variant()
        doc['devices'].append({'kind': 'vf', 'address': '0000:5e:00.1',
                               'cell': 0, 'vendor': '8086',
                               'product': '1889'})
        self.assertRefused(doc, 'devices[3]', "needs 'pf'")

    def test_vf_on_another_cell_than_its_pf(self):
        doc = self.variant()
        doc['devices'].append({'kind': 'vf', 'address': '0000:3b:00.3',
                               'cell': 1, 'vendor': '8086',
                               'product': '1889', 'pf': '0000:3b:00.0'})
        self.assertRefused(doc, 'devices[3].cell', 'its PF')

    def test_cell_the_host_lacks(self):
        doc = self.variant()
        doc['devices'][1]['cell'] = 2
        self.assertRefused(doc, 'devices[1].cell', 'does not exist')

    def test_duplicate_address(self):
        doc = self.variant()
        doc['devices'][1]['address'] = '0000:3b:00.2'
        self.assertRefused(doc, 'devices[1]', '0000:3b:00.2',
                           'devices[0].vfs')

    def test_unknown_kind(self):
        doc = self.variant()
        doc['devices'][1]['kind'] = 'fpga'
        self.assertRefused(doc, 'devices[1].kind', 'unknown device kind')

    def test_bad_address(self):
        doc = self.variant()
        doc['devices'][1]['address'] = 'd8:00.0'
        self.assertRefused(doc, 'devices[1].address', 'PCI address')

    def test_bad_vendor(self):
        doc = self.variant()
        doc['devices'][1]['vendor'] = 'intel'
        self.assertRefused(doc, 'devices[1].vendor', 'four hex digits')

    def test_key_of_another_kind(self):
        doc = self.variant()
        doc['devices'][1]['vfs'] = 2
        self.assertRefused(doc, 'devices[1].vfs', 'only a pf device')

    def test_pf_with_vfs_needs_their_product(self):
        doc = self.variant()
        del doc['devices'][0]['vf_product']
        self.assertRefused(doc, 'devices[0]', 'vf_product')

    def test_unknown_mdev_type(self):
        doc = self.variant()
        doc['devices'][2]['mdev_types'] = ['nvidia-35']
        self.assertRefused(doc, 'devices[2].mdev_types', 'nvidia-35')

    def test_device_spec_matching_nothing(self):
        doc = self.variant()
        doc['nova']['pci']['device_spec'] = [{'vendor_id': '15b3'}]
        self.assertRefused(doc, 'nova.pci.device_spec[0]',
                           'matches no device')

    def test_device_spec_address_forms_nova_reads(self):
        # One address, a glob and Nova's regex mapping (nova/pci/devspec.py
        # PhysicalPciAddress, PciAddressGlobSpec, PciAddressRegexSpec).
        doc = self.variant()
        regex = {'domain': '.*', 'bus': '3b', 'slot': '00',
                 'function': '[1-2]'}
        doc['nova']['pci']['device_spec'] = [
            {'address': '0000:3b:00.0'}, {'address': '*:3b:00.*'},
            {'address': regex}]
        profile = profiles.load_profile(self.write(doc))
        self.assertEqual([{'address': '0000:3b:00.0'},
                          {'address': '*:3b:00.*'}, {'address': regex}],
                         profile.option('device_spec', 'pci'))

    def test_device_spec_glob_of_other_characters(self):
        doc = self.variant()
        doc['nova']['pci']['device_spec'] = [{'address': '0000:3b:0?.*'}]
        self.assertRefused(doc, 'nova.pci.device_spec[0].address',
                           'a glob', 'a mapping of regular expressions')

    def test_device_spec_regex_unknown_field(self):
        doc = self.variant()
        doc['nova']['pci']['device_spec'] = [{'address': {'bus': '3b',
                                                          'func': '1'}}]
        self.assertRefused(doc, 'nova.pci.device_spec[0].address.func',
                           'domain, bus, slot, function')

    def test_exact_address_matching_nothing(self):
        doc = self.variant()
        doc['nova']['pci']['device_spec'] = [{'address': '0000:3c:00.0'}]
        self.assertRefused(doc, 'nova.pci.device_spec[0]',
                           'matches no device')

    def test_device_spec_unknown_key(self):
        doc = self.variant()
        doc['nova']['pci']['device_spec'] = [{'vendor': '8086'}]
        self.assertRefused(doc, 'nova.pci.device_spec[0].vendor',
                           'unknown key')

    def test_report_in_placement_is_a_boolean(self):
        doc = self.variant()
        doc['nova']['pci']['report_in_placement'] = 'yes'
        self.assertRefused(doc, 'nova.pci.report_in_placement',
                           'true or false')

    def test_mdev_type_no_gpu_offers(self):
        doc = self.variant()
        doc['nova']['devices']['enabled_mdev_types'] = ['nvidia-12']
        self.assertRefused(doc, 'nova.devices.enabled_mdev_types',
                           'no GPU of the host offers')


# -- expectations and the invariant, on hand-made snapshots ------------------

def _snap(devices, servers=('vm1',), guests=None, providers=None,
          allocations=None):
    providers = providers or {
        'h1': snapshot.Provider('h1', 'u1', 1, None, 'h1', {}, {})}
    return snapshot.Snapshot(
        providers, allocations or {}, {}, {
            name: snapshot.Server(name, name, 'ACTIVE', 'h1', None)
            for name in servers},
        devices={'h1': {d.address: d for d in devices}},
        guests=guests or {})


def _dev(address, status='available', server=None, cell=1,
         dev_type='type-PCI', parent=None):
    return snapshot.Device('h1', address, dev_type, cell, status, server,
                           parent)


class _Scenario(object):
    hosts = {'h1': None, 'h2': None}
    flavors = {}


class _State(object):
    servers = {'vm1': 'active'}
    deleted = set()
    moved = set()


def _parse(doc):
    return expect.parse(checking.Checker('s.yaml').field('expect'), doc,
                        _Scenario(), _State())


class TestDeviceExpectations(testing.TestCase):

    def test_devices_and_pci_hold(self):
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1'),
                      _dev('0000:d9:00.0')])
        want = _parse({'devices': {'h1': {'allocated': 1,
                                          'available': 1}},
                       'pci': {'vm1': {'h1': {1: 1}}}})
        self.assertEqual([], expect.check(want, snap, _Scenario()))
        want = _parse({'pci': {'vm1': {'h1': ['0000:D8:00.0']}}})
        self.assertEqual([], expect.check(want, snap, _Scenario()))

    def test_unnamed_status_holds_none(self):
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1')])
        want = _parse({'devices': {'h1': {'available': 1}}})
        problems = expect.check(want, snap, _Scenario())
        self.assertEqual(['devices'], [p.check for p in problems])
        self.assertIn('allocated expected 0, got 1', str(problems[0]))

    def test_pci_on_another_host(self):
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1')])
        want = _parse({'pci': {'vm1': {'h2': 1}}})
        problems = expect.check(want, snap, _Scenario())
        self.assertEqual(['vm1 on h1', 'vm1 on h2'],
                         [p.subject for p in problems])

    def test_unknown_status_is_refused(self):
        exc = self.assertRaises(errors.ScenarioError, _parse,
                                {'devices': {'h1': {'used': 1}}})
        self.assertIn('devices.h1', str(exc))

    def test_unknown_server_is_refused(self):
        exc = self.assertRaises(errors.ScenarioError, _parse,
                                {'pci': {'vm9': {'h1': 1}}})
        self.assertIn('pci.vm9', str(exc))

    def test_device_providers_are_left_to_devices(self):
        providers = {
            'h1': snapshot.Provider('h1', 'u1', 1, None, 'h1', {}, {}),
            'h1_0000:D8:00.0': snapshot.Provider(
                'h1_0000:D8:00.0', 'u2', 1, 'h1', 'h1',
                {'CUSTOM_PCI_8086_0B60': {'total': 1}},
                {'CUSTOM_PCI_8086_0B60': 1})}
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1')],
                     providers=providers, allocations={'vm1': {
                         'h1': {'VCPU': 1},
                         'h1_0000:D8:00.0': {'CUSTOM_PCI_8086_0B60': 1}}})
        want = _parse({'allocations': {'vm1': {'h1': {'VCPU': 1}}},
                       'devices': {'h1': {'allocated': 1,
                                          'placement': 1}}})
        self.assertEqual([], expect.check(want, snap, _Scenario()))
        self.assertEqual([], invariants.devices_agree(snap))


class TestMdevExpectations(testing.TestCase):
    """``mdevs``: the mediated devices each host assigned to a server."""

    def snap(self, mdevs):
        # As the reader gives them: one record per mdev, by instance UUID.
        raw = {'resource_providers': [], 'inventories': {}, 'usages': {},
               'allocations': {},
               'mdevs': [{'host': host, 'mdev': 'm%d' % number,
                          'instance_uuid': uuid}
                         for number, (host, uuid) in enumerate(mdevs)]}
        return snapshot.Snapshot.from_raw(raw, {'u-vm1': 'vm1'})

    def test_counted_per_server_and_host(self):
        snap = self.snap([('h1', 'u-vm1'), ('h2', 'u-vm1'),
                          ('h2', 'u-vm1')])
        self.assertEqual({'vm1': {'h1': 1, 'h2': 2}}, snap.mdevs)
        want = _parse({'mdevs': {'vm1': {'h1': 1, 'h2': 2}}})
        self.assertEqual([], expect.check(want, snap, _Scenario()))

    def test_a_host_not_named_holds_none(self):
        snap = self.snap([('h1', 'u-vm1'), ('h2', 'u-vm1')])
        problems = expect.check(_parse({'mdevs': {'vm1': {'h1': 1}}}),
                                snap, _Scenario())
        self.assertEqual(['mdevs'], [p.check for p in problems])
        self.assertIn('expected h1=1, got h1=1, h2=1', str(problems[0]))
        self.assertTrue(problems[0].accounting)

    def test_none_anywhere(self):
        self.assertEqual([], expect.check(_parse({'mdevs': {'vm1': {}}}),
                                          self.snap([]), _Scenario()))
        problems = expect.check(_parse({'mdevs': {'vm1': {}}}),
                                self.snap([('h1', 'u-vm1')]), _Scenario())
        self.assertIn('expected none, got h1=1', str(problems[0]))

    def test_unknown_server_and_bad_count_are_refused(self):
        exc = self.assertRaises(errors.ScenarioError, _parse,
                                {'mdevs': {'vm9': {'h1': 1}}})
        self.assertIn('mdevs.vm9', str(exc))
        exc = self.assertRaises(errors.ScenarioError, _parse,
                                {'mdevs': {'vm1': {'h1': -1}}})
        self.assertIn('mdevs.vm1.h1', str(exc))


class TestDevicesAgree(testing.TestCase):

    def test_clean(self):
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1')],
                     guests={'vm1': snapshot.Guest((1,), ('legacy',))})
        self.assertEqual([], invariants.devices_agree(snap))

    def test_held_by_a_gone_guest(self):
        snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm9')])
        problems = invariants.devices_agree(snap)
        self.assertIn('which is gone', str(problems[0]))
        self.assertEqual([], invariants.devices_agree(
            snap, skip_hosts={'h1'}))

    def test_pf_and_vf_both_held(self):
        snap = _snap([
            _dev('0000:3b:00.0', 'allocated', 'vm1', dev_type='type-PF'),
            _dev('0000:3b:00.1', 'allocated', 'vm2', dev_type='type-VF',
                 parent='0000:3b:00.0')], servers=('vm1', 'vm2'))
        problems = invariants.devices_agree(snap)
        self.assertEqual(1, len(problems))
        self.assertIn('while its PF', str(problems[0]))

    def card(self, pf_status, *vf_statuses, **servers):
        """A PF 0000:3b:00.0 with VFs .1 and .2, in the given statuses."""
        devices = [_dev('0000:3b:00.0', pf_status, servers.get('pf'),
                        dev_type='type-PF')]
        for n, status in enumerate(vf_statuses, start=1):
            devices.append(_dev('0000:3b:00.%d' % n, status,
                                servers.get('vf%d' % n), dev_type='type-VF',
                                parent='0000:3b:00.0'))
        return invariants.devices_agree(
            _snap(devices, servers=('vm1', 'vm2')))

    def test_pf_and_vfs_as_nova_leaves_them(self):
        # nova.objects.pci_device: claim/allocate of a VF blocks its PF,
        # of the PF every VF; free unblocks once nothing is held.
        for statuses, servers in (
                (('available', 'available', 'available'), {}),
                (('unavailable', 'allocated', 'available'), {'vf1': 'vm1'}),
                (('unclaimable', 'claimed', 'allocated'),
                 {'vf1': 'vm1', 'vf2': 'vm2'}),
                (('allocated', 'unavailable', 'unavailable'), {'pf': 'vm1'}),
                (('claimed', 'unclaimable', 'unclaimable'), {'pf': 'vm1'})):
            self.assertEqual([], self.card(*statuses, **servers), statuses)

    def test_a_held_vf_leaves_its_pf_claimable(self):
        problems = self.card('available', 'allocated', 'available',
                             vf1='vm1')
        self.assertEqual(['h1 0000:3b:00.0'], [p.subject for p in problems])
        self.assertIn('PF 0000:3b:00.0 on h1 is available while its VF(s) '
                      '0000:3b:00.1 are held', str(problems[0]))

    def test_a_held_pf_leaves_a_vf_claimable(self):
        problems = self.card('allocated', 'unavailable', 'available',
                             pf='vm1')
        self.assertEqual(['h1 0000:3b:00.2'], [p.subject for p in problems])
        self.assertIn('VF 0000:3b:00.2 on h1 is available while its PF',
                      str(problems[0]))

    def test_a_pf_left_unavailable_once_its_vfs_are_free(self):
        problems = self.card('unavailable', 'available', 'available')
        self.assertEqual(['h1 0000:3b:00.0'], [p.subject for p in problems])
        self.assertIn('none of its VFs is held', str(problems[0]))

    def test_a_vf_left_unavailable_once_its_pf_is_free(self):
        problems = self.card('available', 'unavailable', 'available')
        self.assertEqual(['h1 0000:3b:00.1'], [p.subject for p in problems])
        self.assertIn('although its PF 0000:3b:00.0 is not held',
                      str(problems[0]))

    def test_device_off_the_guests_cell(self):
        for policy, found in (('required', 1), ('legacy', 1),
                              ('preferred', 0)):
            snap = _snap([_dev('0000:d8:00.0', 'allocated', 'vm1',
                               cell=1)],
                         guests={'vm1': snapshot.Guest((0,), (policy,))})
            self.assertEqual(found, len(invariants.devices_agree(snap)),
                             policy)

    def test_placement_usage_differs_from_the_tracker(self):
        providers = {
            'h1': snapshot.Provider('h1', 'u1', 1, None, 'h1', {}, {}),
            'h1_0000:3B:00.0': snapshot.Provider(
                'h1_0000:3B:00.0', 'u2', 1, 'h1', 'h1',
                {'CUSTOM_PCI_8086_1889': {'total': 2}},
                {'CUSTOM_PCI_8086_1889': 2})}
        snap = _snap([
            _dev('0000:3b:00.1', 'allocated', 'vm1', dev_type='type-VF',
                 parent='0000:3b:00.0'),
            _dev('0000:3b:00.2', dev_type='type-VF',
                 parent='0000:3b:00.0')], providers=providers)
        problems = invariants.devices_agree(snap)
        self.assertEqual(['provider h1_0000:3B:00.0'],
                         [p.subject for p in problems])


# -- the loader: SR-IOV ports, device expectations in a scenario -----------

HEAD = """\
name: devices
hosts:
  h1: {profile: nfv-2s-10c-smt2-reserved}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
"""


def _load(body):
    return scenario.load_file('devices.yaml', HEAD + body)[1][0]


class TestDeviceSteps(testing.TestCase):

    def test_boot_with_an_sriov_port(self):
        loaded = _load("  - boot: {server: vm1, flavor: small, "
                       "port: direct}\n"
                       "    expect: {pci: {vm1: {h1: 1}},\n"
                       "             devices: {h1: {allocated: 1,"
                       " available: 7}}}\n")
        self.assertEqual('direct', loaded.steps[0].args['port'])
        self.assertEqual({'vm1': {'h1': {'count': 1}}},
                         loaded.steps[0].expect['pci'])

    def test_unknown_port_kind_is_refused(self):
        exc = self.assertRaises(
            errors.ScenarioError, _load,
            "  - boot: {server: vm1, flavor: small, port: macvtap}\n")
        self.assertIn('field "boot.port"', str(exc))
        self.assertIn('direct', str(exc))

    def test_devices_of_an_unknown_host_are_refused(self):
        exc = self.assertRaises(
            errors.ScenarioError, _load,
            "  - boot: {server: vm1, flavor: small}\n"
            "    expect: {devices: {h9: {available: 1}}}\n")
        self.assertIn('devices.host', str(exc))
