"""Device providers in Placement and a node's PCI pools, as expected.

The expectation key ``device_providers`` and ``compute_nodes``'
``pci_pools``, against hand-built snapshots (the helpers of
test_node_records: hosts ``src`` and ``dst`` of the example scenario).
Values are worked out by hand: two NVMe drives at 0000:d8:00.0 and
0000:d9:00.0 reported in Placement as Nova names them (``<host>_<ADDRESS
in upper case>``, one unit of ``CUSTOM_PCI_8086_0B60`` each, with the
trait Nova gives every such provider, ``COMPUTE_MANAGED_PCI_DEVICE``) and
a GPU's VGPU provider (``<host>_pci_0000_af_00_0``). The traits Nova puts
on every device provider (and ``OWNER_NOVA``, from Nova 34) are left out
of ``traits``, as Nova's own tests leave them out.
"""

from harness.core import errors
from harness.core import snapshot
from harness import testing
from tests.unit import test_node_records as records_tests

MANAGED = 'COMPUTE_MANAGED_PCI_DEVICE'
OWNER = 'OWNER_NOVA'
NVME = 'CUSTOM_PCI_8086_0B60'


def with_providers(snap, used=(), traits=None):
    """``snap`` with src's two drives and GPU as Placement holds them."""
    def child(name, rc, total, used_now, rp_traits):
        snap.providers[name] = snapshot.Provider(
            name=name, uuid='rp-' + name, generation=1, parent='src',
            root='src', inventories={rc: {
                'total': total, 'reserved': 0, 'min_unit': 1,
                'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}},
            usages={rc: used_now} if used_now else {},
            traits=tuple(rp_traits))
    for address in ('0000:D8:00.0', '0000:D9:00.0'):
        child('src_' + address, NVME, 1, 1 if address in used else 0,
              traits or (MANAGED, OWNER))
    child('src_pci_0000_af_00_0', 'VGPU', 16, 2, (OWNER,))
    return snap


def drives(used_d8=0, used_d9=0):
    return {'0000:d8:00.0': {'class': NVME, 'total': 1, 'reserved': 0,
                             'used': used_d8, 'traits': []},
            '0000:d9:00.0': {'class': NVME, 'total': 1, 'used': used_d9},
            '0000:af:00.0': {'class': 'VGPU', 'total': 16, 'used': 2,
                             'traits': []}}


class TestDeviceProviders(testing.TestCase):

    def test_providers_as_expected_pass(self):
        snap = with_providers(records_tests.build(), used=('0000:D9:00.0',))
        self.assertEqual([], records_tests.check(
            'device_providers', {'src': drives(used_d9=1), 'dst': {}},
            snap))

    def test_each_difference_is_named(self):
        snap = with_providers(records_tests.build(), used=('0000:D8:00.0',),
                              traits=(MANAGED, 'CUSTOM_FAST'))
        want = drives(used_d9=1)
        del want['0000:af:00.0']
        want['0000:3b:00.0'] = {'class': 'PCI_DEVICE'}
        [problem] = records_tests.check('device_providers', {'src': want},
                                        snap)
        self.assertEqual(
            'device providers of src: 0000:3b:00.0 has no provider, '
            '0000:af:00.0 has a provider not expected (VGPU 2/16 used), '
            '0000:d8:00.0 used expected 0, got 1, 0000:d8:00.0 traits '
            "expected [], got ['CUSTOM_FAST'], 0000:d9:00.0 used "
            'expected 1, got 0', str(problem))

    def test_a_host_without_device_providers(self):
        snap = records_tests.build()
        self.assertEqual([], records_tests.check(
            'device_providers', {'src': {}}, snap))
        [problem] = records_tests.check('device_providers', {
            'src': {'0000:d8:00.0': {'used': 0}}}, snap)
        self.assertIn('0000:d8:00.0 has no provider', str(problem))

    def test_bad_input_names_the_field(self):
        for value, field, words in (
                ({'nowhere': {}}, 'expect.device_providers.host',
                 'unknown host'),
                ({'src': {'0000:D8:00.0': {}}},
                 'expect.device_providers.src.0000:D8:00.0',
                 'lower case'),
                ({'src': {'0000:d8:00.0': {'count': 1}}},
                 'expect.device_providers.src.0000:d8:00.0.count',
                 'unknown field'),
                ({'src': {'0000:d8:00.0': {'class': 'nvme'}}},
                 'expect.device_providers.src.0000:d8:00.0.class',
                 'unknown resource class'),
                ({'src': {'0000:d8:00.0': {'used': -1}}},
                 'expect.device_providers.src.0000:d8:00.0.used',
                 'at least 0'),
                ({'src': {'0000:d8:00.0': {'traits': 'X'}}},
                 'expect.device_providers.src.0000:d8:00.0.traits',
                 'expected a list')):
            error = self.assertRaises(errors.ScenarioError,
                                      records_tests.parse_expect,
                                      'device_providers', value)
            self.assertIn('field "%s"' % field, str(error))
            self.assertIn(words, str(error))


def pool(vendor, product, cell, count, **tags):
    return {'vendor_id': vendor, 'product_id': product, 'numa_node': cell,
            'count': count, 'tags': dict(tags)}


class TestPciPools(testing.TestCase):
    """A node's pools: 2 free drives on cell 1, 3 free VFs on cell 0."""

    def snap(self):
        return records_tests.build(nodes=[records_tests.node(
            'src', pci_pools=[
                pool('8086', '0b60', 1, 2, dev_type='type-PCI'),
                pool('15b3', '101e', 0, 3, dev_type='type-VF',
                     physical_network='physnet2'),
                pool('15b3', '101d', 0, 0, dev_type='type-PF')])])

    def test_pools_named_by_their_keys(self):
        self.assertEqual([], records_tests.check('compute_nodes', {
            'src': {'pci_pools': [
                {'vendor_id': '8086', 'product_id': '0b60', 'numa_node': 1,
                 'count': 2},
                {'tags': {'physical_network': 'physnet2'}, 'count': 3}]}},
            self.snap()))

    def test_one_entry_may_name_several_pools(self):
        self.assertEqual([], records_tests.check('compute_nodes', {
            'src': {'pci_pools': [{'count': 5}]}}, self.snap()))

    def test_wrong_count_unnamed_pool_and_overlap(self):
        [problem] = records_tests.check('compute_nodes', {
            'src': {'pci_pools': [
                {'vendor_id': '8086', 'count': 1},
                {'numa_node': 1, 'count': 2}]}}, self.snap())
        self.assertEqual(
            'compute node src: pci_pools: 8086:0b60 cell 1 dev_type=type-PCI'
            ' is named by entries 1, 2, pci_pools: 15b3:101e cell 0 '
            'dev_type=type-VF physical_network=physnet2 has 3 free, named '
            'by no entry, pci_pools 8086:* cell * expected 1 free, got 0, '
            'pci_pools *:* cell 1 expected 2 free, got 0', str(problem))

    def test_how_many_pools_an_entry_names(self):
        # The VF pool split in two, as LP#2098496 split it.
        snap = records_tests.build(nodes=[records_tests.node(
            'src', pci_pools=[
                pool('15b3', '101e', 0, 1, dev_type='type-VF'),
                pool('15b3', '101e', 0, 1, dev_type='type-VF')])])
        self.assertEqual([], records_tests.check('compute_nodes', {
            'src': {'pci_pools': [{'count': 2, 'pools': 2}]}}, snap))
        [problem] = records_tests.check('compute_nodes', {
            'src': {'pci_pools': [{'count': 2, 'pools': 1}]}}, snap)
        self.assertEqual('compute node src: pci_pools *:* cell * expected 1 '
                         'pool(s) with free devices, got 2', str(problem))

    def test_bad_input_names_the_field(self):
        for value, field, words in (
                ({'src': {'pci_pools': [{'count': 1, 'pools': -1}]}},
                 'expect.compute_nodes.src.pci_pools.1.pools', 'at least 0'),
                ({'src': {'pci_pools': [{'vendor_id': '8086'}]}},
                 'expect.compute_nodes.src.pci_pools.1.count', 'missing'),
                ({'src': {'pci_pools': [{'count': 1, 'cell': 0}]}},
                 'expect.compute_nodes.src.pci_pools.1.cell',
                 'unknown field'),
                ({'src': {'pci_pools': {'count': 1}}},
                 'expect.compute_nodes.src.pci_pools', 'expected a list')):
            error = self.assertRaises(errors.ScenarioError,
                                      records_tests.parse_expect,
                                      'compute_nodes', value)
            self.assertIn('field "%s"' % field, str(error))
            self.assertIn(words, str(error))


class TestProviderTraits(testing.TestCase):
    """src's compute node provider with the traits of a disabled service."""

    def snap(self):
        snap = records_tests.build()
        snap.providers['src'].traits = (
            'COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED')
        return snap

    def test_traits_had_and_lacked(self):
        self.assertEqual([], records_tests.check('provider_traits', {
            'src': {'has': ['COMPUTE_STATUS_DISABLED', 'COMPUTE_NODE']},
            'dst': {'lacks': ['COMPUTE_STATUS_DISABLED']}}, self.snap()))

    def test_each_difference_is_named(self):
        problems = records_tests.check('provider_traits', {
            'src': {'has': ['COMPUTE_NET_ATTACH_INTERFACE'],
                    'lacks': ['COMPUTE_STATUS_DISABLED']},
            'dst': {'has': ['COMPUTE_STATUS_DISABLED']}}, self.snap())
        self.assertEqual(
            ['traits of dst: lacks COMPUTE_STATUS_DISABLED',
             'traits of src: lacks COMPUTE_NET_ATTACH_INTERFACE; has '
             'COMPUTE_STATUS_DISABLED'], [str(p) for p in problems])

    def test_bad_input_names_the_field(self):
        for value, field, words in (
                ({'nowhere': {'has': ['X']}}, 'expect.provider_traits.host',
                 'unknown host'),
                ({'src': {}}, 'expect.provider_traits.src',
                 'say has, lacks or both'),
                ({'src': {'has': []}}, 'expect.provider_traits.src.has',
                 'name at least one trait'),
                ({'src': {'has': ['X'], 'lacks': ['X']}},
                 'expect.provider_traits.src', 'both had and lacked'),
                ({'src': {'owns': ['X']}}, 'expect.provider_traits.src.owns',
                 'unknown field')):
            error = self.assertRaises(errors.ScenarioError,
                                      records_tests.parse_expect,
                                      'provider_traits', value)
            self.assertIn('field "%s"' % field, str(error))
            self.assertIn(words, str(error))
