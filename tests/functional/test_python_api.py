"""The server's whole life from Python: every operation, fault and request.

What the scenario steps do, written as a test writes it: ``cloud.servers``
for the operations, ``cloud.faults`` for a hypervisor step that fails,
``cloud.race.at(...).do(...)`` for a request in the middle of another,
``cloud.services`` for the compute services. Expected amounts are the
flavor's (1 VCPU, 512 MB, 1 GB) on Nova's medium fake hosts.
"""

from harness import Cloud  # imports Nova: at load time, not in a test
from harness.core import errors
from harness import TestCase

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class TestLifecycleFromPython(TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(Cloud(test_id=self.id()))
        for host in ('src', 'dst'):
            self.cloud.start_compute(host)
        self.cloud.create_flavor('small', vcpus=1, ram=512, disk=1)

    def held(self, consumer='vm1'):
        return self.cloud.snapshot().allocations_of(consumer)

    def test_power_shelve_and_unshelve(self):
        servers = self.cloud.servers
        servers.boot('vm1', 'small', host='src')
        for operation, status in ((servers.stop, 'SHUTOFF'),
                                  (servers.start, 'ACTIVE'),
                                  (servers.pause, 'PAUSED'),
                                  (servers.unpause, 'ACTIVE'),
                                  (servers.suspend, 'SUSPENDED'),
                                  (servers.resume, 'ACTIVE'),
                                  (servers.reboot, 'ACTIVE')):
            self.assertEqual(status, operation('vm1')['status'])
            # Power operations move no allocation.
            self.assertEqual({'src': SMALL}, self.held())
        # shelved_offload_time is 0 by default: offloaded at once.
        self.assertEqual('SHELVED_OFFLOADED',
                         servers.shelve('vm1')['status'])
        self.assertEqual({}, self.held())
        server = servers.unshelve('vm1', host='dst')
        self.assertEqual('dst', server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual({'dst': SMALL}, self.held())
        servers.rebuild('vm1')
        self.assertEqual({'dst': SMALL}, self.held())

    def test_evacuate_from_a_compute_forced_down(self):
        servers = self.cloud.servers
        servers.boot('vm1', 'small', host='src')
        self.cloud.stop_compute('src')
        self.cloud.services.force_down('src')
        server = servers.evacuate('vm1', host='dst')
        self.assertEqual(('SHUTOFF', 'dst'), (
            server['status'], server['OS-EXT-SRV-ATTR:host']))
        # Doubled until the source comes back and cleans up.
        self.assertEqual({'src': SMALL, 'dst': SMALL}, self.held())
        self.cloud.restart_compute('src')
        self.assertEqual({'dst': SMALL}, self.held())

    def test_a_fault_and_a_request_at_a_race_point(self):
        servers = self.cloud.servers
        servers.boot('vm1', 'small', host='src')
        fault = self.cloud.faults.arm('dst', 'pre_live_migration')
        self.assertRaises(errors.OperationFailed, servers.live_migrate, 'vm1',
                          host='dst')
        self.assertEqual(['pre_live_migration'], fault.fired)
        self.assertEqual('failed', servers.last_migration('vm1')['status'])
        self.assertEqual({'src': SMALL}, self.held())
        abort = self.cloud.race.at('pre_live_migration').do(
            'abort_live_migration', 'vm1')
        self.assertRaises(errors.OperationFailed, servers.live_migrate, 'vm1',
                          host='dst')
        self.assertEqual(1, len(abort.fired))
        self.assertEqual('cancelled',
                         servers.last_migration('vm1')['status'])
        self.assertEqual({'src': SMALL}, self.held())
