"""LP#1707071 at every race point: compute nodes must not fight over
allocations during a move.

From the bug's story (harness/bugs/lp1707071.yaml has it in full): during
a move, update_available_resource on the source and on the destination
each rewrote the instance's allocations from its own view, so the
instance ended up against two compute nodes, or against the wrong one,
depending on which periodic ran last. What must hold instead:

- at every race point of resize, cold migration, confirm, revert and live
  migration, a periodic on the source or the destination changes no
  allocation in Placement (no trampling);
- no consumer is ever allocated against two compute nodes: during a move
  the instance holds the destination and the migration record holds the
  source, each against one node;
- confirm drops exactly the source side (the migration's), revert exactly
  the destination side (the instance's goes back to the source).

The bug's scenarios (selected windows, checked step by step) run as its
generated test class (tests/regressions/test_regressions.py); these
tests, in Python, inject both hosts' periodics at every point an
operation passes and compare Placement before and after each one.
"""

from harness import bugs
from harness.cloud import fixture as cloud_mod
from harness.cloud import race as race_mod
from harness import testing

PERIODIC = 'update_available_resource'
HOSTS = ('src', 'dst')
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 1}
# Every point a move passes (see harness.race), by operation. A point the
# code passes inside the resource tracker's lock is observed too, but a
# periodic cannot start there (it would wait for the lock), so it runs none.
POINTS = {
    'resize': ('conductor.migrate_server', 'conductor.MigrationTask',
               'scheduler.select_destinations', 'prep_resize',
               'migration.status=pre-migrating', 'resize_instance',
               'migration.status=migrating',
               'migration.status=post-migrating', 'instance.host',
               'finish_resize', 'migration.status=finished',
               'scheduler.update_instance_info'),
    'confirm': ('migration.status=confirming', 'confirm_resize',
                'migration.status=confirmed',
                'scheduler.delete_instance_info'),
    'revert': ('migration.status=reverting', 'revert_resize',
               'migration.status=reverted', 'finish_revert_resize',
               'instance.host'),
    'live_migrate': ('conductor.live_migrate_instance',
                     'conductor.LiveMigrationTask',
                     'scheduler.select_destinations',
                     'check_can_live_migrate_destination',
                     'check_can_live_migrate_source', 'live_migration',
                     'migration.status=queued', '_do_live_migration',
                     'migration.status=preparing', 'pre_live_migration',
                     'migration.status=running', '_post_live_migration',
                     'post_live_migration_at_destination', 'instance.host',
                     'scheduler.update_instance_info',
                     'migration.status=completed'),
}
POINTS['migrate'] = POINTS['resize']


class _PeriodicsEverywhere(object):
    """At every point of an operation, both hosts' periodics, watched."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.problems = []
        self.ran = []
        snap = cloud.snapshot()
        self.providers = {snap.provider(host).uuid: host for host in HOSTS}

    def allocations(self):
        """Consumer -> compute node -> resources, straight from Placement.

        Only the allocations by provider: the periodic runs inside Nova's
        own work, and this is all the check needs.
        """
        names = self.cloud.servers.names()
        held = {}
        for uuid, host in self.providers.items():
            by_consumer = self.cloud.reader.placement_get(
                '/resource_providers/%s/allocations' % uuid)['allocations']
            for consumer, alloc in by_consumer.items():
                held.setdefault(names.get(consumer, consumer), {})[host] = (
                    alloc['resources'])
        return held

    def arm(self, operation):
        self.cloud.race.clear()
        for point in POINTS[operation]:
            for when in race_mod.WHEN:
                self.cloud.race.at(point, when=when, times=None).call(
                    self._periodics, 'periodics at %s %s' % (when, point))

    def _periodics(self, passage):
        for host in HOSTS:
            before = self.allocations()
            self.cloud.race.run_task(PERIODIC, host, passage)
            if passage.deferred:
                # Inside the resource tracker's lock the periodic waits for
                # it and runs when the code releases it: not here.
                continue
            after = self.allocations()
            self.ran.append('%s: %s' % (passage, host))
            where = 'periodic on %s at %s' % (host, passage)
            for consumer in sorted(set(before) | set(after)):
                was = before.get(consumer, {})
                now = after.get(consumer, {})
                if was != now:
                    self.problems.append(
                        '%s changed the allocations of %s: %s -> %s'
                        % (where, consumer, was, now))
                if len(now) > 1:
                    self.problems.append(
                        'after %s, %s is allocated against two compute '
                        'nodes: %s' % (where, consumer, now))


class TestBug1707071RacePoints(testing.ScenarioTestCase):

    def _cloud(self):
        cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        for host in HOSTS:
            cloud.start_compute(host)
        cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        cloud.create_flavor('large', vcpus=2, ram=1024, disk=1)
        cloud.servers.boot('vm1', 'small', host='src')
        return cloud, _PeriodicsEverywhere(cloud)

    def _do(self, cloud, watch, operation, *args):
        watch.arm(operation)
        getattr(cloud.servers, operation)('vm1', *args)
        cloud.race.clear()
        self.assertEqual([], watch.problems, '\n'.join(watch.problems))
        return cloud.snapshot()

    def assertHeld(self, expected, snap):
        self.assertEqual(
            expected, {consumer: snap.allocations_of(consumer)
                       for consumer in snap.allocations})

    @bugs.related_bug('1707071')
    def test_bug_1707071_every_race_point_resize_then_confirm(self):
        cloud, watch = self._cloud()
        snap = self._do(cloud, watch, 'resize', 'large')
        self.assertHeld({'vm1': {'dst': LARGE},
                         'migration(vm1)': {'src': SMALL}}, snap)
        snap = self._do(cloud, watch, 'confirm')
        self.assertHeld({'vm1': {'dst': LARGE}}, snap)
        self.assertNotEqual([], watch.ran)

    @bugs.related_bug('1707071')
    def test_bug_1707071_every_race_point_migrate_then_revert(self):
        cloud, watch = self._cloud()
        snap = self._do(cloud, watch, 'migrate', 'dst')
        self.assertHeld({'vm1': {'dst': SMALL},
                         'migration(vm1)': {'src': SMALL}}, snap)
        snap = self._do(cloud, watch, 'revert')
        self.assertHeld({'vm1': {'src': SMALL}}, snap)

    @bugs.related_bug('1707071')
    def test_bug_1707071_every_race_point_live_migrate(self):
        cloud, watch = self._cloud()
        snap = self._do(cloud, watch, 'live_migrate', 'dst')
        self.assertHeld({'vm1': {'dst': SMALL}}, snap)
