"""What is kept between clouds in a process, and what a snapshot re-reads.

Two things are kept for speed and must never carry state:

- the in-memory SQLite engines (for their compiled-SQL caches): a cloud
  made after another starts with empty databases, so it sees none of the
  earlier cloud's providers, servers or flavors;
- a snapshot's raw records, reused only while no database was written:
  any change Nova or Placement makes (an operation, a periodic, a write
  through Placement's API that Nova knows nothing of) is read afresh.

Hosts run Nova's fake.MediumFakeDriver (10 vCPUs, 8192 MB, 1028 GB).
"""

from harness import cloud as cloud_mod
from harness import errors
from harness import snapshot
from harness import testing

TINY = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class TestEnginesCarryNoState(testing.TestCase):

    def test_a_later_cloud_starts_empty(self):
        with cloud_mod.Cloud(test_id=self.id() + '.first') as first:
            first.start_compute('host1')
            first.create_flavor('tiny', vcpus=1, ram=512, disk=1)
            first.servers.boot('vm1', 'tiny')
            self.assertEqual({'vm1': {'host1': TINY}},
                             first.snapshot().allocations)
        with cloud_mod.Cloud(test_id=self.id() + '.second') as second:
            snap = second.snapshot()
            # No provider, consumer, server or migration of the first.
            self.assertEqual({}, snap.providers)
            self.assertEqual({}, snap.allocations)
            self.assertEqual([], second.api.get_servers())
            flavors = [f['name'] for f in second.api.get_flavors()]
            self.assertNotIn('tiny', flavors)
            second.start_compute('host2')
            self.assertEqual(['host2'], second.snapshot().compute_nodes())


class TestSnapshotRereads(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.create_flavor('tiny', vcpus=1, ram=512, disk=1)

    def test_nothing_written_nothing_read(self):
        self.cloud.servers.boot('vm1', 'tiny')
        first = self.cloud.snapshot()
        reads = self.cloud.reader.reads
        again = self.cloud.snapshot()
        self.assertEqual(reads, self.cloud.reader.reads)
        self.assertEqual(first, again)
        self.assertEqual({'vm1': {'host1': TINY}}, again.allocations)

    def test_an_operation_is_read(self):
        self.cloud.servers.boot('vm1', 'tiny')
        self.assertEqual({'vm1': {'host1': TINY}},
                         self.cloud.snapshot().allocations)
        self.cloud.servers.delete('vm1')
        self.assertEqual({}, self.cloud.snapshot().allocations)

    def test_a_write_through_placement_alone_is_read(self):
        before = self.cloud.snapshot()
        self.assertEqual(['host1'], sorted(before.providers))
        # A provider Nova knows nothing of, made through Placement's API.
        resp = self.cloud.placement.api.post(
            '/resource_providers', {'name': 'outsider'}, version='1.20')
        self.assertEqual(200, resp.status)
        self.assertEqual(['host1', 'outsider'],
                         sorted(self.cloud.snapshot().providers))


class TestNovaRecordsFromTheDatabase(testing.TestCase):
    """The snapshot reads Placement, servers and migrations from databases.

    They must be what the APIs list (Placement's providers with their
    inventories, usages and allocations; Nova's GET /servers/detail and GET
    /os-migrations, as an admin): checked at rest after each kind of step
    the scenarios take, including a boot the scheduler refused (its
    server lives in cell0, in ERROR).
    """

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.start_compute('host2')
        self.cloud.create_flavor('tiny', vcpus=1, ram=512, disk=1)
        self.cloud.create_flavor('small', vcpus=1, ram=1024, disk=1)
        # Twice the memory of a host (8192 MB), within the quota: the
        # scheduler finds no valid host.
        self.cloud.create_flavor('huge', vcpus=1, ram=16384, disk=1)

    def assertSameAsTheApi(self):
        reader = self.cloud.reader
        self.assertEqual(snapshot.placement_records(reader.placement_get),
                         reader.read_placement_records())
        from_db = reader.read_nova_records()
        from_api = snapshot.nova_records(reader.nova_get)
        for key in ('servers', 'migrations'):
            self.assertEqual(
                sorted(from_api[key], key=lambda r: str(r['id'])),
                sorted(from_db[key], key=lambda r: str(r['id'])), key)
        return from_db

    def test_same_as_the_api_through_moves(self):
        self.assertEqual({'servers': [], 'migrations': []},
                         self.assertSameAsTheApi())
        servers = self.cloud.servers
        servers.boot('vm1', 'tiny', host='host1')
        servers.boot('vm2', 'tiny', host='host2')
        self.assertSameAsTheApi()
        servers.resize('vm1', 'small')
        records = self.assertSameAsTheApi()
        self.assertEqual(['VERIFY_RESIZE', 'ACTIVE'],
                         [r['status'] for r in sorted(
                             records['servers'], key=lambda r: r['name'])])
        servers.confirm('vm1')
        servers.migrate('vm2')
        servers.revert('vm2')
        records = self.assertSameAsTheApi()
        self.assertEqual(['confirmed', 'reverted'],
                         [m['status'] for m in sorted(
                             records['migrations'], key=lambda m: m['id'])])
        servers.delete('vm1')
        self.assertEqual(['vm2'], [r['name'] for r in
                                   self.assertSameAsTheApi()['servers']])

    def test_same_as_the_api_for_nested_providers_and_custom_classes(self):
        # What Nova's fake hosts never make: a child provider with
        # inventory of a custom class and an allocation against it, made
        # through Placement's API.
        api = self.cloud.placement.api
        host1 = self.cloud.snapshot().provider('host1')
        self.assertEqual(201, api.put('/resource_classes/CUSTOM_GADGET',
                                      None, version='1.7').status)
        child = api.post('/resource_providers', {
            'name': 'host1_gadgets', 'parent_provider_uuid': host1.uuid},
            version='1.20').body
        self.assertEqual(200, api.put(
            '/resource_providers/%s/inventories' % child['uuid'], {
                'resource_provider_generation': child['generation'],
                'inventories': {'CUSTOM_GADGET': {
                    'total': 4, 'allocation_ratio': 1.5}}},
            version='1.20').status)
        consumer = '6a2c5a8e-5a0e-4c52-9d3b-7a4e3c1f0b11'
        self.assertEqual(204, api.put('/allocations/%s' % consumer, {
            'allocations': {child['uuid']: {
                'resources': {'CUSTOM_GADGET': 3}}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None}, version='1.28').status)
        self.assertSameAsTheApi()
        snap = self.cloud.snapshot()
        gadgets = snap.provider('host1_gadgets')
        self.assertEqual(('host1', 'host1'), (gadgets.parent, gadgets.root))
        self.assertEqual({'CUSTOM_GADGET': 3}, gadgets.usages)
        self.assertEqual({consumer: {'host1_gadgets': {'CUSTOM_GADGET': 3}}},
                         snap.allocations)

    def test_same_as_the_api_for_a_refused_boot(self):
        self.assertRaises(errors.OperationFailed,
                          self.cloud.servers.boot, 'vm1', 'huge')
        records = self.assertSameAsTheApi()
        self.assertEqual([('vm1', 'ERROR', None)],
                         [(r['name'], r['status'],
                           r['OS-EXT-SRV-ATTR:host'])
                          for r in records['servers']])
