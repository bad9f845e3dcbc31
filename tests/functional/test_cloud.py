"""The foundation: boot, resize, confirm, revert and delete on real Nova.

Hosts run Nova's fake.MediumFakeDriver: 10 vCPUs, 8192 MB, 1028 GB each.
Expected values are worked out from the flavors and Nova's documented
behaviour:

- a server's allocation is its flavor (VCPU, MEMORY_MB, DISK_GB =
  root disk), against the provider of the host it runs on;
- during VERIFY_RESIZE the migration record is the consumer of the old
  flavor on the source, the instance of the new flavor on the destination;
- confirm drops the source side, revert drops the destination side;
- a tracker's memory_mb_used counts reserved_host_memory_mb (default 512)
  plus its guests, and a source tracker keeps counting an outgoing move
  until it is confirmed or reverted;
- a destination tracker learns of a moved-in guest as an instance only at
  its next update_available_resource: until then it counts the migration
  (resize) or nothing (live migration), so tracker checks after a move
  run that periodic first, as Nova's own tests do.
"""

import logging
import socket

import fixtures

from harness.cloud import fixture as cloud_mod
from harness.cloud import offline
from harness.core import errors
from harness import testing

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2}
RESERVED_MB = 512  # Nova's default reserved_host_memory_mb


def tracker_usage(snap, host):
    tracker = snap.trackers[host]
    return {'VCPU': tracker.vcpus_used,
            'MEMORY_MB': tracker.memory_mb_used - RESERVED_MB,
            'DISK_GB': tracker.local_gb_used}


def nothing():
    return {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}


class CloudTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.start_compute('host2')
        self.cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        self.cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)

    def assertNothingLeft(self, after_move=False):
        """Placement holds nothing now; the trackers likewise.

        After a move, the trackers are checked once update_available_resource
        has run (see the module docstring).
        """
        snap = self.cloud.snapshot()
        self.assertEqual({}, snap.allocations)
        for host in ('host1', 'host2'):
            self.assertEqual({}, snap.usage(host))
        if after_move:
            self.cloud.run_periodics()
            snap = self.cloud.snapshot()
            self.assertEqual({}, snap.allocations)
        for host in ('host1', 'host2'):
            self.assertEqual(nothing(), tracker_usage(snap, host))


class TestBoot(CloudTestCase):

    def test_boot_on_named_host_then_delete(self):
        server = self.cloud.servers.boot('vm1', 'small', host='host2')
        self.assertEqual('ACTIVE', server['status'])
        self.assertEqual('host2', server['OS-EXT-SRV-ATTR:host'])

        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': SMALL}}, snap.allocations)
        self.assertEqual(SMALL, snap.usage('host2'))
        self.assertEqual({}, snap.usage('host1'))
        self.assertEqual(SMALL, tracker_usage(snap, 'host2'))
        self.assertEqual(nothing(), tracker_usage(snap, 'host1'))

        self.cloud.servers.delete('vm1')
        self.assertNothingLeft()

    def test_no_fit_fails_with_the_server_state(self):
        # 16 vCPUs fit on no 10-vCPU host (cpu_allocation_ratio applies to
        # VCPU inventory, but the scheduler's request is still checked
        # against max_unit = 10).
        self.cloud.create_flavor('huge', vcpus=16, ram=512, disk=1)
        exc = self.assertRaises(errors.OperationFailed,
                                self.cloud.servers.boot, 'vm1', 'huge')
        message = str(exc)
        self.assertIn('status is ERROR', message)
        self.assertIn('No valid host', message)
        self.assertIn('action create', message)
        self.assertEqual({}, self.cloud.snapshot().allocations)

    def test_nothing_periodic_runs_by_itself(self):
        services = [self.cloud.conductor, self.cloud.scheduler] + list(
            self.cloud.computes.values())
        for service in services:
            self.assertEqual([], service.tg.timers, service.binary)

    def test_periodic_on_purpose_keeps_accounting(self):
        self.cloud.servers.boot('vm1', 'small', host='host1')
        before = self.cloud.snapshot()
        self.cloud.run_periodics()
        self.assertEqual(before, self.cloud.snapshot())

    def test_unknown_periodic_is_refused(self):
        exc = self.assertRaises(errors.UnknownName, self.cloud.run_periodic,
                                'update_everything', 'host1')
        self.assertIn('update_available_resource', str(exc))

    def test_restart_keeps_the_node_uuid_and_the_guest(self):
        self.cloud.servers.boot('vm1', 'small', host='host1')
        uuid = self.cloud.snapshot().provider('host1').uuid
        self.cloud.restart_compute('host1')
        self.cloud.run_periodic('update_available_resource', 'host1')
        snap = self.cloud.snapshot()
        self.assertEqual(uuid, snap.provider('host1').uuid)
        self.assertEqual({'vm1': {'host1': SMALL}}, snap.allocations)
        self.assertEqual(SMALL, tracker_usage(snap, 'host1'))
        self.cloud.servers.delete('vm1')
        self.assertNothingLeft()

    def test_a_cast_to_a_stopped_compute_waits_for_it(self):
        # Stopped but not seen down (no virtual time passed): the API
        # casts terminate_instance to it. The delete fails at once, naming
        # the queued cast, and the compute runs the cast when it starts.
        self.cloud.servers.boot('vm1', 'small', host='host1')
        self.cloud.stop_compute('host1')
        exc = self.assertRaises(errors.OperationFailed,
                                self.cloud.servers.delete, 'vm1')
        self.assertIn('the server is still there', str(exc))
        self.assertIn('cast to stopped computes, queued until they start: '
                      'host1: terminate_instance', str(exc))
        self.assertEqual({'host1': ['terminate_instance']},
                         self.cloud.casts.queued_methods())
        self.cloud.restart_compute('host1')
        self.assertEqual({}, self.cloud.casts.queued_methods())
        self.assertEqual({}, self.cloud.snapshot().allocations)


class TestResize(CloudTestCase):

    def setUp(self):
        super().setUp()
        self.cloud.servers.boot('vm1', 'small', host='host1')

    def assertVerifyResize(self):
        snap = self.cloud.snapshot()
        self.assertEqual(
            {'migration(vm1)': {'host1': SMALL}, 'vm1': {'host2': LARGE}},
            snap.allocations)
        self.assertEqual('VERIFY_RESIZE', snap.servers['vm1'].status)
        self.assertEqual('host2', snap.servers['vm1'].host)
        self.assertEqual(SMALL, tracker_usage(snap, 'host1'))
        self.assertEqual(LARGE, tracker_usage(snap, 'host2'))

    def test_resize_then_confirm(self):
        server = self.cloud.servers.resize('vm1', 'large')
        self.assertEqual('VERIFY_RESIZE', server['status'])
        self.assertVerifyResize()

        self.cloud.servers.confirm('vm1')
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': LARGE}}, snap.allocations)
        self.assertEqual({}, snap.usage('host1'))
        self.assertEqual(nothing(), tracker_usage(snap, 'host1'))
        self.assertEqual(LARGE, tracker_usage(snap, 'host2'))
        self.assertEqual('confirmed',
                         snap.migrations['migration(vm1)'].status)

        self.cloud.servers.delete('vm1')
        self.assertNothingLeft(after_move=True)

    def test_resize_then_revert(self):
        self.cloud.servers.resize('vm1', 'large')
        self.assertVerifyResize()

        server = self.cloud.servers.revert('vm1')
        self.assertEqual('host1', server['OS-EXT-SRV-ATTR:host'])
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host1': SMALL}}, snap.allocations)
        self.assertEqual({}, snap.usage('host2'))
        self.assertEqual(SMALL, tracker_usage(snap, 'host1'))
        self.assertEqual(nothing(), tracker_usage(snap, 'host2'))

        self.cloud.servers.delete('vm1')
        self.assertNothingLeft(after_move=True)

    def test_cold_migrate_then_confirm(self):
        self.cloud.servers.migrate('vm1', host='host2')
        snap = self.cloud.snapshot()
        self.assertEqual(
            {'migration(vm1)': {'host1': SMALL}, 'vm1': {'host2': SMALL}},
            snap.allocations)
        self.assertEqual('migration',
                         snap.migrations['migration(vm1)'].type)
        self.cloud.servers.confirm('vm1')
        self.assertEqual({'vm1': {'host2': SMALL}},
                         self.cloud.snapshot().allocations)
        self.cloud.servers.delete('vm1')
        self.assertNothingLeft(after_move=True)


class TestLiveMigrate(CloudTestCase):

    def test_live_migrate_targeted(self):
        self.cloud.servers.boot('vm1', 'small', host='host1')
        server = self.cloud.servers.live_migrate('vm1', host='host2')
        self.assertEqual('host2', server['OS-EXT-SRV-ATTR:host'])
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': SMALL}}, snap.allocations)
        self.assertEqual('completed',
                         snap.migrations['migration(vm1)'].status)
        self.cloud.run_periodics()
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': SMALL}}, snap.allocations)
        self.assertEqual(SMALL, tracker_usage(snap, 'host2'))
        self.assertEqual(nothing(), tracker_usage(snap, 'host1'))
        self.cloud.servers.delete('vm1')
        self.assertNothingLeft(after_move=True)

    def test_live_migrate_scheduler_choice(self):
        self.cloud.servers.boot('vm1', 'small', host='host1')
        server = self.cloud.servers.live_migrate('vm1')
        # With two hosts, the only other one is the scheduler's choice.
        self.assertEqual('host2', server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual({'vm1': {'host2': SMALL}},
                         self.cloud.snapshot().allocations)


class TestOffline(testing.TestCase):

    def test_a_real_connection_fails_at_once_with_the_address(self):
        self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        exc = self.assertRaises(offline.NetworkAttempt,
                                socket.create_connection, ('127.0.0.1', 9))
        self.assertIn('(connect to 127.0.0.1 port 9)', str(exc))
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.addCleanup(sock.close)
        self.assertRaises(offline.NetworkAttempt, sock.connect_ex,
                          ('::1', 9))


class TestLogging(testing.TestCase):
    """Nova's DEBUG records are not built unless OS_DEBUG asks for them.

    Nova's StandardLogging fixture sets the root logger to DEBUG and
    formats every debug record into a null handler; the cloud puts the
    root back to INFO while it stands (and to what it was after), so a
    debug message costs a level test, and what is captured (INFO and up)
    stays the same.
    """

    def _levels(self, os_debug):
        self.useFixture(fixtures.EnvironmentVariable('OS_DEBUG', os_debug))
        root = logging.getLogger()
        before = root.level
        with cloud_mod.Cloud(test_id=self.id()) as cloud:
            nova = logging.getLogger('nova.compute.resource_tracker')
            debug = nova.isEnabledFor(logging.DEBUG)
            nova.info('an INFO line the cloud captures')
            captured = cloud.env.stdlog.logger.output
        self.assertEqual(before, root.level)
        self.assertIn('an INFO line the cloud captures', captured)
        return debug

    def test_debug_is_off_by_default(self):
        self.assertFalse(self._levels(None))

    def test_os_debug_keeps_debug_on(self):
        self.assertTrue(self._levels('1'))


class TestProxyInEnvironment(testing.TestCase):
    """A proxy the environment names does not take the cloud's requests.

    Every request a cloud makes is answered in this process
    (wsgi-intercept); ``requests`` would send it to a proxy named in the
    environment instead (tox passes ``http_proxy`` and ``no_proxy``
    through), where nothing answers: the harness's clients do not read
    the environment (``nova_env.InProcessHTTP``).
    """

    def test_requests_stay_in_process(self):
        for name in ('http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'):
            self.useFixture(fixtures.EnvironmentVariable(
                name, 'http://127.0.0.1:9'))
        for name in ('no_proxy', 'NO_PROXY'):
            self.useFixture(fixtures.EnvironmentVariable(name, None))
        with cloud_mod.Cloud(test_id=self.id()) as cloud:
            # Placement: the compute's provider and its inventory.
            cloud.start_compute('host1')
            # Nova's API.
            cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
            snap = cloud.snapshot()
        self.assertIn('host1', snap.providers)
        self.assertIn('VCPU', snap.providers['host1'].inventories)
