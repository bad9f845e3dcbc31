"""Snapshots rebuilt from recorded Placement and Nova responses.

The recording (tools/record_responses.py) is boot -> resize -> confirm of
one server on two fake hosts (fake.MediumFakeDriver: 10 vCPUs, 8192 MB,
1028 GB each). Expected values come from the flavors and Nova's documented
behaviour, not from the recording:

- small = 1 vCPU, 512 MB, 1 GB; large = 2 vCPUs, 1024 MB, 2 GB;
- during VERIFY_RESIZE the migration consumer holds the old flavor on the
  source and the instance the new flavor on the destination;
- after confirm only the destination holds anything;
- a tracker's memory_mb_used includes reserved_host_memory_mb (512 MB by
  default), and a source tracker keeps counting an outgoing resize until
  it is confirmed.
"""

import copy
import json
import os


from harness.core import snapshot
from harness import testing

DATA = os.path.join(os.path.dirname(__file__), 'data', 'resize_confirm.json')

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2}
RESERVED_HOST_MEMORY_MB = 512


def load_steps():
    with open(DATA) as recording:
        return json.load(recording)['steps']


def rebuild(step):
    """A snapshot from one recorded step, through the real record code."""
    raw = snapshot.placement_records(step['placement'].__getitem__)
    raw.update(snapshot.nova_records(step['nova'].__getitem__))
    raw['compute_nodes'] = step['compute_nodes']
    return snapshot.Snapshot.from_raw(raw, step['names'], step['label'])


class TestRecordedResizeConfirm(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.boot, self.resized, self.confirmed = [
            rebuild(step) for step in load_steps()]

    def test_providers_are_named_by_host(self):
        self.assertEqual(['host1', 'host2'], sorted(self.boot.providers))
        self.assertEqual(['host1', 'host2'], self.boot.compute_nodes())
        host1 = self.boot.provider('host1')
        self.assertIsNone(host1.parent)
        self.assertEqual('host1', host1.root)
        self.assertEqual(10, host1.inventories['VCPU']['total'])
        self.assertEqual(8192, host1.inventories['MEMORY_MB']['total'])
        self.assertEqual(RESERVED_HOST_MEMORY_MB,
                         host1.inventories['MEMORY_MB']['reserved'])

    def test_boot_allocates_the_flavor_on_its_host_only(self):
        self.assertEqual({'vm1': {'host1': SMALL}}, self.boot.allocations)
        self.assertEqual(SMALL, self.boot.usage('host1'))
        self.assertEqual({}, self.boot.usage('host2'))
        tracker = self.boot.trackers['host1']
        self.assertEqual(
            (1, 512 + RESERVED_HOST_MEMORY_MB, 1),
            (tracker.vcpus_used, tracker.memory_mb_used,
             tracker.local_gb_used))
        other = self.boot.trackers['host2']
        self.assertEqual((0, RESERVED_HOST_MEMORY_MB, 0),
                         (other.vcpus_used, other.memory_mb_used,
                          other.local_gb_used))

    def test_verify_resize_splits_old_and_new_flavor(self):
        self.assertEqual(
            {'vm1': {'host2': LARGE}, 'migration(vm1)': {'host1': SMALL}},
            self.resized.allocations)
        migration = self.resized.migrations['migration(vm1)']
        self.assertEqual(('vm1', 'host1', 'host2', 'finished', 'resize'),
                         (migration.server, migration.source, migration.dest,
                          migration.status, migration.type))
        self.assertEqual('VERIFY_RESIZE', self.resized.servers['vm1'].status)
        self.assertEqual('host2', self.resized.servers['vm1'].host)
        # The source still counts the outgoing resize until confirm.
        self.assertEqual(1, self.resized.trackers['host1'].vcpus_used)
        self.assertEqual(2, self.resized.trackers['host2'].vcpus_used)

    def test_confirm_leaves_only_the_destination(self):
        self.assertEqual({'vm1': {'host2': LARGE}},
                         self.confirmed.allocations)
        self.assertEqual({}, self.confirmed.usage('host1'))
        self.assertEqual(LARGE, self.confirmed.usage('host2'))
        self.assertEqual({'host2': LARGE},
                         self.confirmed.allocations_of('vm1'))
        self.assertEqual({}, self.confirmed.allocations_of('migration(vm1)'))
        self.assertEqual({'vm1': LARGE},
                         self.confirmed.allocations_against('host2'))

    def test_equal_when_the_accounting_is_equal(self):
        step = load_steps()[0]
        self.assertEqual(self.boot, rebuild(step))
        # Generations, UUIDs and statuses are not accounting.
        bumped = copy.deepcopy(step)
        bumped['placement']['/resource_providers']['resource_providers'][0][
            'generation'] += 7
        bumped['nova'][snapshot.SERVERS_URL]['servers'][0]['status'] = 'X'
        self.assertEqual(self.boot, rebuild(bumped))
        self.assertNotEqual(self.boot, self.resized)
        self.assertNotEqual(self.resized, self.confirmed)

    def test_tracker_usage_counts_in_equality(self):
        step = load_steps()[0]
        changed = copy.deepcopy(step)
        changed['compute_nodes'][0]['vcpus_used'] += 1
        self.assertNotEqual(self.boot, rebuild(changed))

    def test_a_consumer_nobody_named_keeps_its_uuid(self):
        step = load_steps()[0]
        uuid = next(iter(step['names']))
        anonymous = dict(step, names={})
        snap = rebuild(anonymous)
        self.assertEqual({uuid: {'host1': SMALL}}, snap.allocations)

    def test_render_is_a_table_of_consumers_by_provider(self):
        lines = self.resized.render().splitlines()
        self.assertEqual('resize vm1 to large', lines[0])
        self.assertEqual(['consumer', 'host1', 'host2'], lines[1].split())
        rows = {line.split()[0]: line for line in lines[2:5]}
        self.assertIn('DISK_GB=1 MEMORY_MB=512 VCPU=1',
                      rows['migration(vm1)'])
        self.assertIn('DISK_GB=2 MEMORY_MB=1024 VCPU=2', rows['vm1'])
        self.assertIn('tracker host1: vcpus 1/10', self.resized.render())


def numa_raw(pinned):
    """A hand-built raw record: one host, two NUMA cells of 4 CPUs."""
    return {
        'resource_providers': [{
            'uuid': 'rp-1', 'name': 'numa1', 'generation': 3,
            'parent_provider_uuid': None, 'root_provider_uuid': 'rp-1'}],
        'inventories': {'rp-1': {'PCPU': {'total': 8, 'reserved': 0,
                                          'allocation_ratio': 1.0}}},
        'usages': {'rp-1': {'PCPU': len(pinned)}},
        'allocations': {'rp-1': {
            'uuid-vm1': {'resources': {'PCPU': len(pinned)}}}},
        'compute_nodes': [{
            'host': 'numa1', 'node': 'numa1', 'vcpus': 8, 'vcpus_used': 0,
            'memory_mb': 4096, 'memory_mb_used': 512, 'local_gb': 100,
            'local_gb_used': 0,
            'cells': [
                {'id': cell, 'cpus': [],
                 'pcpus': list(range(4 * cell, 4 * cell + 4)),
                 'cpu_usage': 0, 'memory_mb': 2048, 'memory_usage': 0,
                 'pinned_cpus': [c for c in pinned if c // 4 == cell],
                 'pages': {'4': {'total': 524288, 'used': 0, 'reserved': 0},
                           '2048': {'total': 0, 'used': 0, 'reserved': 0}}}
                for cell in (0, 1)]}],
    }


class TestNumaTrackers(testing.TestCase):

    def test_pinned_cpus_per_cell_and_host(self):
        snap = snapshot.Snapshot.from_raw(numa_raw([5, 1, 4]),
                                          {'uuid-vm1': 'vm1'})
        tracker = snap.trackers['numa1']
        self.assertEqual((1,), tracker.cells[0].pinned_cpus)
        self.assertEqual((4, 5), tracker.cells[1].pinned_cpus)
        self.assertEqual((1, 4, 5), tracker.pinned_cpus)
        self.assertEqual({4: {'total': 524288, 'used': 0, 'reserved': 0},
                          2048: {'total': 0, 'used': 0, 'reserved': 0}},
                         tracker.cells[0].pages)
        self.assertIn('cell 1: cpus 0 used, pinned [4-5]', snap.render())

    def test_pinning_differences_break_equality(self):
        one = snapshot.Snapshot.from_raw(numa_raw([0, 1]), {})
        other = snapshot.Snapshot.from_raw(numa_raw([2, 3]), {})
        self.assertNotEqual(one, other)
        self.assertEqual(one, snapshot.Snapshot.from_raw(numa_raw([1, 0]),
                                                         {}))


class TestFormatting(testing.TestCase):

    def test_cpu_ranges(self):
        self.assertEqual('0-3,8,10-11',
                         snapshot.format_cpus([11, 0, 1, 2, 3, 8, 10]))
        self.assertEqual('', snapshot.format_cpus([]))

    def test_resources_sorted_by_class(self):
        self.assertEqual('DISK_GB=1 VCPU=2',
                         snapshot.format_resources({'VCPU': 2, 'DISK_GB': 1}))
        self.assertEqual('-', snapshot.format_resources({}))


def two_migrations_raw(records=True):
    """vm1 resized twice; the first migration's consumer still holds SMALL.

    With ``records=False`` neither migration is on record any more (their
    server was deleted) while the first one's allocation stays behind.
    """
    raw = {'resource_providers': [
        {'uuid': 'rp-src', 'name': 'src', 'generation': 1,
         'parent_provider_uuid': None, 'root_provider_uuid': 'rp-src'}],
        'inventories': {'rp-src': {}},
        'usages': {'rp-src': dict(SMALL)},
        'allocations': {'rp-src': {'mig-a': {'resources': dict(SMALL)}}},
        'servers': [], 'compute_nodes': [], 'migrations': []}
    if records:
        raw['migrations'] = [
            {'id': n, 'uuid': uuid, 'instance_uuid': 'uuid-vm1',
             'status': 'confirmed', 'source_compute': 'src',
             'dest_compute': 'dst', 'migration_type': 'resize'}
            for n, uuid in ((7, 'mig-a'), (9, 'mig-b'))]
    return raw


class TestMigrationConsumerNames(testing.TestCase):
    """Names that read the same in every run (no UUID in them)."""

    def test_an_older_migration_is_numbered_in_order(self):
        snap = snapshot.Snapshot.from_raw(two_migrations_raw(),
                                          {'uuid-vm1': 'vm1'})
        self.assertEqual(['migration(vm1)', 'migration(vm1)#1'],
                         sorted(snap.migrations))
        self.assertEqual('mig-a', snap.migrations['migration(vm1)#1'].uuid)
        self.assertEqual({'migration(vm1)#1': {'src': SMALL}},
                         snap.allocations)

    def test_a_migration_gone_from_record_keeps_its_former_name(self):
        snap = snapshot.Snapshot.from_raw(
            two_migrations_raw(records=False), {},
            former_names={'mig-a': 'migration(vm1)#1'})
        self.assertEqual({'migration(vm1)#1': {'src': SMALL}},
                         snap.allocations)
