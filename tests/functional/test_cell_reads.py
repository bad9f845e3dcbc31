"""The harness's reads of the cells never wait for Nova's cell switch.

Nova's ``CellDatabases`` fixture holds a read lock for as long as code
runs inside ``context.target_cell`` (Nova's periodics run there), and
targeting another cell than the last one takes its write lock. A harness
read of every cell (cell0 first) through ``context.target_cell`` thus
waited for any periodic in flight; and a periodic waiting for a
greenthread it spawned, whose read waited behind that writer, never
ended (a forked nested exploration hung, 0 CPU). The reads target their
own copies of the context (``databases.targeted_copy``) instead.

Each test holds cell1 as a periodic does, in another (green)thread, for
at most ``HOLD_SECONDS``, and reads meanwhile: the read must return
while the cell is still held (through ``context.target_cell`` it waited
until the holder gave up), and find each cell's records.

Host: ``dev-1s-8c-smt2`` (one NUMA cell, CPUs 2-7 and their siblings
10-15 dedicated): ``pin2``, two dedicated vCPUs under the default
``prefer`` thread policy, is pinned to the first free dedicated core's
two threads, CPUs 2 and 10. ``huge`` asks for 40 GiB (the host has 32,
Nova's default quota allows 50): the scheduler finds no valid host, and
the server is buried in cell0.
"""

import threading

from nova import context as nova_context

from harness.cloud import databases
from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness.report import recorder
from harness import testing

#: How long the holder keeps cell1 at most: far longer than any read.
HOLD_SECONDS = 30


class TestReadsWhileACellIsHeld(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1', profile='dev-1s-8c-smt2')
        self.cloud.create_flavor('pin2', vcpus=2, ram=512, disk=1,
                                 extra_specs={'hw:cpu_policy': 'dedicated'})
        self.cloud.create_flavor('huge', vcpus=1, ram=40960, disk=1)
        self.assertRaises(errors.OperationFailed,
                          self.cloud.servers.boot, 'vm0', 'huge')
        self.cloud.servers.boot('vm1', 'pin2', host='host1')
        # Whatever was read while booting is read again.
        databases.count_write()

    def read_while_cell1_is_held(self, read):
        """``read()``'s result, read while another thread is in cell1.

        Fails if the holder had to give up before the read returned.
        """
        cell1 = self.cloud.env.cells.cell_mappings[databases.CELL1_NAME]
        inside, done = threading.Event(), threading.Event()
        held = {}

        def hold():
            with nova_context.target_cell(
                    nova_context.get_admin_context(), cell1):
                inside.set()
                held['released'] = done.wait(HOLD_SECONDS)

        holder = threading.Thread(target=hold, name='cell1-holder')
        holder.start()
        try:
            self.assertTrue(inside.wait(HOLD_SECONDS),
                            'the holder never entered cell1')
            result = read()
        finally:
            done.set()
            holder.join()
        self.assertTrue(held['released'],
                        'the read waited %d s for the thread holding '
                        'cell1' % HOLD_SECONDS)
        return result

    def names(self, uuids):
        names = self.cloud.servers.names()
        return sorted(names[uuid] for uuid in uuids)

    def test_servers_and_migrations(self):
        records = self.read_while_cell1_is_held(
            self.cloud.reader.read_nova_records)
        by_name = {self.names([r['id']])[0]: r for r in records['servers']}
        self.assertEqual(
            {'vm0': ('ERROR', None), 'vm1': ('ACTIVE', 'host1')},
            {name: (r['status'], r['OS-EXT-SRV-ATTR:host'])
             for name, r in by_name.items()})
        self.assertEqual([], records['migrations'])

    def test_faults_and_actions(self):
        faults, actions = self.read_while_cell1_is_held(
            self.cloud.reader.read_failure_records)
        # vm0's fault is in cell0, vm1's actions in cell1.
        self.assertEqual(
            [('vm0', 'nova.exception.NoValidHost')],
            [(self.names([f['instance_uuid']])[0], f['exception'])
             for f in faults])
        self.assertEqual(['vm0', 'vm1'], self.names(
            a['instance_uuid'] for a in actions if a['action'] == 'create'))

    def test_a_snapshot(self):
        snap = self.read_while_cell1_is_held(self.cloud.reader.read)
        self.assertEqual(['host1'], snap.compute_nodes())
        self.assertEqual(
            {'vm1': {'host1': {'PCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1}}},
            snap.allocations)

    def test_forced_down_hosts(self):
        self.cloud.services.force_down('host1')
        self.assertEqual({'host1'}, self.read_while_cell1_is_held(
            self.cloud.services.forced_down_hosts))

    def test_the_recorder_s_guest_cpus(self):
        self.assertEqual(
            {'host1': {2: 'vm1', 10: 'vm1'}},
            self.read_while_cell1_is_held(
                lambda: recorder.guest_cpus(self.cloud)))
