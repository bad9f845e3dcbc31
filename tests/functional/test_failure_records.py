"""The snapshot's faults and instance actions are what Nova's API shows.

``SnapshotReader.read_failure_records`` reads them from the cells'
databases; ``snapshot.failure_records`` asks Nova's API (as an admin, at
the latest microversion: the events' details since 2.84). They must
agree after a boot the scheduler refused (its server buried in cell0,
in ERROR, with a fault and a failed event), a boot, a resize and its
confirm, and a delete.
"""

from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness.core import snapshot
from harness import testing


class TestFailureRecordsFromTheDatabase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.start_compute('host2')
        self.cloud.create_flavor('tiny', vcpus=1, ram=512, disk=1)
        self.cloud.create_flavor('small', vcpus=1, ram=1024, disk=1)
        # Twice the memory of a host (8192 MB): no valid host.
        self.cloud.create_flavor('huge', vcpus=1, ram=16384, disk=1)

    def assertSameAsTheApi(self):
        reader = self.cloud.reader
        faults, actions = reader.read_failure_records()
        names = self.cloud.servers.names()
        live = sorted(s['id'] for s in reader.read_nova_records()['servers'])
        api_faults, api_actions = snapshot.failure_records(
            reader.nova_get, live)
        erred = {f['instance_uuid'] for f in api_faults}
        # The API names no fault's host; it shows faults in ERROR only.
        self.assertEqual(
            api_faults, [dict(f, host=None) for f in faults
                         if f['instance_uuid'] in erred])
        self.assertEqual(
            api_actions, [a for a in actions if a['instance_uuid'] in live])
        return faults, actions, names

    def test_same_as_the_api_through_a_failure_and_a_move(self):
        self.assertEqual(([], [], {}), self.assertSameAsTheApi())
        self.assertRaises(errors.OperationFailed,
                          self.cloud.servers.boot, 'vm0', 'huge')
        faults, actions, names = self.assertSameAsTheApi()
        # Nova's message for NoValidHost, its code (500: a traceback is
        # kept) and the class the traceback ends with.
        self.assertEqual(
            [('vm0', 500, 'No valid host was found. ',
              'nova.exception.NoValidHost')],
            [(names[f['instance_uuid']], f['code'], f['message'],
              f['exception']) for f in faults])
        self.assertEqual(
            [('create', ['conductor_schedule_and_build_instances'])],
            [(a['action'], [e['event'] for e in a['events']])
             for a in actions])
        self.cloud.servers.boot('vm1', 'tiny', host='host1')
        self.assertSameAsTheApi()
        self.cloud.servers.resize('vm1', 'small')
        self.assertSameAsTheApi()
        self.cloud.servers.confirm('vm1')
        faults, actions, names = self.assertSameAsTheApi()
        self.assertEqual(
            ['create', 'create', 'resize', 'confirmResize'],
            [a['action'] for a in actions])
        self.cloud.servers.delete('vm0')
        self.cloud.servers.delete('vm1')
        faults, actions, names = self.assertSameAsTheApi()
        self.assertEqual([], faults)
