"""Race points: what a move passes through, and actions injected there.

Expected orders follow Nova's documented move flows:

- resize and cold migration: the conductor's MigrationTask asks the
  scheduler, then prep_resize runs on the destination, resize_instance on
  the source (which moves instance.host to the destination, status
  post-migrating), and finish_resize on the destination (status finished);
- live migration: the conductor's LiveMigrationTask checks the destination
  (check_can_live_migrate_destination on it, which asks the source with
  check_can_live_migrate_source), then live_migration on the source,
  pre_live_migration on the destination, and post_live_migration_at_
  destination once the guest runs there; the migration goes preparing,
  running, completed.

Hosts run fake.MediumFakeDriver; flavors as in test_cloud.
"""


from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness import testing

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2}
RESERVED_MB = 512


def subsequence(wanted, passages):
    """The (point, host) pairs of ``passages`` that are in ``wanted``."""
    names = {point for point, _ in wanted}
    return [(p.point, p.host) for p in passages
            if p.when == 'before' and p.point in names]


class RaceTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.start_compute('host2')
        self.cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        self.cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)
        self.cloud.servers.boot('vm1', 'small', host='host1')
        self.cloud.race.recording.clear()


class TestRecording(RaceTestCase):

    def test_resize_passes_its_points_in_order(self):
        self.cloud.servers.resize('vm1', 'large')
        passages = self.cloud.race.recording
        wanted = [('conductor.MigrationTask', None),
                  ('prep_resize', 'host2'),
                  ('resize_instance', 'host1'),
                  ('instance.host', 'host1'),
                  ('migration.status=post-migrating', 'host1'),
                  ('finish_resize', 'host2'),
                  ('migration.status=finished', 'host2')]
        got = subsequence(wanted, passages)
        # post-migrating is saved with, or just before, the host change.
        self.assertEqual(sorted(wanted, key=str), sorted(got, key=str))
        order = [point for point, _ in got]
        for before, after in (('conductor.MigrationTask', 'prep_resize'),
                              ('prep_resize', 'resize_instance'),
                              ('resize_instance', 'instance.host'),
                              ('instance.host', 'finish_resize'),
                              ('finish_resize', 'migration.status=finished')):
            self.assertLess(order.index(before), order.index(after))
        # Every point is passed before and after, in matching pairs.
        befores = [(p.point, p.host) for p in passages if p.when == 'before']
        afters = [(p.point, p.host) for p in passages if p.when == 'after']
        self.assertEqual(sorted(befores, key=str), sorted(afters, key=str))

    def test_a_point_after_a_save_sees_the_record_written(self):
        # The explorer takes two points of a step passed at one version
        # for one state and injects at the first only: the point after
        # the save that marks the migration finished must be another
        # (the migration's status is written by then), or a race just
        # after a record's change (LP#1879878's, after confirmed) is
        # never tried.
        self.cloud.servers.resize('vm1', 'large')
        finished = {p.when: p.version for p in self.cloud.race.recording
                    if p.point == 'migration.status=finished'}
        self.assertEqual({'before', 'after'}, set(finished))
        self.assertEqual(finished['before'] + 1, finished['after'])

    def test_cold_migration_passes_the_same_compute_points(self):
        self.cloud.servers.migrate('vm1', host='host2')
        wanted = [('prep_resize', 'host2'), ('resize_instance', 'host1'),
                  ('finish_resize', 'host2')]
        self.assertEqual(
            wanted, subsequence(wanted, self.cloud.race.recording))

    def test_live_migration_passes_its_points_in_order(self):
        self.cloud.servers.live_migrate('vm1', host='host2')
        wanted = [('conductor.LiveMigrationTask', None),
                  ('check_can_live_migrate_destination', 'host2'),
                  ('check_can_live_migrate_source', 'host1'),
                  ('live_migration', 'host1'),
                  ('_do_live_migration', 'host1'),
                  ('pre_live_migration', 'host2'),
                  ('_post_live_migration', 'host1'),
                  ('post_live_migration_at_destination', 'host2')]
        self.assertEqual(
            wanted, subsequence(wanted, self.cloud.race.recording))
        statuses = [p.point for p in self.cloud.race.recording
                    if p.when == 'before'
                    and p.point.startswith('migration.status=')]
        for before, after in (('preparing', 'running'),
                              ('running', 'completed')):
            self.assertLess(statuses.index('migration.status=' + before),
                            statuses.index('migration.status=' + after))


class TestInjection(RaceTestCase):

    def test_periodic_on_source_between_resize_instance_and_finish(self):
        # LP#1944759's window: instance.host already names the destination
        # but finish_resize has not run. Since the fix the source's tracker
        # counts the outbound migration with the old flavor (old_flavor is
        # saved with the host change), so its usage stays.
        injection = self.cloud.race.at('finish_resize', when='before').run(
            'update_available_resource', host='source')
        self.cloud.servers.resize('vm1', 'large')
        self.assertEqual(1, len(injection.fired))
        self.assertEqual('host2', injection.fired[0].host)
        snap = self.cloud.snapshot()
        self.assertEqual(
            {'migration(vm1)': {'host1': SMALL}, 'vm1': {'host2': LARGE}},
            snap.allocations)
        source = snap.trackers['host1']
        self.assertEqual((1, 512 + RESERVED_MB, 1),
                         (source.vcpus_used, source.memory_mb_used,
                          source.local_gb_used))
        self.cloud.servers.confirm('vm1')
        self.cloud.run_periodics()
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': LARGE}}, snap.allocations)
        self.assertEqual(0, snap.trackers['host1'].vcpus_used)
        self.assertEqual(2, snap.trackers['host2'].vcpus_used)

    def test_fires_once_unless_asked(self):
        once = self.cloud.race.at('prep_resize').run(
            'update_available_resource', host='dest')
        every = self.cloud.race.at('prep_resize', when='after',
                                   times=None).run(
            'update_available_resource', host='source')
        self.cloud.servers.resize('vm1', 'large')
        self.cloud.servers.revert('vm1')
        self.cloud.servers.resize('vm1', 'large')
        self.assertEqual(['host2'], [p.host for p in once.fired])
        self.assertEqual(['host2', 'host2'], [p.host for p in every.fired])

    def test_filters_by_host_and_server(self):
        other = self.cloud.race.at('prep_resize', host='host1').run(
            'update_available_resource', host='host1')
        mine = self.cloud.race.at('prep_resize', server='vm1').run(
            'update_available_resource', host='host1')
        self.cloud.servers.resize('vm1', 'large')
        self.assertEqual([], other.fired)
        self.assertEqual(1, len(mine.fired))

    def test_a_failed_injection_is_reported_not_swallowed(self):
        self.cloud.race.at('prep_resize').run('no_such_task', host='dest')
        exc = self.assertRaises(errors.InjectionFailed,
                                self.cloud.servers.resize, 'vm1', 'large')
        self.assertIn('no_such_task', str(exc))
        self.assertIn('prep_resize', str(exc))

    def test_roles_need_a_migration_in_flight(self):
        self.cloud.race.at('instance.host', when='after').run(
            'update_available_resource', host='source')
        # A boot also moves instance.host (to where it lands), but nothing
        # migrates: 'source' means nothing there.
        exc = self.assertRaises(errors.InjectionFailed,
                                self.cloud.servers.boot, 'vm2', 'small',
                                host='host2')
        self.assertIn('no migration is in flight for vm2', str(exc))


class TestDeterminism(testing.TestCase):
    """The same scenario and injections give the same timeline, 20 times."""

    RUNS = 20

    def timeline(self, run):
        with cloud_mod.Cloud(test_id='%s.%d' % (self.id(), run)) as cloud:
            cloud.start_compute('host1')
            cloud.start_compute('host2')
            cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
            cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)
            snaps = []
            cloud.servers.boot('vm1', 'small', host='host1')
            snaps.append(cloud.snapshot())
            cloud.race.at('finish_resize').run(
                'update_available_resource', host='source')
            cloud.race.at('confirm_resize', when='after').run(
                'update_available_resource', host='dest')
            cloud.servers.resize('vm1', 'large')
            snaps.append(cloud.snapshot())
            cloud.servers.confirm('vm1')
            snaps.append(cloud.snapshot())
            cloud.servers.delete('vm1')
            snaps.append(cloud.snapshot())
            return ([snap.accounting() for snap in snaps],
                    cloud.race.passed())

    def test_identical_timelines(self):
        first = self.timeline(0)
        for run in range(1, self.RUNS):
            self.assertEqual(first, self.timeline(run), 'run %d' % run)


class TestInjectionInsideTheTrackerLock(RaceTestCase):
    """At a point inside the resource tracker's lock, the periodic waits.

    The source saves migration.status=confirmed inside drop_move_claim,
    under the tracker's lock (the fix for LP#1879878 put it there); a
    periodic started at that moment waits for the lock and runs once
    confirm has released it, so it sees a confirmed migration and counts
    nothing for it on the source.
    """

    def test_periodic_waits_for_the_lock_and_runs_after_it(self):
        self.cloud.servers.resize('vm1', 'large')
        injection = self.cloud.race.at(
            'migration.status=confirmed', when='before').run(
            'update_available_resource', host='source')
        self.cloud.servers.confirm('vm1')
        self.assertEqual(1, len(injection.fired))
        self.assertTrue(injection.fired[0].deferred)
        self.assertEqual([('update_available_resource', 'host1')],
                         injection.fired[0].deferred_runs)
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host2': LARGE}}, snap.allocations)
        source = snap.trackers['host1']
        self.assertEqual((0, RESERVED_MB, 0),
                         (source.vcpus_used, source.memory_mb_used,
                          source.local_gb_used))

    def test_periodic_runs_when_the_claim_releases_the_lock(self):
        # The destination saves migration.status=pre-migrating in its
        # resize claim, under the tracker's lock. The source's periodic
        # injected there runs when the claim releases the lock, before
        # prep_resize goes on to cast resize_instance to the source: every
        # run, whatever eventlet's hub would have run first.
        injection = self.cloud.race.at(
            'migration.status=pre-migrating', when='before',
            host='host2').run('update_available_resource', host='source')
        self.cloud.servers.resize('vm1', 'large')
        passage = injection.fired[0]
        self.assertTrue(passage.deferred)
        self.assertEqual([('update_available_resource', 'host1')],
                         passage.deferred_runs)
        recording = self.cloud.race.recording
        passed = [(p.when, p.point, p.host) for p in recording]
        before_run = passed[:passage.deferred_at]
        self.assertIn(('after', 'migration.status=pre-migrating', 'host2'),
                      before_run)
        self.assertNotIn(('before', 'resize_instance', 'host1'), before_run)
        self.assertIn(('before', 'resize_instance', 'host1'),
                      passed[passage.deferred_at:])


class TestInjectionAtATrackerMethod(RaceTestCase):
    """``tracker.<method>``: a tracker method that takes the lock itself.

    revert_resize on the destination calls the tracker's
    drop_move_claim_at_dest, which marks the migration reverted and drops
    the destination's claim under the tracker's lock, then casts
    finish_revert_resize to the source (compute/manager.py). The point
    is passed outside that lock, so a periodic injected before it runs
    at once, while the migration is still reverting: the source counts
    the migration's old flavor, the destination the instance's new one.
    """

    def test_revert_passes_it_on_the_destination_outside_the_lock(self):
        self.cloud.servers.resize('vm1', 'large')
        self.cloud.race.recording.clear()
        injection = self.cloud.race.at(
            'tracker.drop_move_claim_at_dest', when='before').run(
            'update_available_resource', host='source')
        self.cloud.servers.revert('vm1')
        wanted = [('revert_resize', 'host2'),
                  ('tracker.drop_move_claim_at_dest', 'host2'),
                  ('migration.status=reverted', 'host2'),
                  ('finish_revert_resize', 'host1')]
        self.assertEqual(
            wanted, subsequence(wanted, self.cloud.race.recording))
        passage, = injection.fired
        self.assertEqual(('host2', 'vm1'), (passage.host, passage.server))
        # Run there and then, not deferred to the lock's release.
        self.assertFalse(passage.deferred)
        snap = self.cloud.snapshot()
        self.assertEqual({'vm1': {'host1': SMALL}}, snap.allocations)
        source, dest = snap.trackers['host1'], snap.trackers['host2']
        self.assertEqual((1, 512 + RESERVED_MB, 1),
                         (source.vcpus_used, source.memory_mb_used,
                          source.local_gb_used))
        self.assertEqual((0, RESERVED_MB, 0),
                         (dest.vcpus_used, dest.memory_mb_used,
                          dest.local_gb_used))

    def test_a_periodic_overlaps_the_end_of_an_evacuation(self):
        # The evacuation's call to finish_evacuation carries on in a
        # thread of its own once the destination's periodic has read its
        # instances; Nova 34 takes the tracker's lock there
        # (ResourceTracker.finish_evacuation), which the periodic holds,
        # so the call ends once the periodic has. The periodic read no
        # instance of host2 (vm1's host was still host1) and, the rebuild
        # done, does not count its migration as a move
        # (_instance_in_resize_state): host2 counts vm1 from its next
        # periodic on.
        self.cloud.stop_compute('host1')
        self.cloud.services.force_down('host1')
        injection = self.cloud.race.at(
            'tracker.finish_evacuation', when='before').overlap(
            'update_available_resource', 'dest', 'instances_read')
        server = self.cloud.servers.evacuate('vm1', host='host2')
        self.cloud.race.check()
        self.assertEqual(('SHUTOFF', 'host2'), (
            server['status'], server['OS-EXT-SRV-ATTR:host']))
        passage, = injection.fired
        self.assertEqual(('host2', 'vm1'), (passage.host, passage.server))
        held, = injection.carried
        task, = held.tasks
        self.assertTrue(task.done)
        self.assertIsNone(held.error)
        wanted = [('tracker.finish_evacuation', 'host2'),
                  ('instance.host', 'host2'),
                  ('migration.status=done', 'host2')]
        self.assertEqual(
            wanted, subsequence(wanted, self.cloud.race.recording))
        self.assertEqual(0, self.cloud.snapshot().trackers['host2']
                         .vcpus_used)
        self.cloud.run_periodics()
        self.assertEqual(1, self.cloud.snapshot().trackers['host2']
                         .vcpus_used)

    def test_a_periodic_that_never_reads_its_instances_fails(self):
        # _poll_unconfirmed_resizes reads no instances of the tracker's:
        # the injection fails and the call runs as it would have.
        self.cloud.servers.resize('vm1', 'large')
        injection = self.cloud.race.at(
            'tracker.drop_move_claim_at_dest', when='before').overlap(
            '_poll_unconfirmed_resizes', 'dest', 'instances_read')
        # The operation reports the failed injection once it settled.
        exc = self.assertRaises(errors.InjectionFailed,
                                self.cloud.servers.revert, 'vm1')
        self.assertEqual(1, len(injection.fired))
        self.assertIn('never reached instances_read', str(exc))
        self.assertEqual({'vm1': {'host1': SMALL}},
                         self.cloud.snapshot().allocations)
