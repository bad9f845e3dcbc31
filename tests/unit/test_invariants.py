"""The invariants against hand-built snapshots.

Every value here is worked out by hand from the flavors below and Nova's
documented behaviour; nothing is recorded from a cloud. Hosts are two
fake-driver-sized compute nodes (10 vCPUs, 8192 MB with 512 MB reserved,
1028 GB) and, for pinning, one profiled host ``pin`` with one NUMA cell of
CPUs 0-7 whose dedicated set is 2-7.
"""

import contextlib

from harness.core import invariants
from harness.core import snapshot
from harness import testing

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2}
PIN2 = {'PCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1}
RESERVED_MB = 512


def inventory(vcpu=10, pcpu=0, memory=8192, disk=1028, ratio=1.0):
    inv = {'VCPU': {'total': vcpu, 'reserved': 0, 'allocation_ratio': ratio},
           'MEMORY_MB': {'total': memory, 'reserved': RESERVED_MB,
                         'allocation_ratio': 1.0},
           'DISK_GB': {'total': disk, 'reserved': 0,
                       'allocation_ratio': 1.0}}
    if pcpu:
        inv['PCPU'] = {'total': pcpu, 'reserved': 0, 'allocation_ratio': 1.0}
    return inv


def add(*amounts):
    total = {}
    for amount in amounts:
        for rc, n in amount.items():
            total[rc] = total.get(rc, 0) + n
    return total


def build(allocations, servers=(), migrations=(), hosts=('src', 'dst'),
          usages=None, trackers=None, inventories=None, generations=None,
          children=None):
    """A snapshot through ``Snapshot.from_raw``.

    :param allocations: consumer -> provider -> resources.
    :param servers: (name, status, host) tuples.
    :param migrations: (server, status, source, dest, type) tuples.
    :param usages: provider -> usage; by default the allocations' sum.
    :param trackers: host -> compute node record overrides; by default each
        tracker counts what Placement holds plus reserved memory.
    :param children: child provider -> parent provider.
    """
    children = children or {}
    providers = list(hosts) + sorted(children)
    uuids = {name: 'rp-%s' % name for name in providers}
    server_uuids = {name: 'uuid-%s' % name for name, _, _ in servers}
    names = {uuid: name for name, uuid in server_uuids.items()}
    consumer_uuids = dict(server_uuids)
    for server, status, source, dest, kind in migrations:
        consumer_uuids['migration(%s)' % server] = 'mig-%s' % server
    raw = {'resource_providers': [], 'inventories': {}, 'usages': {},
           'allocations': {}}
    sums = {}
    for consumer, by_rp in allocations.items():
        for rp, resources in by_rp.items():
            sums[rp] = add(sums.get(rp, {}), resources)
            raw['allocations'].setdefault(uuids[rp], {})[
                consumer_uuids.get(consumer, consumer)] = {
                    'resources': dict(resources)}
    for name in providers:
        parent = children.get(name)
        raw['resource_providers'].append({
            'uuid': uuids[name], 'name': name,
            'generation': (generations or {}).get(name, 1),
            'parent_provider_uuid': uuids[parent] if parent else None,
            'root_provider_uuid': uuids[parent] if parent else uuids[name]})
        raw['inventories'][uuids[name]] = (inventories or {}).get(
            name, inventory() if not parent else {
                'CUSTOM_X': {'total': 4, 'reserved': 0,
                             'allocation_ratio': 1.0}})
        raw['usages'][uuids[name]] = (usages if usages is not None
                                      else sums).get(name, {})
    raw['servers'] = [
        {'id': server_uuids[name], 'status': status,
         'OS-EXT-SRV-ATTR:host': host, 'OS-EXT-STS:task_state': None}
        for name, status, host in servers]
    raw['migrations'] = [
        {'id': index, 'uuid': 'mig-%s' % server,
         'instance_uuid': server_uuids.get(server, server),
         'status': status, 'source_compute': source, 'dest_compute': dest,
         'migration_type': kind}
        for index, (server, status, source, dest, kind)
        in enumerate(migrations, 1)]
    raw['compute_nodes'] = []
    for host in hosts:
        held = sums.get(host, {})
        node = {'host': host, 'node': host, 'vcpus': 10,
                'vcpus_used': held.get('VCPU', 0) + held.get('PCPU', 0),
                'memory_mb': 8192,
                'memory_mb_used': held.get('MEMORY_MB', 0) + RESERVED_MB,
                'local_gb': 1028, 'local_gb_used': held.get('DISK_GB', 0),
                'cells': []}
        node.update((trackers or {}).get(host, {}))
        raw['compute_nodes'].append(node)
    return snapshot.Snapshot.from_raw(raw, names)


def cell(pinned=(), cpus=range(8), pcpus=range(2, 8), cell_id=0,
         cpu_usage=0, memory_usage=0, pages_used=0):
    return {'id': cell_id, 'cpus': list(cpus), 'pcpus': list(pcpus),
            'cpu_usage': cpu_usage, 'memory_mb': 16384,
            'memory_usage': memory_usage, 'pinned_cpus': list(pinned),
            'pages': {'4': {'total': 4194304, 'used': 0, 'reserved': 0},
                      '2048': {'total': 1024, 'used': pages_used,
                               'reserved': 0}}}


def verify_resize(**kwargs):
    """vm1 resized small -> large from src to dst, waiting to confirm."""
    return build({'vm1': {'dst': LARGE}, 'migration(vm1)': {'src': SMALL}},
                 servers=[('vm1', 'VERIFY_RESIZE', 'dst')],
                 migrations=[('vm1', 'finished', 'src', 'dst', 'resize')],
                 **kwargs)


class TestUsagesAddUp(testing.TestCase):

    def test_holds_during_verify_resize(self):
        self.assertEqual([], usages_add_up(verify_resize()))

    def test_holds_with_nothing(self):
        self.assertEqual([], usages_add_up(build({})))

    def test_breaks_when_usage_exceeds_allocations(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     usages={'src': {'VCPU': 2, 'MEMORY_MB': 512,
                                     'DISK_GB': 1}})
        self.assertEqual(
            ['usages_add_up: provider src, VCPU: Placement usage 2, '
             'allocations add up to 1 (vm1=1)'],
            usages_add_up(snap))

    def test_breaks_when_usage_is_missing(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')], usages={})
        self.assertEqual(3, len(usages_add_up(snap)))
        self.assertIn('provider src, DISK_GB: Placement usage 0, '
                      'allocations add up to 1',
                      usages_add_up(snap)[0])


class TestAllocationsWhereServerIs(testing.TestCase):

    def test_holds_for_a_booted_server(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual([], allocations_where_server_is(snap))

    def test_holds_for_the_source_of_an_evacuation_until_it_cleans_up(self):
        # The evacuated server holds its source too until the source's
        # compute starts (_destroy_evacuated_instances completes it).
        snap = build({'vm1': {'src': SMALL, 'dst': SMALL}},
                     servers=[('vm1', 'SHUTOFF', 'dst')],
                     migrations=[('vm1', 'done', 'src', 'dst',
                                  'evacuation')])
        self.assertEqual([], allocations_where_server_is(snap))
        completed = build({'vm1': {'src': SMALL, 'dst': SMALL}},
                          servers=[('vm1', 'SHUTOFF', 'dst')],
                          migrations=[('vm1', 'completed', 'src', 'dst',
                                       'evacuation')])
        self.assertEqual(1, len(allocations_where_server_is(completed)))

    def test_holds_during_verify_resize(self):
        self.assertEqual(
            [], allocations_where_server_is(verify_resize()))

    def test_holds_for_a_same_host_resize(self):
        snap = build({'vm1': {'src': LARGE}, 'migration(vm1)': {'src': SMALL}},
                     servers=[('vm1', 'VERIFY_RESIZE', 'src')],
                     migrations=[('vm1', 'finished', 'src', 'src',
                                  'resize')])
        self.assertEqual([], allocations_where_server_is(snap))

    def test_holds_for_a_live_migration_in_flight(self):
        # The instance holds the destination while its host is still the
        # source; the migration holds the source.
        snap = build({'vm1': {'dst': SMALL}, 'migration(vm1)': {'src': SMALL}},
                     servers=[('vm1', 'MIGRATING', 'src')],
                     migrations=[('vm1', 'running', 'src', 'dst',
                                  'live-migration')])
        self.assertEqual([], allocations_where_server_is(snap))

    def test_holds_on_a_child_provider_of_the_host(self):
        snap = build({'vm1': {'src': SMALL, 'src_child': {'CUSTOM_X': 1}}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     children={'src_child': 'src'})
        self.assertEqual([], allocations_where_server_is(snap))

    def test_breaks_for_an_instance_on_another_host(self):
        snap = build({'vm1': {'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual(
            ['allocations_where_server_is: consumer vm1 holds DISK_GB=1 '
             'MEMORY_MB=512 VCPU=1 on dst, which is not its host src'],
            allocations_where_server_is(snap))

    def test_breaks_for_a_migration_on_its_destination(self):
        snap = build({'vm1': {'dst': LARGE}, 'migration(vm1)': {'dst': SMALL}},
                     servers=[('vm1', 'VERIFY_RESIZE', 'dst')],
                     migrations=[('vm1', 'finished', 'src', 'dst',
                                  'resize')])
        self.assertEqual(
            ['allocations_where_server_is: consumer migration(vm1) holds '
             'DISK_GB=1 MEMORY_MB=512 VCPU=1 on dst, which is not its '
             'source src'],
            allocations_where_server_is(snap))

    def test_breaks_for_a_migration_left_after_confirm(self):
        snap = build({'vm1': {'dst': LARGE}, 'migration(vm1)': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'dst')],
                     migrations=[('vm1', 'confirmed', 'src', 'dst',
                                  'resize')])
        problems = allocations_where_server_is(snap)
        self.assertEqual(1, len(problems))
        self.assertIn('consumer migration(vm1) (status confirmed, server '
                      'ACTIVE on dst) holds DISK_GB=1 MEMORY_MB=512 VCPU=1 '
                      'on src although no move of vm1 is in flight',
                      problems[0])

    def test_breaks_for_a_consumer_that_is_no_server(self):
        snap = build({'gone-uuid': {'src': SMALL}})
        self.assertEqual(
            ['allocations_where_server_is: consumer gone-uuid holds '
             'DISK_GB=1 MEMORY_MB=512 VCPU=1 on src but is no server or '
             'migration (a leak of a deleted server?)'],
            allocations_where_server_is(snap))

    def test_breaks_for_a_server_without_host(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ERROR', None)])
        self.assertEqual(1, len(
            allocations_where_server_is(snap)))


class TestOneComputeNodePerConsumer(testing.TestCase):

    def test_holds_during_verify_resize(self):
        self.assertEqual(
            [], one_compute_node_per_consumer(verify_resize()))

    def test_holds_for_a_host_and_its_child(self):
        snap = build({'vm1': {'src': SMALL, 'src_child': {'CUSTOM_X': 1}}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     children={'src_child': 'src'})
        self.assertEqual([], one_compute_node_per_consumer(snap))

    def test_breaks_for_a_doubled_up_instance(self):
        # What LP#1707071 looked like: one consumer on both nodes.
        snap = build({'vm1': {'src': SMALL, 'dst': LARGE}},
                     servers=[('vm1', 'VERIFY_RESIZE', 'dst')],
                     migrations=[('vm1', 'finished', 'src', 'dst',
                                  'resize')])
        self.assertEqual(
            ['one_compute_node_per_consumer: consumer vm1 holds '
             'allocations against 2 compute nodes: dst: DISK_GB=2 '
             'MEMORY_MB=1024 VCPU=2; src: DISK_GB=1 MEMORY_MB=512 VCPU=1'],
            one_compute_node_per_consumer(snap))

    def test_an_evacuation_in_flight_is_the_written_down_exception(self):
        snap = build({'vm1': {'src': SMALL, 'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'dst')],
                     migrations=[('vm1', 'done', 'src', 'dst',
                                  'evacuation')])
        self.assertEqual([], one_compute_node_per_consumer(snap))

    def test_an_evacuation_onto_a_node_of_a_multi_node_host_too(self):
        # The migration names the host, the allocation its node.
        snap = build({'vm1': {'src': SMALL, 'n1': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'bm')],
                     migrations=[('vm1', 'done', 'src', 'bm',
                                  'evacuation')],
                     hosts=('src', 'n1'), trackers={'n1': {'host': 'bm'}})
        self.assertEqual([], one_compute_node_per_consumer(snap))

    def test_a_completed_evacuation_is_no_exception(self):
        snap = build({'vm1': {'src': SMALL, 'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'dst')],
                     migrations=[('vm1', 'completed', 'src', 'dst',
                                  'evacuation')])
        self.assertEqual(
            1, len(one_compute_node_per_consumer(snap)))


class TestTrackerAgrees(testing.TestCase):

    def test_holds_during_verify_resize(self):
        # The source counts the outgoing resize (small), the destination
        # the instance (large): what Placement holds on each.
        self.assertEqual([], tracker_agrees(verify_resize()))

    def test_breaks_when_a_tracker_counts_less(self):
        snap = verify_resize(trackers={'src': {
            'vcpus_used': 0, 'memory_mb_used': RESERVED_MB,
            'local_gb_used': 0}})
        self.assertEqual(
            ['tracker_agrees: host src, vcpus_used (VCPU+PCPU): tracker '
             'counts 0, Placement 1 (Placement consumers: '
             'migration(vm1)=1)',
             'tracker_agrees: host src, memory_mb_used (MEMORY_MB): tracker '
             'counts 0, Placement 512 (Placement consumers: '
             'migration(vm1)=512)',
             'tracker_agrees: host src, local_gb_used (DISK_GB): tracker '
             'counts 0, Placement 1 (Placement consumers: '
             'migration(vm1)=1)'],
            tracker_agrees(snap))

    def test_reserved_memory_is_not_counted_as_a_guest(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     trackers={'src': {'memory_mb_used': 512}})
        self.assertEqual(
            ['tracker_agrees: host src, memory_mb_used (MEMORY_MB): '
             'tracker counts 0, Placement 512 (Placement consumers: '
             'vm1=512)'], tracker_agrees(snap))

    def test_swap_is_tolerated_when_disk_is_not_exact(self):
        # Placement counts 1 GB root + 1 GB swap, the tracker the root.
        snap = build({'vm1': {'src': {'VCPU': 1, 'MEMORY_MB': 512,
                                      'DISK_GB': 2}}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     trackers={'src': {'local_gb_used': 1}})
        self.assertEqual(1, len(tracker_agrees(snap)))
        self.assertEqual([], tracker_agrees(snap, disk_exact=False))

    def pinned(self, pinned, pcpu=2, pcpus=range(2, 8), dedicated=None):
        snap = build({'vm1': {'pin': {'PCPU': pcpu, 'MEMORY_MB': 512,
                                      'DISK_GB': 1}}},
                     servers=[('vm1', 'ACTIVE', 'pin')], hosts=('pin',),
                     inventories={'pin': inventory(vcpu=2, pcpu=6)},
                     trackers={'pin': {'cells': [
                         cell(pinned=pinned, pcpus=pcpus)]}})
        return tracker_agrees(
            snap, dedicated={'pin': frozenset(dedicated or range(2, 8))})

    def test_pinned_cpus_match_pcpu_allocations(self):
        self.assertEqual([], self.pinned([2, 3]))

    def test_breaks_when_pinned_cpus_are_dropped(self):
        # LP#1944759's shape: PCPU held in Placement, nothing pinned.
        self.assertEqual(
            ['tracker_agrees: host pin, pinned CPUs (PCPU): tracker counts '
             '0, Placement 2 (Placement consumers: vm1=2)'],
            self.pinned([]))

    def test_breaks_when_a_cpu_outside_the_dedicated_set_is_pinned(self):
        self.assertEqual(
            ["tracker_agrees: host pin cell 0: pinned CPUs [1] are not "
             "among the cell's dedicated CPUs [2-7]",
             'tracker_agrees: host pin cell 0: pinned CPUs [1] lie outside '
             'cpu_dedicated_set [2-7]'],
            self.pinned([1, 2]))

    def test_breaks_against_the_profile_dedicated_set(self):
        self.assertEqual(
            ['tracker_agrees: host pin cell 0: pinned CPUs [7] lie outside '
             'cpu_dedicated_set [2-6]'],
            self.pinned([6, 7], dedicated=range(2, 7)))

    def test_breaks_when_a_cpu_is_pinned_in_two_cells(self):
        snap = build({'vm1': {'pin': {'PCPU': 2, 'MEMORY_MB': 512,
                                      'DISK_GB': 1}}},
                     servers=[('vm1', 'ACTIVE', 'pin')], hosts=('pin',),
                     inventories={'pin': inventory(vcpu=2, pcpu=6)},
                     trackers={'pin': {'cells': [
                         cell(pinned=[2]), cell(pinned=[2], cell_id=1)]}})
        self.assertIn('tracker_agrees: host pin: CPU 2 is pinned in cells '
                      '0 and 1', tracker_agrees(snap))

    def test_a_cpu_pinned_twice_shows_as_too_few_pinned(self):
        # Two guests of 2 PCPUs each share CPU 3: the cell's set has 3.
        snap = build({'vm1': {'pin': PIN2}, 'vm2': {'pin': PIN2}},
                     servers=[('vm1', 'ACTIVE', 'pin'),
                              ('vm2', 'ACTIVE', 'pin')], hosts=('pin',),
                     inventories={'pin': inventory(vcpu=2, pcpu=6)},
                     trackers={'pin': {'cells': [cell(pinned=[2, 3, 4])]}})
        self.assertEqual(
            ['tracker_agrees: host pin, pinned CPUs (PCPU): tracker counts '
             '3, Placement 4 (Placement consumers: vm1=2, vm2=2)'],
            tracker_agrees(snap))

    def test_a_window_tolerates_up_to_its_bound(self):
        # dst has not counted vm1, live-migrated there, yet.
        snap = build({'vm1': {'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'dst')],
                     trackers={'dst': {'vcpus_used': 0,
                                       'memory_mb_used': RESERVED_MB,
                                       'local_gb_used': 0}})
        window = {'dst': {'below': {'vcpus': 1, 'memory_mb': 512,
                                    'local_gb': 1}, 'above': {},
                          'why': 'vm1 live-migrated'}}
        self.assertEqual([], tracker_agrees(snap, windows=window))
        self.assertEqual(3, len(tracker_agrees(snap)))
        # The bound is no blank cheque: one vCPU too few is still caught.
        window['dst']['below']['vcpus'] = 0
        self.assertEqual(
            ['tracker_agrees: host dst, vcpus_used (VCPU+PCPU): tracker '
             'counts 0, Placement 1 (Placement consumers: vm1=1)'],
            tracker_agrees(snap, windows=window))


class TestTrackerWindows(testing.TestCase):

    def test_a_completed_live_migration_opens_below_on_the_dest(self):
        before = build({'vm1': {'src': SMALL}},
                       servers=[('vm1', 'ACTIVE', 'src')])
        after = build({'vm1': {'dst': SMALL}},
                      servers=[('vm1', 'ACTIVE', 'dst')],
                      migrations=[('vm1', 'completed', 'src', 'dst',
                                   'live-migration')])
        windows = invariants.tracker_windows({}, before, after)
        self.assertEqual({'vcpus': 1, 'memory_mb': 512, 'local_gb': 1},
                         windows['dst']['below'])
        self.assertEqual({}, windows['dst']['above'])
        self.assertEqual(['dst'], sorted(windows))

    def test_a_periodic_on_the_host_closes_it(self):
        before = build({'vm1': {'src': SMALL}},
                       servers=[('vm1', 'ACTIVE', 'src')])
        after = build({'vm1': {'dst': SMALL}},
                      servers=[('vm1', 'ACTIVE', 'dst')],
                      migrations=[('vm1', 'completed', 'src', 'dst',
                                   'live-migration')])
        self.assertEqual({}, invariants.tracker_windows(
            {}, before, after, reconciled={'dst'}))

    def test_deleting_a_moved_guest_opens_above_on_its_host(self):
        before = build({'vm1': {'dst': PIN2}},
                       servers=[('vm1', 'ACTIVE', 'dst')],
                       migrations=[('vm1', 'confirmed', 'src', 'dst',
                                    'resize')])
        after = build({}, migrations=[('vm1', 'confirmed', 'src', 'dst',
                                       'resize')])
        windows = invariants.tracker_windows({}, before, after)
        self.assertEqual({'vcpus': 2, 'memory_mb': 512, 'local_gb': 1,
                          'pinned': 2}, windows['dst']['above'])

    def test_deleting_a_guest_never_moved_opens_nothing(self):
        before = build({'vm1': {'src': SMALL}},
                       servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual({}, invariants.tracker_windows(
            {}, before, build({})))

    def test_deleting_a_guest_on_a_down_compute_opens_above(self):
        before = build({'vm1': {'src': SMALL}},
                       servers=[('vm1', 'ACTIVE', 'src')])
        windows = invariants.tracker_windows({}, before, build({}),
                                             down={'src'})
        self.assertEqual({'vcpus': 1, 'memory_mb': 512, 'local_gb': 1},
                         windows['src']['above'])

    def test_an_earlier_window_stays_open_until_its_periodic(self):
        open_ = {'dst': {'below': {'vcpus': 1}, 'above': {}, 'why': 'x'}}
        snap = build({})
        self.assertEqual(open_, invariants.tracker_windows(open_, snap, snap))
        self.assertEqual({}, invariants.tracker_windows(
            open_, snap, snap, reconciled=['dst']))


class TestPeriodicChanges(testing.TestCase):

    def test_nothing_moved(self):
        self.assertEqual([], periodic_changes(
            verify_resize(), verify_resize(), ['src', 'dst']))

    def test_tracker_changes_are_not_compared(self):
        self.assertEqual([], periodic_changes(
            verify_resize(), verify_resize(trackers={'src': {
                'vcpus_used': 0}}), ['src']))

    def test_a_removed_allocation_moves_usage_and_allocations(self):
        before = verify_resize()
        after = build({'vm1': {'dst': LARGE}},
                      servers=[('vm1', 'VERIFY_RESIZE', 'dst')],
                      migrations=[('vm1', 'finished', 'src', 'dst',
                                   'resize')])
        problems = periodic_changes(before, after, ['src', 'dst'])
        self.assertEqual(
            ['periodics_idempotent: update_available_resource on src then '
             'dst moved consumer migration(vm1) on src: DISK_GB=1 '
             'MEMORY_MB=512 VCPU=1 -> nothing',
             'periodics_idempotent: update_available_resource on src then '
             'dst moved the usage of src, DISK_GB: 1 -> 0',
             'periodics_idempotent: update_available_resource on src then '
             'dst moved the usage of src, MEMORY_MB: 512 -> 0',
             'periodics_idempotent: update_available_resource on src then '
             'dst moved the usage of src, VCPU: 1 -> 0'], problems)

    def test_a_generation_bump_alone_is_caught(self):
        problems = periodic_changes(
            verify_resize(), verify_resize(generations={'dst': 2}), ['dst'])
        self.assertEqual(
            ['periodics_idempotent: update_available_resource on dst moved '
             'the generation of provider dst: 1 -> 2'], problems)


class FakeRace(object):

    def __init__(self):
        self.injections = ['pending']
        self.record = True


class FakeServices(object):
    """No compute is forced down."""

    def forced_down_hosts(self):
        return set()


class FakeCloud(object):
    """Runs "periodics" by swapping in the next snapshot.

    Like ``Cloud.trial``, its ``trial`` puts injections out of the way
    and back, and counts how often the cloud was put back; a periodic run
    outside a trial fails the test (a check must not change the cloud).
    """

    def __init__(self, after, computes=('dst', 'src')):
        self.after = after
        self.computes = dict.fromkeys(computes)
        self.race = FakeRace()
        self.services = FakeServices()
        self.ran = []
        self.restored = 0
        self._in_trial = False

    @contextlib.contextmanager
    def trial(self):
        saved = self.race.injections, self.race.record
        self.race.injections, self.race.record = [], False
        self._in_trial = True
        try:
            yield self
        finally:
            self._in_trial = False
            self.race.injections, self.race.record = saved
            self.restored += 1

    def run_periodic(self, task, host):
        assert self._in_trial, 'a periodic ran on the cloud under test'
        # Injections for later steps are out of the way meanwhile.
        assert self.race.injections == [] and not self.race.record
        self.ran.append((task, host))

    def snapshot(self):
        return self.after


class TestPeriodicsIdempotent(testing.TestCase):

    def test_runs_in_the_order_given_and_restores_injections(self):
        cloud = FakeCloud(verify_resize())
        problems, after = invariants.periodics_idempotent(
            cloud, verify_resize(), ['src', 'dst'])
        self.assertEqual([], problems)
        self.assertIs(cloud.after, after)
        self.assertEqual([('update_available_resource', 'src'),
                          ('update_available_resource', 'dst')], cloud.ran)
        self.assertEqual((['pending'], True),
                         (cloud.race.injections, cloud.race.record))
        # Both periodics ran in one trial, and the cloud was put back.
        self.assertEqual(1, cloud.restored)

    def test_reports_what_moved(self):
        cloud = FakeCloud(build({}))
        problems, _ = invariants.periodics_idempotent(
            cloud, build({'gone-uuid': {'src': SMALL}}), ['dst', 'src'])
        self.assertIn('periodics_idempotent: update_available_resource on '
                      'dst then src moved consumer gone-uuid on src: '
                      'DISK_GB=1 MEMORY_MB=512 VCPU=1 -> nothing',
                      [str(p) for p in problems])


class TestNothingLeaks(testing.TestCase):

    def test_holds_when_everything_is_gone(self):
        snap = build({})
        self.assertEqual([], nothing_leaks(snap, reconciled=snap))

    def test_servers_left_are_no_leak(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual([], nothing_leaks(snap))

    def test_breaks_for_an_allocation_left(self):
        snap = build({'migration(vm1)': {'src': SMALL}},
                     migrations=[('vm1', 'confirmed', 'src', 'dst',
                                  'resize')])
        self.assertEqual(
            ['nothing_leaks: no server is left, but consumer migration(vm1) '
             'holds DISK_GB=1 MEMORY_MB=512 VCPU=1 on src',
             'nothing_leaks: no server is left, but provider src has usage '
             'DISK_GB=1 MEMORY_MB=512 VCPU=1'],
            nothing_leaks(snap))

    def test_a_stale_tracker_is_no_leak_before_its_periodic(self):
        snap = build({}, trackers={'dst': {'vcpus_used': 2}})
        self.assertEqual([], nothing_leaks(snap))

    def test_breaks_for_a_tracker_counting_after_its_periodic(self):
        snap = build({}, trackers={'dst': {'vcpus_used': 2}})
        expected = ['nothing_leaks: no server is left, but after '
                    'update_available_resource the tracker of dst counts 2 '
                    'vcpus_used (VCPU+PCPU) beyond the reserved amount']
        self.assertEqual(expected,
                         nothing_leaks(build({}), reconciled=snap))
        self.assertEqual(expected, nothing_leaks(
            snap, reconciled_hosts={'dst'}))

    def test_a_stopped_compute_keeps_its_last_record(self):
        # The periodic ran on the running computes only: dst is stopped,
        # its record is what it last saved, not a leak (yet).
        snap = build({}, trackers={'dst': {'vcpus_used': 2}})
        self.assertEqual([], nothing_leaks(
            build({}), reconciled=snap, running={'src'}))
        self.assertEqual(1, len(nothing_leaks(
            build({}), reconciled=snap, running={'src', 'dst'})))

    def test_breaks_for_pinned_cpus_after_the_periodic(self):
        snap = build({}, hosts=('pin',),
                     inventories={'pin': inventory(vcpu=2, pcpu=6)},
                     trackers={'pin': {'cells': [
                         cell(pinned=[2, 3], pages_used=4)]}})
        self.assertEqual(
            ['nothing_leaks: no server is left, but after '
             'update_available_resource the tracker of pin cell 0 still has '
             'pinned CPUs [2-3], cpu_usage 0, memory_usage 0, pages used '
             '{2048: 4}'],
            nothing_leaks(snap, reconciled=snap))


class TestWithinCapacity(testing.TestCase):

    def test_holds_up_to_capacity(self):
        # MEMORY_MB capacity: (8192 - 512) x 1.0 = 7680.
        snap = build({'vm1': {'src': {'MEMORY_MB': 7680}}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual([], within_capacity(snap))

    def test_allocation_ratio_counts(self):
        # VCPU capacity: (10 - 0) x 2.0 = 20.
        snap = build({'vm1': {'src': {'VCPU': 20}}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     inventories={'src': inventory(ratio=2.0)})
        self.assertEqual([], within_capacity(snap))

    def test_breaks_over_capacity(self):
        snap = build({'vm1': {'src': {'MEMORY_MB': 7681}}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual(
            ['within_capacity: provider src, MEMORY_MB: usage 7681 exceeds '
             'capacity 7680 = (total 8192 - reserved 512) x allocation_ratio '
             '1.0 (consumers: vm1=7681)'],
            within_capacity(snap))

    def test_breaks_without_inventory(self):
        snap = build({'vm1': {'src': {'PCPU': 1}}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        self.assertEqual(
            ['within_capacity: provider src uses 1 PCPU but has no '
             'inventory of it'], within_capacity(snap))


def _texts(check):
    """``check`` with its ``Problem`` records read as the lines they print.

    The records' fields are checked in ``TestProblemRecords``; here the
    expected values are the lines a person reads.
    """
    def texts(*args, **kwargs):
        return [str(problem) for problem in check(*args, **kwargs)]
    return texts


usages_add_up = _texts(invariants.usages_add_up)
allocations_where_server_is = _texts(invariants.allocations_where_server_is)
one_compute_node_per_consumer = _texts(
    invariants.one_compute_node_per_consumer)
tracker_agrees = _texts(invariants.tracker_agrees)
periodic_changes = _texts(invariants.periodic_changes)
nothing_leaks = _texts(invariants.nothing_leaks)
within_capacity = _texts(invariants.within_capacity)


class Step(object):

    def __init__(self, index, kind='boot', args=None, error=None):
        self.index = index
        self.kind = kind
        self.args = args or {}
        # The error: text a step expects its operation to fail with.
        self.error = error


class Scenario(object):

    def __init__(self, expected_breaks=None, swap=0):
        self.expected_breaks = expected_breaks or {}
        self.hosts = {}
        self.flavors = {'f': type('Flavor', (), {'swap': swap})()}


class Entry(object):

    def __init__(self, snap):
        self.snapshot = snap


class TestProblemRecords(testing.TestCase):
    """What an invariant finds is a record, its fields worked out by hand."""

    def test_a_tracker_counting_less_is_one_record_per_key(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     trackers={'src': {'vcpus_used': 0}})
        [problem] = invariants.tracker_agrees(snap)
        self.assertEqual(('tracker_agrees', 'host src, vcpus', 1, 0),
                         (problem.check, problem.subject, problem.expected,
                          problem.actual))
        self.assertTrue(problem.accounting)
        # Every subject of one invariant is one kind of failure.
        self.assertEqual('tracker_agrees', problem.kind)

    def test_usage_against_allocations(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     usages={'src': {'VCPU': 2, 'MEMORY_MB': 512,
                                     'DISK_GB': 1}})
        [problem] = invariants.usages_add_up(snap)
        # expected: what the allocations add up to; actual: the usage.
        self.assertEqual(('usages_add_up', 'provider src, VCPU', 1, 2),
                         (problem.check, problem.subject, problem.expected,
                          problem.actual))


class TestChecker(testing.TestCase):

    def check(self, checker, cloud, snaps, scenario, kinds=(), records=False):
        """Feed ``snaps`` as the steps of one run; problems per step.

        As lines of text, or with ``records`` the ``Problem`` records.
        """
        timeline = [Entry(build({}))]
        found = []
        for index, snap in enumerate(snaps, 1):
            timeline.append(Entry(snap))
            kind, args = kinds[index - 1] if kinds else ('boot', {})
            problems = checker(cloud, Step(index, kind, args), snap,
                               timeline, scenario)
            found.append(problems if records else
                         [str(p) for p in problems])
        return found

    def test_a_clean_run_reports_nothing(self):
        snap = build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        cloud = FakeCloud(snap)
        checker = invariants.Checker()
        self.assertEqual([[], []], self.check(checker, cloud, [snap, snap],
                                              Scenario()))
        # Host order alternates between steps.
        self.assertEqual(['dst', 'src', 'src', 'dst'],
                         [host for _, host in cloud.ran])
        self.assertEqual(2, checker.calls)

    def test_problems_start_with_the_invariant_name(self):
        snap = build({'vm1': {'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')],
                     trackers={'src': {'vcpus_used': 1}})
        checker = invariants.Checker(periodic_idempotence=False)
        [problems] = self.check(checker, FakeCloud(snap), [snap], Scenario(),
                                records=True)
        self.assertTrue(problems)
        for problem in problems:
            self.assertIn(problem.check, invariants.INVARIANTS)
            self.assertTrue(str(problem).startswith(problem.check + ': '))
        self.assertIn('allocations_where_server_is',
                      [p.check for p in problems])
        self.assertIn('tracker_agrees', [p.check for p in problems])

    def test_periodic_idempotence_can_be_switched_off(self):
        snap = build({})
        cloud = FakeCloud(snap)
        checker = invariants.Checker(periodic_idempotence=False)
        self.check(checker, cloud, [snap], Scenario())
        self.assertEqual([], cloud.ran)

    def test_enabled_limits_the_invariants(self):
        snap = build({'vm1': {'dst': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')])
        checker = invariants.Checker(enabled={'usages_add_up'})
        cloud = FakeCloud(snap)
        self.assertEqual([[]], self.check(checker, cloud, [snap],
                                          Scenario()))
        self.assertEqual([], cloud.ran)

    def test_unknown_invariants_are_refused(self):
        self.assertRaises(ValueError, invariants.Checker,
                          enabled={'no_such'})

    def test_an_expected_break_is_recorded_not_reported(self):
        bad = build({'vm1': {'src': SMALL}},
                    servers=[('vm1', 'ACTIVE', 'src')],
                    trackers={'src': {'vcpus_used': 0}})
        scenario = Scenario({'tracker_agrees': '1944759'})
        checker = invariants.Checker(periodic_idempotence=False)
        self.assertEqual([[]], self.check(checker, FakeCloud(bad), [bad],
                                          scenario))
        self.assertEqual(
            [(1, 'tracker_agrees: host src, vcpus_used (VCPU+PCPU): tracker '
                 'counts 0, Placement 1 (Placement consumers: vm1=1)')],
            [(step, str(problem))
             for step, problem in checker.broken['tracker_agrees']])
        self.assertEqual([], checker.missing_breaks(scenario))

    def test_an_expected_break_that_never_shows_is_missing(self):
        snap = build({})
        scenario = Scenario({'tracker_agrees': '1944759'})
        checker = invariants.Checker(periodic_idempotence=False)
        self.check(checker, FakeCloud(snap), [snap], scenario)
        self.assertEqual(['tracker_agrees'],
                         checker.missing_breaks(scenario))

    def test_delete_of_a_moved_guest_is_tolerated_until_its_periodic(self):
        moved = build({'vm1': {'dst': SMALL}},
                      servers=[('vm1', 'ACTIVE', 'dst')],
                      migrations=[('vm1', 'confirmed', 'src', 'dst',
                                   'resize')])
        stale = dict(vcpus_used=1, memory_mb_used=1024, local_gb_used=1)
        deleted = build({}, migrations=[('vm1', 'confirmed', 'src', 'dst',
                                         'resize')],
                        trackers={'dst': stale})
        checker = invariants.Checker(periodic_idempotence=False)
        found = self.check(
            checker, FakeCloud(deleted), [moved, deleted, deleted],
            Scenario(), kinds=[('confirm', {}), ('delete', {}),
                               ('run_periodic', {
                                   'task': 'update_available_resource',
                                   'hosts': ['dst']})])
        self.assertEqual([], found[0])
        self.assertEqual([], found[1])
        # Still counted after dst's periodic: now it is wrong, and with no
        # server left it is a leak too.
        self.assertEqual(
            ['tracker_agrees', 'tracker_agrees', 'tracker_agrees',
             'nothing_leaks', 'nothing_leaks', 'nothing_leaks'],
            [p.split(':')[0] for p in found[2]])

    def test_nothing_leaks_reads_the_snapshot_after_the_periodic(self):
        gone = build({})
        leaking = build({}, trackers={'src': {'memory_mb_used': 1024}})
        checker = invariants.Checker()
        [problems] = self.check(checker, FakeCloud(leaking), [gone],
                                Scenario())
        self.assertEqual(
            ['nothing_leaks: no server is left, but after '
             'update_available_resource the tracker of src counts 512 '
             'memory_mb_used (MEMORY_MB) beyond the reserved amount'],
            problems)


class TestReconciledBy(testing.TestCase):

    def test_a_start_nova_refused_reconciles_nothing(self):
        cloud = FakeCloud(None, computes=('src',))
        started = Step(1, 'start_compute', {'host': 'src'})
        refused = Step(1, 'start_compute', {'host': 'src'},
                       error='refused to start')
        self.assertEqual({'src'}, invariants.Checker._hosts_reconciled_by(
            started, cloud))
        self.assertEqual(set(), invariants.Checker._hosts_reconciled_by(
            refused, cloud))
