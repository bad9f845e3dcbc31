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
