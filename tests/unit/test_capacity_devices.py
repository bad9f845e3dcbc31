"""The capacity probe's device rules, on each host profile with devices.

Each host is built as Nova 34 records an empty one with ``[pci]
report_in_placement``: its PCI tracker saves each device a ``[pci]
device_spec`` entry names (``nova.pci.manager``, ``available``, its PF's
address as ``parent`` for a VF); the translator
(``nova.compute.pci_placement_translator``) makes one provider
``<node>_<ADDRESS>`` per PF or ``type-PCI`` device, or per PF for its
VFs, of the entry's ``resource_class`` (normalised: ``vf`` is
``CUSTOM_VF``) or else ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``, total the
devices, no reserve, and leaves out every device whose entry names a
``physical_network`` (``_add_dev``: Neutron's). The expected requests are
worked out from the profiles in each test's comment.
"""

import dataclasses

from harness.core import capacity
from harness.core.checks.invariant import capacity_probe
from harness.core import profile_devices
from harness.core import profiles
from harness.core import snapshot
from harness import testing

from tests.unit import test_capacity


def _rc(spec, device):
    rc = spec.get('resource_class')
    if rc:
        rc = rc.upper()
        return rc if rc.startswith('CUSTOM_') else 'CUSTOM_' + rc
    return ('CUSTOM_PCI_%s_%s' % (device.vendor, device.product)).upper()


def device_host(name, drop_physnet=False):
    """A snapshot of an empty host ``h1`` of profile ``name``.

    ``drop_physnet``: as if its device_spec named no physical network.
    """
    tracker, compute = test_capacity.empty_host(name)
    profile = profiles.load_profile(name)
    specs = profile.option('device_spec', 'pci', default=[])
    if drop_physnet:
        specs = [{k: v for k, v in spec.items() if k != 'physical_network'}
                 for spec in specs]
    devices, providers = {}, {'h1': compute}
    for dev in profile.devices:
        matching = [spec for spec in specs
                    if profile_devices.spec_matches(spec, dev)]
        if not matching:
            continue
        devices[dev.address] = snapshot.Device(
            host='h1', address=dev.address, type=dev.nova_type,
            cell=dev.cell, status='available', server=None, parent=dev.pf,
            vendor=dev.vendor, product=dev.product)
        if matching[0].get('physical_network'):
            continue
        name = 'h1_' + (dev.pf or dev.address).upper()
        rc = _rc(matching[0], dev)
        rp = providers.get(name) or snapshot.Provider(
            name, 'uuid-' + name, 1, 'h1', 'h1', {rc: {
                'total': 0, 'reserved': 0, 'allocation_ratio': 1.0,
                'max_unit': 0}}, {})
        inventory = rp.inventories[rc]
        inventory['total'] += 1
        inventory['max_unit'] += 1
        providers[name] = rp
    snap = snapshot.Snapshot(providers, {}, {'h1': tracker},
                             devices={'h1': devices} if devices else {})
    return snap, tracker


def asked(snap, tracker):
    return {(r.kind, r.provider, r.resource_class, r.vendor_id,
             r.product_id, r.dev_type, r.rp_uuid)
            for r in capacity.device_requests(snap, tracker)}


def with_usage(snap, provider, used, reserved=0):
    rp = snap.providers[provider]
    [(rc, inventory)] = rp.inventories.items()
    providers = dict(snap.providers)
    providers[provider] = dataclasses.replace(
        rp, usages={rc: used},
        inventories={rc: dict(inventory, reserved=reserved)})
    return snapshot.Snapshot(providers, {}, snap.trackers,
                             devices=snap.devices)


class TestProfiles(testing.TestCase):
    """One device of each provider with a unit free, on empty hosts."""

    def test_vfs_alias(self):
        # device_spec 8086:1889, no physnet: the two VFs of PF 0000:12:00.0
        # are one provider of 2 CUSTOM_PCI_8086_1889; ask one VF of it.
        snap, tracker = device_host('nfv-2s-10c-smt2-vfs-alias')
        self.assertEqual({(
            'device', 'h1_0000:12:00.0', 'CUSTOM_PCI_8086_1889', '8086',
            '1889', 'type-VF', 'uuid-h1_0000:12:00.0')},
            asked(snap, tracker))

    def test_vfs_rc_traits(self):
        # resource_class vf: CUSTOM_VF; the traits are Placement's to
        # match, the request names vendor, product and type.
        snap, tracker = device_host('nfv-2s-10c-smt2-vfs-rc-traits')
        self.assertEqual({(
            'device', 'h1_0000:12:00.0', 'CUSTOM_VF', '8086', '1889',
            'type-VF', 'uuid-h1_0000:12:00.0')}, asked(snap, tracker))

    def test_xeon_nvme_drives(self):
        # Two type-PCI drives 8086:0b60 on cell 1, each its own provider.
        snap, tracker = device_host('xeon-2s-20c-smt2')
        self.assertEqual({
            ('device', 'h1_0000:D8:00.0', 'CUSTOM_PCI_8086_0B60', '8086',
             '0b60', 'type-PCI', 'uuid-h1_0000:D8:00.0'),
            ('device', 'h1_0000:D9:00.0', 'CUSTOM_PCI_8086_0B60', '8086',
             '0b60', 'type-PCI', 'uuid-h1_0000:D9:00.0')},
            asked(snap, tracker))

    def test_m60_gpus_are_not_probed(self):
        # The same drives; the GPUs' VGPU providers (h1_pci_0000_af_00_0)
        # are not PCI device providers: mediated devices are not probed.
        snap, tracker = device_host('xeon-2s-20c-smt2-m60')
        providers = dict(snap.providers)
        providers['h1_pci_0000_af_00_0'] = snapshot.Provider(
            'h1_pci_0000_af_00_0', 'uuid-gpu', 1, 'h1', 'h1', {'VGPU': {
                'total': 16, 'reserved': 0, 'allocation_ratio': 1.0,
                'max_unit': 16}}, {})
        snap = snapshot.Snapshot(providers, {}, snap.trackers,
                                 devices=snap.devices)
        self.assertEqual(['h1_0000:D8:00.0', 'h1_0000:D9:00.0'], sorted(
            r.provider for r in capacity.device_requests(snap, tracker)))

    def test_physical_network_devices_are_not_in_placement(self):
        # pf, pf-vfs, vdpa, dpu: every device_spec entry names physnet2;
        # the PCI tracker has the devices, Placement has no provider for
        # them (Neutron's): nothing to ask.
        for name in ('nfv-2s-10c-smt2-pf', 'nfv-2s-10c-smt2-pf-vfs',
                     'nfv-2s-10c-smt2-vdpa', 'nfv-2s-10c-smt2-dpu'):
            snap, tracker = device_host(name)
            self.assertNotEqual({}, snap.devices, name)
            self.assertEqual(set(), asked(snap, tracker), name)

    def test_a_pf_by_alias_is_asked_as_a_pf(self):
        # The pf profile's PF 8086:1592 given by alias (no physnet): its
        # own provider; the request names type-PF, or the pools would drop
        # it (_filter_pools_for_unrequested_pfs).
        snap, tracker = device_host('nfv-2s-10c-smt2-pf', drop_physnet=True)
        self.assertEqual({(
            'device', 'h1_0000:12:00.0', 'CUSTOM_PCI_8086_1592', '8086',
            '1592', 'type-PF', 'uuid-h1_0000:12:00.0')},
            asked(snap, tracker))

    def test_dev_nvme_drive(self):
        # One Samsung drive 144d:a80a, type-PCI, its own provider.
        snap, tracker = device_host('dev-1s-8c-smt2')
        self.assertEqual({(
            'device', 'h1_0000:02:00.0', 'CUSTOM_PCI_144D_A80A', '144d',
            'a80a', 'type-PCI', 'uuid-h1_0000:02:00.0')},
            asked(snap, tracker))

    def test_reserved_vfs_are_neutrons(self):
        # nfv-2s-10c-smt2-reserved: its VFs on physnet2, no provider.
        snap, tracker = device_host('nfv-2s-10c-smt2-reserved')
        self.assertEqual(set(), asked(snap, tracker))

    def test_hosts_without_devices(self):
        for name in ('mixed-1s-16c-smt2', 'epyc-2s-64c-smt2-nps4'):
            snap, tracker = device_host(name)
            self.assertEqual({}, snap.devices, name)
            self.assertEqual(set(), asked(snap, tracker), name)


class TestUsage(testing.TestCase):
    """Placement's free units decide the request and which way it goes."""

    PROVIDER = 'h1_0000:12:00.0'

    def kinds(self, snap, tracker):
        return [(r.kind, r.placement_allows, r.placement)
                for r in capacity.device_requests(snap, tracker)]

    def test_one_of_two_used_still_asks_one(self):
        snap, tracker = device_host('nfv-2s-10c-smt2-vfs-alias')
        snap = with_usage(snap, self.PROVIDER, 1)
        self.assertEqual([('device', True, 'CUSTOM_PCI_8086_1889 free 1 '
                           '(total 2, reserved 0, used 1)')],
                         self.kinds(snap, tracker))

    def test_a_full_provider_asks_one_placement_refuses(self):
        snap, tracker = device_host('nfv-2s-10c-smt2-vfs-alias')
        snap = with_usage(snap, self.PROVIDER, 2)
        self.assertEqual([('device_phantom_capacity', False,
                           'CUSTOM_PCI_8086_1889 free 0 (total 2, '
                           'reserved 0, used 2)')],
                         self.kinds(snap, tracker))

    def test_a_reserved_provider_is_full(self):
        # A one_time_use device once used: Nova reserves the provider.
        snap, tracker = device_host('xeon-2s-20c-smt2')
        snap = with_usage(snap, 'h1_0000:D8:00.0', 0, reserved=1)
        self.assertEqual({'h1_0000:D8:00.0': False, 'h1_0000:D9:00.0': True},
                         {r.provider: r.placement_allows for r in
                          capacity.device_requests(snap, tracker)})

    def test_a_provider_of_another_node_is_not_asked(self):
        snap, tracker = device_host('xeon-2s-20c-smt2')
        self.assertEqual([], capacity.device_requests(
            snap, dataclasses.replace(tracker, node='h2', host='h2')))


class TestDeviceProblems(testing.TestCase):
    """The problem names the host, the request, the views and the window."""

    def run_probe(self, snap, answers, windows=None):
        def answer(host, node, request):
            # Stands for Nova's answer, which the functional test
            # (tests/functional/test_capacity_probe_devices.py) gets from
            # the host's PCI stats.
            if isinstance(request, capacity.DeviceRequest):
                return answers
            return {0: ()}
        return capacity_probe.capacity_probe(snap, {'h1'}, answer, windows)

    def test_a_refused_free_device_is_phantom_usage(self):
        snap, _ = device_host('nfv-2s-10c-smt2-vfs-alias')
        devices = dict(snap.devices['h1'])
        devices['0000:12:00.1'] = dataclasses.replace(
            devices['0000:12:00.1'], status='allocated', server='vm1')
        snap.devices = {'h1': devices}
        [problem] = self.run_probe(snap, {'claim': False, 'filter': True},
                                   {'h1': {'why': 'vm1 deleted'}})
        self.assertEqual(('capacity_probe',
                          'host h1, device h1_0000:12:00.0', 'taken',
                          'refused'), (problem.check, problem.subject,
                                       problem.expected, problem.actual))
        text = str(problem)
        self.assertIn('capacity_probe: user-visible window: host h1 refuses '
                      'one CUSTOM_PCI_8086_1889 device (8086:1889, type-VF) '
                      'of provider h1_0000:12:00.0, no NUMA topology that '
                      'Placement allows (phantom usage), in claim;', text)
        self.assertIn('Placement: CUSTOM_PCI_8086_1889 free 2 (total 2, '
                      'reserved 0, used 0)', text)
        self.assertIn('tracker: 0000:12:00.1 allocated (vm1), 0000:12:00.2 '
                      'available', text)
        self.assertIn('hidden by the window: vm1 deleted', text)

    def test_a_full_provider_taken_is_phantom_capacity(self):
        snap, _ = device_host('nfv-2s-10c-smt2-vfs-alias')
        snap = with_usage(snap, 'h1_0000:12:00.0', 2)
        [problem] = self.run_probe(snap, {'claim': True, 'filter': True})
        self.assertEqual(('host h1, device_phantom_capacity '
                          'h1_0000:12:00.0', 'refused', 'taken'),
                         (problem.subject, problem.expected, problem.actual))
        self.assertIn('would take one CUSTOM_PCI_8086_1889 device', str(
            problem))
        self.assertIn('(phantom capacity), in claim and filter', str(
            problem))
        self.assertNotIn('user-visible window', str(problem))

    def test_answers_that_agree_are_no_problem(self):
        snap, _ = device_host('nfv-2s-10c-smt2-vfs-alias')
        self.assertEqual([], self.run_probe(snap, {'claim': True,
                                                   'filter': True}))
        full = with_usage(snap, 'h1_0000:12:00.0', 2)
        self.assertEqual([], self.run_probe(full, {'claim': False,
                                                   'filter': False}))
