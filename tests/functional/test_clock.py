"""The clock: nothing periodic runs unless the test moves time or asks.

Expected schedules come from Nova's documented defaults:
``update_resources_interval`` = 0 means "the default periodic interval",
60 s (oslo.service's DEFAULT_INTERVAL); ``report_interval`` = 10 s is how
often a service heartbeats; ``service_down_time`` = 60 s is how stale a
heartbeat may be before the service counts as down;
``resize_confirm_window`` = N > 0 makes the destination compute confirm
a resize left in VERIFY_RESIZE for more than N seconds, from its
``_poll_unconfirmed_resizes`` task (every 60 s).
"""

import datetime

from oslo_utils import timeutils

from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness import testing

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2}


def two_hosts(cloud):
    cloud.start_compute('host1')
    cloud.start_compute('host2')
    cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
    cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)
    return cloud


class TestAdvance(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = two_hosts(
            self.useFixture(cloud_mod.Cloud(test_id=self.id())))

    def test_fires_what_comes_due_in_order(self):
        fired = self.cloud.clock.advance(60)
        self.assertEqual(sorted(fired), fired)
        self.assertTrue(all(0 < due <= 60 for due, _, _ in fired))
        # update_available_resource: once per compute, at 60 s, by host.
        self.assertEqual(
            [(60.0, 'host1'), (60.0, 'host2')],
            [(due, host) for due, host, task in fired
             if task == 'update_available_resource'])
        # Heartbeats every 10 s for each of the four services.
        beats = [(due, host) for due, host, task in fired
                 if task == 'report_state']
        self.assertEqual(
            [(float(t), host) for t in range(10, 61, 10)
             for host in ('conductor', 'host1', 'host2', 'scheduler')],
            beats)
        # The next advance picks up where this one left off.
        again = self.cloud.clock.advance(60)
        self.assertEqual(
            [(120.0, 'host1'), (120.0, 'host2')],
            [(due, host) for due, host, task in again
             if task == 'update_available_resource'])

    def test_nothing_fires_before_it_is_due(self):
        self.assertEqual([], self.cloud.clock.advance(9.5))
        self.assertEqual(
            ['report_state'] * 4,
            [task for _, _, task in self.cloud.clock.advance(0.5)])

    def test_utcnow_follows_virtual_time(self):
        before = timeutils.utcnow()
        self.cloud.clock.advance(300)
        elapsed = timeutils.utcnow() - before
        self.assertGreaterEqual(elapsed, datetime.timedelta(seconds=300))
        self.assertLess(elapsed, datetime.timedelta(seconds=301))

    def test_services_stay_up_however_far_time_moves(self):
        # Ten times service_down_time: without heartbeats all would be down.
        self.cloud.clock.advance(600)
        services = self.cloud.api.api_get('/os-services').body['services']
        self.assertEqual({'up'}, {svc['state'] for svc in services})
        # And the scheduler still sees both computes.
        self.cloud.servers.boot('vm1', 'small', host='host2')
        self.assertEqual({'vm1': {'host2': SMALL}},
                         self.cloud.snapshot().allocations)

    def test_run_one_task_by_name(self):
        self.cloud.servers.boot('vm1', 'small', host='host1')
        self.cloud.clock.run('update_available_resource', 'host1')
        self.assertEqual(0.0, self.cloud.clock.now)
        exc = self.assertRaises(errors.UnknownName, self.cloud.clock.run,
                                'no_such_task', 'host1')
        self.assertIn('_poll_unconfirmed_resizes', str(exc))
        exc = self.assertRaises(errors.UnknownName, self.cloud.clock.run,
                                'update_available_resource', 'host9')
        self.assertIn('host1', str(exc))

    def test_tasks_nova_disables_run_only_when_asked(self):
        # heal_instance_info_cache_interval defaults to -1 in Nova 34: the
        # task is not scheduled, yet it can be run by name.
        self.assertNotIn('_heal_instance_info_cache',
                         self.cloud.clock.tasks_of('host1'))
        self.assertIn('_heal_instance_info_cache',
                      self.cloud.clock.runnable_tasks('host1'))
        self.cloud.servers.boot('vm1', 'small', host='host1')
        self.cloud.clock.run('_heal_instance_info_cache', 'host1')
        self.assertNotIn('_heal_instance_info_cache',
                         [task for _, _, task in self.cloud.clock.advance(
                             120)])

    def test_time_only_moves_forward(self):
        self.assertRaises(errors.HarnessError, self.cloud.clock.advance, -1)


class TestAutoConfirm(testing.TestCase):
    """Past resize_confirm_window, the destination confirms by itself."""

    WINDOW = 120

    def resized_cloud(self, cloud):
        two_hosts(cloud)
        cloud.servers.boot('vm1', 'small', host='host1')
        cloud.servers.resize('vm1', 'large')
        return cloud

    def test_auto_confirm_ends_as_a_manual_confirm(self):
        conf = {'DEFAULT': {'resize_confirm_window': self.WINDOW}}
        with cloud_mod.Cloud(test_id=self.id(), conf=conf) as manual:
            self.resized_cloud(manual)
            manual.servers.confirm('vm1')
            manual.run_periodics()
            expected = manual.snapshot()
        self.assertEqual({'vm1': {'host2': LARGE}}, expected.allocations)

        cloud = self.resized_cloud(self.useFixture(
            cloud_mod.Cloud(test_id=self.id(), conf=conf)))
        # At 60 s the window has not passed: still waiting for the user.
        self.cloud_advance(cloud, 60)
        self.assertEqual('VERIFY_RESIZE', cloud.servers.get('vm1')['status'])
        # One poll after the window has passed, it is confirmed.
        fired = self.cloud_advance(cloud, self.WINDOW)
        self.assertIn((180.0, 'host2', '_poll_unconfirmed_resizes'), fired)
        self.assertEqual('ACTIVE', cloud.servers.get('vm1')['status'])
        self.assertEqual('confirmed',
                         cloud.servers.last_migration('vm1')['status'])
        self.assertEqual(expected, cloud.snapshot())

    def cloud_advance(self, cloud, seconds):
        return cloud.clock.advance(seconds)
