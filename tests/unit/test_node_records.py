"""Compute node records, the hypervisor list, guests' pinning and domains.

The expectation keys ``compute_nodes``, ``hypervisors``, ``guest_cpus``,
``guest_devices`` and ``domain``, and the invariants
``node_stats_count_own_guests`` and ``domain_agrees``, against hand-built
snapshots. Values are worked out by hand: a host ``src`` with one NUMA
cell whose shared CPUs are 0-1,8-9 (the ``dev-1s-8c-smt2`` profile), a
guest ``vm1`` of two vCPUs pinned to 2 and 10 (siblings) with 2M pages;
no Nova runs here.
"""

from harness.core import checks
from harness.core.checks import base
from harness.core import errors
from harness.core import records
from harness.core import scenario
from harness.core import snapshot
from harness import testing

PROJECT = '6f70656e737461636b20342065766572'
# vm1 pinned on src as Nova's libvirt driver writes it
# (_get_guest_numa_config, _get_guest_memory_backing_config).
DOMAIN_XML = '''<domain type="kvm">
  <uuid>uuid-vm1</uuid>
  <name>instance-00000001</name>
  <memory>524288</memory>
  <memoryBacking>
    <hugepages><page size="2048" unit="KiB" nodeset="0"/></hugepages>
  </memoryBacking>
  <vcpu>2</vcpu>
  <cputune>
    <vcpupin vcpu="0" cpuset="2"/>
    <vcpupin vcpu="1" cpuset="10"/>
    <emulatorpin cpuset="2,10"/>
    <iothreadpin iothread="1" cpuset="2,10"/>
  </cputune>
  <numatune>
    <memory mode="strict" nodeset="0"/>
    <memnode cellid="0" mode="strict" nodeset="0"/>
  </numatune>
  <devices>
    <hostdev mode="subsystem" type="pci" managed="yes">
      <source><address domain="0x0000" bus="0x02" slot="0x00"
                       function="0x0"/></source>
    </hostdev>
    <hostdev mode="subsystem" type="mdev" model="vfio-pci">
      <source><address uuid="b5a1f1d4-0000-4000-8000-000000000001"/>
      </source>
    </hostdev>
  </devices>
</domain>'''


def node(name, host=None, deleted=False, stats=None, uuid=None, **amounts):
    record = {'host': host or name, 'node': name,
              'uuid': uuid or 'rp-%s' % name, 'deleted': deleted,
              'vcpus': 12, 'vcpus_used': 0, 'memory_mb': 32768,
              'memory_mb_used': 0, 'local_gb': 512, 'local_gb_used': 0,
              'running_vms': 0, 'current_workload': 0,
              'stats': {'failed_builds': '0'}}
    record['stats'].update(stats or {})
    record.update(amounts)
    return record


def instance(name, host='src', node_name=None, vm_state='active',
             task_state=None, pinning=None, pagesize=2048, cells=None,
             policy=None):
    if cells is None:
        cells = [{'id': 0, 'cpus': [0, 1],
                  'pinning': {str(k): v for k, v in (
                      pinning if pinning is not None else {0: 2, 1: 10}
                  ).items()}, 'reserved': [], 'memory_mb': 512,
                  'pagesize': pagesize}]
    return {'uuid': 'uuid-%s' % name, 'host': host,
            'node': node_name or host, 'vm_state': vm_state,
            'task_state': task_state, 'os_type': None,
            'project_id': PROJECT, 'cells': cells,
            'emulator_threads_policy': policy}


def tracker(name):
    """src's compute node as its tracker saved it: one cell, 2M pages."""
    return {'host': name, 'node': name, 'vcpus': 4, 'vcpus_used': 0,
            'memory_mb': 32768, 'memory_mb_used': 0, 'local_gb': 512,
            'local_gb_used': 0, 'cells': [{
                'id': 0, 'cpus': [0, 1, 8, 9],
                'pcpus': [2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15],
                'cpu_usage': 0, 'memory_mb': 32768, 'memory_usage': 0,
                'pinned_cpus': [], 'pages': {
                    '4': {'total': 1, 'used': 0, 'reserved': 0},
                    '2048': {'total': 1024, 'used': 0, 'reserved': 0}}}]}


def build(nodes=(), instances=(), domains=(), hypervisors=(),
          devices=(), mdevs=(), servers=(), migrations=()):
    raw = {'resource_providers': [
        {'uuid': 'rp-%s' % name, 'name': name, 'generation': 1,
         'parent_provider_uuid': None, 'root_provider_uuid': 'rp-%s' % name}
        for name in ('src', 'dst')],
        'inventories': {}, 'usages': {}, 'allocations': {},
        'compute_nodes': [tracker('src'), tracker('dst')],
        'node_records': list(nodes), 'instances': list(instances),
        'hypervisors': [{'id': 'rp-%s' % name, 'hypervisor_hostname': name,
                         'state': state, 'status': status}
                        for name, state, status in hypervisors],
        'domains': [{'host': 'src', 'uuid': None, 'xml': None},
                    {'host': 'dst', 'uuid': None, 'xml': None}] + [
            {'host': host, 'uuid': 'uuid-%s' % name, 'xml': xml}
            for host, name, xml in domains],
        'pci_devices': [
            {'host': host, 'address': address, 'dev_type': 'type-PCI',
             'numa_node': 0, 'status': status,
             'instance_uuid': server and 'uuid-%s' % server}
            for host, address, status, server in devices],
        'mdevs': [{'host': host, 'mdev': 'mdev-%d' % i,
                   'instance_uuid': 'uuid-%s' % server}
                  for i, (host, server) in enumerate(mdevs)],
        'servers': [{'id': 'uuid-%s' % name, 'name': name,
                     'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': host,
                     'OS-EXT-SRV-ATTR:hypervisor_hostname': host,
                     'OS-EXT-STS:task_state': None,
                     'OS-EXT-STS:vm_state': 'active'}
                    for name, host in servers],
        'migrations': [{'id': i, 'uuid': 'mig-%d' % i,
                        'instance_uuid': 'uuid-%s' % server,
                        'status': status, 'source_compute': source,
                        'dest_compute': dest, 'migration_type': 'resize'}
                       for i, (server, status, source, dest)
                       in enumerate(migrations)]}
    names = {'uuid-%s' % name: name for name in ('vm1', 'vm2')}
    return snapshot.Snapshot.from_raw(raw, names)


def parse_expect(key, value):
    """``expect: {key: value}`` on the example scenario's last step."""
    doc = scenario.safe_load(base.EXAMPLE_SCENARIO)
    doc['steps'][-1]['expect'] = {key: value}
    loaded = scenario.parse(doc, 'test.yaml')
    return loaded, loaded.steps[-1].expect[key]


def check(key, value, snap):
    loaded, want = parse_expect(key, value)
    return checks.get(key).check(want, snap, loaded)


class TestRecords(testing.TestCase):

    def test_cpusets_read_as_libvirt_writes_them(self):
        self.assertEqual((0, 1, 3, 8), records.parse_cpuset('0-3,^2,8'))
        self.assertEqual((), records.parse_cpuset(''))

    def test_a_domain_is_read_as_whitebox_reads_it(self):
        domain = records.parse_domain('src', DOMAIN_XML)
        self.assertEqual(2, domain.vcpus)
        self.assertEqual({0: (2,), 1: (10,)}, domain.vcpupin)
        self.assertEqual((2, 10), domain.emulatorpin)
        self.assertEqual((2, 10), domain.iothreadpin)
        self.assertEqual({0: (0,)}, domain.memnodes)
        self.assertEqual({2048: (0,)}, domain.hugepages)
        self.assertEqual(('0000:02:00.0',), domain.hostdevs)
        self.assertEqual(('b5a1f1d4-0000-4000-8000-000000000001',),
                         domain.mdevs)

    def test_a_vdpa_interface_is_read_as_its_vf(self):
        # As Nova's libvirt driver writes a vDPA port's interface
        # (designer.set_vif_host_backend_vdpa_config).
        xml = DOMAIN_XML.replace('<devices>', '''<devices>
    <interface type="vdpa">
      <mac address="b5:bc:2e:e7:51:ee"/>
      <source dev="/dev/vhost-vdpa-3"/>
    </interface>''')
        domain = records.parse_domain(
            'src', xml, {'/dev/vhost-vdpa-3': '0000:06:00.4'})
        self.assertEqual(('0000:06:00.4',), domain.vdpa)
        self.assertEqual(('0000:02:00.0',), domain.hostdevs)
        # One the host does not list shows as its path.
        self.assertEqual(('/dev/vhost-vdpa-3',),
                         records.parse_domain('src', xml).vdpa)

    def test_pages_of_one_size_on_two_cells_are_one_entry(self):
        xml = DOMAIN_XML.replace(
            '<page size="2048" unit="KiB" nodeset="0"/>',
            '<page size="2048" unit="KiB" nodeset="0"/>'
            '<page size="1" unit="G" nodeset="1"/>'
            '<page size="2048" unit="KiB" nodeset="2"/>')
        self.assertEqual({2048: (0, 2), 1048576: (1,)},
                         records.parse_domain('src', xml).hugepages)

    def test_stats_are_counted_as_the_periodic_counts_them(self):
        snap = build(instances=[
            instance('vm1'),
            instance('vm2', vm_state='building', task_state='spawning')])
        # Both on src: 2 instances, one active, one building (an I/O
        # heavy state: io_workload 1); one has no task.
        src = records.node_records([node('src')])['src']
        self.assertEqual({'num_instances': 2, 'num_vm_active': 1,
                          'num_vm_building': 1, 'num_task_None': 1,
                          'num_task_spawning': 1, 'num_os_type_None': 2,
                          'num_proj_%s' % PROJECT: 2, 'io_workload': 1},
                         records.count_guests(snap.instances.values(), src))

    def test_deleted_and_offloaded_guests_do_not_count(self):
        snap = build(instances=[
            instance('vm1', vm_state='shelved_offloaded'),
            instance('vm2', vm_state='deleted')])
        src = records.node_records([node('src')])['src']
        self.assertEqual({}, records.count_guests(snap.instances.values(),
                                                  src))

    def test_saved_stats_are_read_as_ints_zeros_left_out(self):
        self.assertEqual({'num_instances': 1, 'num_vm_active': 1},
                         records.counted_stats({
                             'num_instances': '1', 'num_vm_active': '1',
                             'num_vm_building': '0', 'failed_builds': '3',
                             'io_workload': '0', 'uptime': 'up 1 day'}))

    def test_a_live_record_wins_over_a_deleted_one(self):
        nodes = records.node_records([
            node('src', uuid='old'), node('src', deleted=True, uuid='old'),
            node('src', uuid='new')])
        self.assertEqual('new', nodes['src'].uuid)
        nodes = records.node_records([node('src', uuid='a'),
                                      node('src', deleted=True, uuid='b')])
        self.assertEqual(('a', False), (nodes['src'].uuid,
                                        nodes['src'].deleted))

    def test_every_record_of_a_node_is_counted(self):
        # Undeleted: the same row, one record.
        self.assertEqual(1, records.node_records([node('src')])[
            'src'].records)
        # Made anew next to the deleted one: two, whichever comes first.
        for rows in ([node('src', deleted=True, uuid='old'),
                      node('src', uuid='new')],
                     [node('src', uuid='new'),
                      node('src', deleted=True, uuid='old')]):
            nodes = records.node_records(rows + [node('dst')])
            self.assertEqual((2, 'new', 1), (
                nodes['src'].records, nodes['src'].uuid,
                nodes['dst'].records))
        self.assertEqual(3, records.node_records([
            node('src', deleted=True), node('src', deleted=True),
            node('src', deleted=True)])['src'].records)


class TestComputeNodes(testing.TestCase):

    def test_a_record_as_expected_passes(self):
        snap = build(nodes=[node('src', vcpus_used=2, stats={
            'num_instances': '1', 'num_vm_active': '1',
            'num_vm_building': '0'}), node('dst', deleted=True)])
        self.assertEqual([], check('compute_nodes', {
            'src': {'deleted': False, 'uuid': 'provider', 'host': 'src',
                    'vcpus_used': 2,
                    'stats': {'num_instances': 1, 'num_vm_active': 1}},
            'dst': {'deleted': True}}, snap))

    def test_each_wrong_field_is_named(self):
        snap = build(nodes=[node('src', uuid='other', stats={
            'num_instances': '2', 'num_task_None': '2'})])
        [problem] = check('compute_nodes', {
            'src': {'uuid': 'provider', 'deleted': True,
                    'stats': {'num_instances': 1}}}, snap)
        self.assertEqual(
            'compute node src: deleted expected True, got False, uuid '
            'expected rp-src, got other, stats num_instances expected 1, '
            'got 2, stats num_task_None expected 0, got 2', str(problem))

    def test_records_counts_the_deleted_ones_too(self):
        snap = build(nodes=[node('src', deleted=True, uuid='old'),
                            node('src', uuid='rp-src')])
        [problem] = check('compute_nodes', {
            'src': {'deleted': False, 'uuid': 'provider', 'records': 1}},
            snap)
        self.assertEqual('compute node src: records expected 1, got 2',
                         str(problem))
        self.assertEqual([], check('compute_nodes', {
            'src': {'records': 2}}, snap))

    def test_mapped_is_the_records_flag(self):
        snap = build(nodes=[node('src', mapped=True),
                            node('dst', deleted=True)])
        self.assertEqual([], check('compute_nodes', {
            'src': {'mapped': True}, 'dst': {'mapped': False}}, snap))
        [problem] = check('compute_nodes', {'dst': {'mapped': True}}, snap)
        self.assertEqual('compute node dst: mapped expected True, got False',
                         str(problem))

    def test_null_says_no_record(self):
        snap = build(nodes=[node('src')])
        self.assertEqual([], check('compute_nodes', {'dst': None}, snap))
        [problem] = check('compute_nodes', {'src': None}, snap)
        self.assertIn('expected no record, got a record (not deleted)',
                      str(problem))

    def test_bad_input_names_the_field(self):
        for value, field, words in (
                ({'nowhere': {}}, 'expect.compute_nodes.host',
                 'unknown host'),
                ({'src': {'color': 1}}, 'expect.compute_nodes.src.color',
                 'unknown field'),
                ({'src': {'deleted': 'yes'}},
                 'expect.compute_nodes.src.deleted', 'true or false'),
                ({'src': {'stats': {'instances': 1}}},
                 'expect.compute_nodes.src.stats.instances',
                 'unknown stat'),
                ({'src': {'mapped': 1}},
                 'expect.compute_nodes.src.mapped', 'true or false'),
                ({'src': {'records': 0}},
                 'expect.compute_nodes.src.records', 'at least 1'),
                ({'src': {'stats': {'num_instances': -1}}},
                 'expect.compute_nodes.src.stats.num_instances',
                 'at least 0')):
            error = self.assertRaises(errors.ScenarioError, parse_expect,
                                      'compute_nodes', value)
            self.assertIn('field "%s"' % field, str(error))
            self.assertIn(words, str(error))


class TestHypervisors(testing.TestCase):

    def test_the_list_is_exact(self):
        snap = build(hypervisors=[('src', 'up', 'enabled'),
                                  ('dst', 'down', 'disabled')])
        self.assertEqual([], check('hypervisors', {
            'src': {'state': 'up'}, 'dst': {'status': 'disabled'}}, snap))
        found = [str(p) for p in check('hypervisors', {
            'src': {'state': 'down'}}, snap)]
        self.assertEqual(['hypervisor dst: listed (down, disabled), '
                          'expected not',
                          'hypervisor src: state expected down, got up'],
                         found)

    def test_a_missing_hypervisor_is_named(self):
        snap = build(hypervisors=[('src', 'up', 'enabled')])
        [problem] = check('hypervisors', {'src': {}, 'dst': {}}, snap)
        self.assertIn('hypervisor dst: expected in the list, not listed',
                      str(problem))

    def test_bad_state_names_the_field(self):
        error = self.assertRaises(errors.ScenarioError, parse_expect,
                                  'hypervisors', {'src': {'state': 'on'}})
        self.assertIn('field "expect.hypervisors.src.state": expected one '
                      'of up, down', str(error))


class TestGuestCpus(testing.TestCase):

    def test_map_and_set(self):
        snap = build(instances=[instance('vm1')])
        self.assertEqual([], check('guest_cpus', {'vm1': {0: 2, 1: 10}},
                                   snap))
        self.assertEqual([], check('guest_cpus', {'vm1': [10, 2]}, snap))
        [problem] = check('guest_cpus', {'vm1': {0: 10, 1: 2}}, snap)
        self.assertEqual('guest vm1 pinning: expected {0: 10, 1: 2}, got '
                         '{0: 2, 1: 10}', str(problem))
        [problem] = check('guest_cpus', {'vm1': []}, snap)
        self.assertEqual('guest vm1 pinned CPUs: expected [], got [2,10]',
                         str(problem))

    def test_bad_input_names_the_field(self):
        error = self.assertRaises(errors.ScenarioError, parse_expect,
                                  'guest_cpus', {'vm9': [1]})
        self.assertIn('field "expect.guest_cpus.vm9"', str(error))
        error = self.assertRaises(errors.ScenarioError, parse_expect,
                                  'guest_cpus', {'vm1': {0: 'two'}})
        self.assertIn('field "expect.guest_cpus.vm1.0": expected a whole '
                      'number', str(error))


class TestGuestDevices(testing.TestCase):

    def test_addresses_and_mdevs(self):
        # vm1 moved to dst; src holds its device until confirmed.
        snap = build(devices=[('src', '0000:02:00.0', 'allocated', 'vm1'),
                              ('dst', '0000:02:00.0', 'allocated', 'vm1'),
                              ('dst', '0000:03:00.0', 'available', None)],
                     mdevs=[('dst', 'vm1')], servers=[('vm1', 'dst')])
        self.assertEqual([], check('guest_devices', {
            'vm1': {'pci': ['0000:02:00.0'], 'mdevs': 1}}, snap))
        self.assertEqual([], check('guest_devices', {
            'vm1': {'pci': ['0000:02:00.0'], 'mdevs': 0, 'host': 'src'}},
            snap))
        [problem] = check('guest_devices', {'vm1': ['0000:03:00.0']}, snap)
        self.assertEqual("guest vm1 PCI devices on dst: expected "
                         "['0000:03:00.0'], got ['0000:02:00.0']",
                         str(problem))

    def test_bad_address_names_the_field(self):
        error = self.assertRaises(errors.ScenarioError, parse_expect,
                                  'guest_devices', {'vm1': ['02:00.0']})
        self.assertIn('field "expect.guest_devices.vm1.pci": expected a '
                      'PCI address', str(error))


class TestDomain(testing.TestCase):

    def test_fields_named_are_compared(self):
        snap = build(instances=[instance('vm1')],
                     domains=[('src', 'vm1', DOMAIN_XML)])
        self.assertEqual([], check('domain', {'vm1': {
            'vcpupin': {0: 2, 1: '10'}, 'emulatorpin': '2,10',
            'iothreadpin': [10, 2], 'memnodes': {0: 0},
            'hugepages': {'2M': 0}, 'hostdevs': ['0000:02:00.0'],
            'mdevs': 1, 'vcpus': 2}}, snap))
        [problem] = check('domain', {'vm1': {
            'vcpupin': {0: 3, 1: 11}, 'hugepages': {'1G': 0}}}, snap)
        self.assertEqual(
            'domain of vm1 on src: vcpupin expected {0: [3], 1: [11]}, got '
            '{0: [2], 1: [10]}, hugepages expected {1048576: [0]}, got '
            '{2048: [0]}', str(problem))

    def test_null_says_no_domain_and_host_names_the_hypervisor(self):
        snap = build(instances=[instance('vm1', host='dst')],
                     domains=[('src', 'vm1', DOMAIN_XML)])
        self.assertEqual([], check('domain', {'vm1': None}, snap))
        self.assertEqual([], check('domain', {'vm1': {'host': 'src'}},
                                   snap))
        [problem] = check('domain', {'vm1': {}}, snap)
        self.assertEqual('guest vm1: expected a domain on dst, got none',
                         str(problem))

    def test_bad_input_names_the_field(self):
        for value, field in (({'vm1': {'pins': {}}}, 'vm1.pins'),
                             ({'vm1': {'emulatorpin': 'a-b'}},
                              'vm1.emulatorpin'),
                             ({'vm1': {'hugepages': {'3M': 0}}},
                              'vm1.hugepages.3M'),
                             ({'vm1': {'host': 'nowhere'}}, 'vm1.host')):
            error = self.assertRaises(errors.ScenarioError, parse_expect,
                                      'domain', value)
            self.assertIn('field "expect.domain.%s"' % field, str(error))


def stats_check(snap, hosts=('src', 'dst')):
    from harness.core.checks.invariant import node_stats_count_own_guests
    return node_stats_count_own_guests.node_stats_count_own_guests(
        snap, set(hosts))


class TestNodeStatsCountOwnGuests(testing.TestCase):

    def test_stats_that_count_the_nodes_guests_pass(self):
        snap = build(nodes=[node('src', stats={
            'num_instances': '1', 'num_vm_active': '1',
            'num_task_None': '1', 'num_os_type_None': '1',
            'num_proj_%s' % PROJECT: '1', 'io_workload': '0',
            'num_vm_building': '0'}), node('dst')],
            instances=[instance('vm1')])
        self.assertEqual([], stats_check(snap))

    def test_a_guest_counted_on_another_node_is_found(self):
        # vm1 moved to dst; src still counts it, dst does not.
        counted = {'num_instances': '1', 'num_vm_active': '1',
                   'num_task_None': '1', 'num_os_type_None': '1',
                   'num_proj_%s' % PROJECT: '1'}
        snap = build(nodes=[node('src', stats=counted), node('dst')],
                     instances=[instance('vm1', host='dst')])
        found = [str(p) for p in stats_check(snap)]
        self.assertEqual(2, len(found))
        self.assertIn('the stats of node dst: num_instances 0, expected '
                      '1', found[0])
        self.assertIn('the database places there: vm1 (active/None)',
                      found[0])
        self.assertIn('node src: num_instances 1, expected 0', found[1])
        self.assertIn('the database places there: no guest', found[1])
        # Only the hosts asked about are checked.
        self.assertEqual(1, len(stats_check(snap, hosts=('src',))))

    def test_a_stale_task_state_is_found(self):
        snap = build(nodes=[node('src', stats={
            'num_instances': '1', 'num_vm_building': '1',
            'num_task_spawning': '1', 'num_os_type_None': '1',
            'num_proj_%s' % PROJECT: '1', 'io_workload': '1'}),
            node('dst')], instances=[instance('vm1')])
        [problem] = stats_check(snap)
        self.assertIn('io_workload 1, expected 0, num_task_None 0, '
                      'expected 1, num_task_spawning 1, expected 0, '
                      'num_vm_active 0, expected 1, num_vm_building 1, '
                      'expected 0', str(problem))


def domain_check(snap, skip=(), before=None):
    from harness.core.checks.invariant import domain_agrees
    return [str(p) for p in domain_agrees.domain_agrees(snap, skip, before)]


class TestDomainAgrees(testing.TestCase):

    def test_a_domain_as_nova_placed_the_guest_passes(self):
        snap = build(instances=[instance('vm1')],
                     domains=[('src', 'vm1', DOMAIN_XML)],
                     devices=[('src', '0000:02:00.0', 'allocated', 'vm1')])
        self.assertEqual([], domain_check(snap))

    def test_source_pinning_kept_after_a_move_is_found(self):
        # LP#1889257: the destination's domain kept the source's CPUs;
        # Nova pinned vm1 to 3 and 11 on dst.
        snap = build(instances=[instance('vm1', host='dst',
                                         pinning={0: 3, 1: 11})],
                     domains=[('dst', 'vm1', DOMAIN_XML.replace(
                         '<hostdev mode="subsystem" type="pci"',
                         '<hostdev mode="subsystem" type="usb"'))])
        [problem] = domain_check(snap)
        self.assertEqual(
            'domain_agrees: guest vm1 (active) on dst: vCPU 0 on [2], Nova '
            'placed it on [3]; vCPU 1 on [10], Nova placed it on [11]; '
            'emulator threads on [2,10], expected [3,11]', problem)

    def test_wrong_memory_pages_and_devices_are_found(self):
        snap = build(instances=[instance('vm1', pagesize=None,
                                         cells=None)],
                     domains=[('src', 'vm1', DOMAIN_XML.replace(
                         'cellid="0" mode="strict" nodeset="0"',
                         'cellid="0" mode="strict" nodeset="1"'))])
        [problem] = domain_check(snap)
        self.assertIn('guest cell 0 memory on host node(s) [1], Nova placed '
                      'it on 0', problem)
        self.assertIn('huge pages {2048K: cells [0]}, expected none',
                      problem)
        self.assertIn('PCI host devices 0000:02:00.0, its host allocated '
                      'it none', problem)

    def test_a_suspended_guest_may_have_its_devices_detached(self):
        xml = DOMAIN_XML.replace('type="pci" managed', 'type="usb" managed')
        snap = build(instances=[instance('vm1', vm_state='suspended')],
                     domains=[('src', 'vm1', xml)],
                     devices=[('src', '0000:02:00.0', 'allocated', 'vm1')])
        self.assertEqual([], domain_check(snap))
        # Never another device than its own, suspended or not.
        snap = build(instances=[instance('vm1', vm_state='suspended')],
                     domains=[('src', 'vm1', DOMAIN_XML)],
                     devices=[('src', '0000:03:00.0', 'allocated', 'vm1')])
        self.assertEqual(['domain_agrees: guest vm1 (suspended) on src: PCI '
                          'host devices 0000:02:00.0, its host allocated it '
                          '0000:03:00.0'], domain_check(snap))

    def test_unpinned_vcpus_float_over_their_cells_shared_cpus(self):
        xml = DOMAIN_XML.replace('cpuset="2"/>', 'cpuset="0-1,8-9"/>')
        xml = xml.replace('cpuset="10"/>', 'cpuset="0-1,8"/>')
        xml = xml.replace('cpuset="2,10"', 'cpuset="0-1,8-9"')
        snap = build(instances=[instance('vm1', pinning={})],
                     domains=[('src', 'vm1', xml)],
                     devices=[('src', '0000:02:00.0', 'allocated', 'vm1')])
        self.assertEqual(['domain_agrees: guest vm1 (active) on src: vCPU 1 '
                          'on [0-1,8], Nova placed it on [0-1,8-9]'],
                         domain_check(snap))

    def test_missing_domain_in_flight_and_stopped_hosts(self):
        snap = build(instances=[instance('vm1'),
                                instance('vm2', task_state='migrating')])
        self.assertEqual(['domain_agrees: guest vm1 (active) on src: no '
                          'domain on its host'], domain_check(snap))
        self.assertEqual([], domain_check(snap, skip={'src'}))

    def test_a_same_host_resize_confirmed_is_the_harness_s_limit(self):
        # The harness's computes read CONF.host 'fake-mini': Nova's
        # _cleanup_resize undefines the domain of a guest resized on its
        # host. A confirmed resize across hosts is still checked.
        for source, found in (('src', []), ('dst', [
                'domain_agrees: guest vm1 (active) on src: no domain on '
                'its host'])):
            snap = build(instances=[instance('vm1')], migrations=[
                ('vm1', 'confirmed', source, 'src')])
            self.assertEqual(found, domain_check(snap))

    def test_a_domain_the_hypervisor_lost_waits_for_nova_to_notice(self):
        # src started afresh: vm1 was there before the step and is still
        # active there; Nova notices at _sync_power_states.
        before = build(instances=[instance('vm1')],
                       domains=[('src', 'vm1', DOMAIN_XML)])
        after = build(instances=[instance('vm1')])
        self.assertEqual([], domain_check(after, before=before))
        # Placed there by the step (it was on dst), or started by it.
        for was in (instance('vm1', host='dst'),
                    instance('vm1', vm_state='stopped')):
            self.assertEqual(
                ['domain_agrees: guest vm1 (active) on src: no domain on '
                 'its host'],
                domain_check(after, before=build(instances=[was])))
