"""The capacity probe's rules, on each host profile of ``fixtures/hosts``.

Each host is built as Nova 34's libvirt driver reports an empty one
(``LibvirtDriver.update_provider_tree`` and ``_get_host_numa_topology``):
PCPU total ``|cpu_dedicated_set|``, VCPU total ``|cpu_shared_set|``, both
with ``max_unit`` their total and no reserve; VCPU allocation ratio
``[DEFAULT] cpu_allocation_ratio`` or else ``initial_cpu_allocation_ratio``
(4.0); MEMORY_MB total the host's memory, reserved
``reserved_host_memory_mb`` (512 unless the profile sets it), ratio
``initial_ram_allocation_ratio`` (1.0); each NUMA cell's ``pcpus`` its
CPUs in ``cpu_dedicated_set``, ``cpus`` those in ``cpu_shared_set``, its
page pools the profile's (the 4K pool is the cell's memory less its huge
pages) with ``reserved_huge_pages``. The expected requests are worked out
from these numbers in the comments of each test; they are not what the
code printed.
"""

import dataclasses

import fixtures

from harness.core import capacity
from harness.core.checks.invariant import capacity_probe
from harness.core import invariants
from harness.core import profiles
from harness.core import snapshot
from harness import testing

DEDICATED = (('hw:cpu_policy', 'dedicated'),)
ONE_NODE = (('hw:numa_nodes', '1'),)


def pages(size):
    return (('hw:mem_page_size', str(size)),)


def empty_host(name):
    """(tracker, provider) of an empty host of profile ``name``."""
    profile = profiles.load_profile(name)
    dedicated, shared = profile.dedicated_cpus, profile.shared_cpus
    cells = tuple(
        snapshot.Cell(
            id=cell.id, cpus=tuple(sorted(cell.cpus & shared)),
            pcpus=tuple(sorted(cell.cpus & dedicated)), cpu_usage=0,
            memory_mb=cell.memory_mb, memory_usage=0, pinned_cpus=(),
            pages={size: {'total': count, 'used': 0,
                          'reserved': profile.reserved_pages(cell.id, size)}
                   for size, count in cell.pages.items()})
        for cell in profile.cells)
    tracker = snapshot.Tracker(
        host='h1', node='h1', vcpus=len(profile.cpus), vcpus_used=0,
        memory_mb=profile.memory_mb, memory_mb_used=0,
        local_gb=profile.disk_gb, local_gb_used=0, cells=cells)
    cpu_ratio = profile.option('cpu_allocation_ratio') or 4.0
    inventories = {
        'PCPU': {'total': len(dedicated), 'reserved': 0,
                 'allocation_ratio': 1.0, 'max_unit': len(dedicated)},
        'VCPU': {'total': len(shared), 'reserved': 0,
                 'allocation_ratio': cpu_ratio, 'max_unit': len(shared)},
        'MEMORY_MB': {'total': profile.memory_mb,
                      'reserved': profile.option('reserved_host_memory_mb',
                                                 default=512),
                      'allocation_ratio': 1.0,
                      'max_unit': profile.memory_mb}}
    provider = snapshot.Provider('h1', 'uuid-h1', 1, None, 'h1',
                                 inventories, {})
    return tracker, provider


def used(provider, **usages):
    return dataclasses.replace(provider, usages=dict(usages))


def requests(tracker, provider):
    return {(r.kind, r.vcpus, r.memory_mb, r.extra_specs, r.cell)
            for r in capacity.requests_for(tracker, provider)}


class TestEmptyHosts(testing.TestCase):
    """What each profile must take when nothing runs on it."""

    def test_dev_1s_8c_smt2(self):
        # One cell; cpu_dedicated_set 2-7,10-15: 12 PCPU; shared 0-1,8-9:
        # VCPU 4 (x4.0 = 16, max_unit 4); MEMORY_MB 32768 - 512 = 32256
        # free. 4K pages: 32768 MiB less 1024 2M pages (2048 MiB) = 30720.
        # - pinned: all 12 in cell 0;
        # - shared: 4 vCPUs (max_unit), min(32256, 32768 x 1.0) = 32256
        #   MiB, but a guest may not overcommit the 30720 MiB of 4K pages;
        # - 2M pages: all 1024 (2048 MiB), one vCPU;
        # - phantom capacity: 13 pinned CPUs, the tracker has 12: none.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        self.assertEqual({
            ('dedicated', 12, 1, DEDICATED, 0),
            ('shared', 4, 30720, ONE_NODE, 0),
            ('hugepages', 1, 2048, pages(2048), 0)},
            requests(tracker, provider))

    def test_xeon_2s_20c_smt2(self):
        # Two cells of 36 dedicated CPUs (2-19,42-59 and 22-39,62-79) and
        # 4 shared ones; PCPU 72, VCPU 8 (max_unit 8), MEMORY_MB 393216 -
        # 512 = 392704. A one-node guest fits in one cell: 36 pinned CPUs
        # (cell 0 first of two equal), 4 shared vCPUs; 196608 MiB per cell
        # less 4096 2M pages (8192 MiB) and 16 1G pages (16384 MiB) leaves
        # 172032 MiB of 4K pages; 8192 MiB in 2M pages, 16384 in 1G pages.
        tracker, provider = empty_host('xeon-2s-20c-smt2')
        self.assertEqual({
            ('dedicated', 36, 1, DEDICATED, 0),
            ('shared', 4, 172032, ONE_NODE, 0),
            ('hugepages', 1, 8192, pages(2048), 0),
            ('hugepages', 1, 16384, pages(1048576), 0)},
            requests(tracker, provider))

    def test_xeon_2s_20c_smt2_m60(self):
        # The same CPUs, memory and pages as xeon-2s-20c-smt2 (its GPUs
        # are devices, not probed).
        self.assertEqual(requests(*empty_host('xeon-2s-20c-smt2')),
                         requests(*empty_host('xeon-2s-20c-smt2-m60')))

    def test_epyc_2s_64c_smt2_nps4(self):
        # Eight cells; cpu_shared_set 0-7,128-135 lies in cell 0 only, so
        # cell 0 has 16 dedicated CPUs (8-15,136-143) and cells 1-7 32
        # each. Pinned: 32 in cell 1 (PCPU 240 free, but no cell holds
        # 33: the NUMA fit refuses more, rightly). Shared and huge pages
        # need a shared CPU in the cell: cell 0 only; VCPU 16 (max_unit);
        # 131072 MiB less 32 1G pages = 98304 MiB of 4K pages; 32 1G pages.
        tracker, provider = empty_host('epyc-2s-64c-smt2-nps4')
        self.assertEqual({
            ('dedicated', 32, 1, DEDICATED, 1),
            ('shared', 16, 98304, ONE_NODE, 0),
            ('hugepages', 1, 32768, pages(1048576), 0)},
            requests(tracker, provider))

    def test_mixed_1s_16c_smt2(self):
        # One cell; 24 dedicated (4-15,20-31), 8 shared; cpu_allocation_
        # ratio 8.0 (VCPU 64, but max_unit 8); MEMORY_MB 131072 - 512 =
        # 130560; 8192 2M pages (16384 MiB) leave 114688 MiB of 4K pages.
        tracker, provider = empty_host('mixed-1s-16c-smt2')
        self.assertEqual({
            ('dedicated', 24, 1, DEDICATED, 0),
            ('shared', 8, 114688, ONE_NODE, 0),
            ('hugepages', 1, 16384, pages(2048), 0)},
            requests(tracker, provider))

    def test_nfv_2s_10c_smt2_pf_vfs(self):
        # Two cells of 16 dedicated and 4 shared CPUs, 98304 MiB each, no
        # huge pages: 16 pinned, 4 shared vCPUs with a cell's 98304 MiB.
        tracker, provider = empty_host('nfv-2s-10c-smt2-pf-vfs')
        self.assertEqual({
            ('dedicated', 16, 1, DEDICATED, 0),
            ('shared', 4, 98304, ONE_NODE, 0)},
            requests(tracker, provider))

    def _assert_as_pf_vfs(self, name):
        # pf-vfs's CPUs and memory (only the devices and their options
        # differ): two cells of 16 dedicated and 4 shared CPUs, 98304 MiB,
        # no pages.
        tracker, provider = empty_host(name)
        self.assertEqual({
            ('dedicated', 16, 1, DEDICATED, 0),
            ('shared', 4, 98304, ONE_NODE, 0)},
            requests(tracker, provider))

    def test_nfv_2s_10c_smt2_dpu(self):
        self._assert_as_pf_vfs('nfv-2s-10c-smt2-dpu')

    def test_nfv_2s_10c_smt2_vdpa(self):
        self._assert_as_pf_vfs('nfv-2s-10c-smt2-vdpa')

    def test_nfv_2s_10c_smt2_pf(self):
        self._assert_as_pf_vfs('nfv-2s-10c-smt2-pf')

    def test_nfv_2s_10c_smt2_vfs_alias(self):
        self._assert_as_pf_vfs('nfv-2s-10c-smt2-vfs-alias')

    def test_nfv_2s_10c_smt2_vfs_rc_traits(self):
        self._assert_as_pf_vfs('nfv-2s-10c-smt2-vfs-rc-traits')

    def test_nfv_2s_10c_smt2_reserved(self):
        # As pf-vfs, with 2048 2M and 64 1G pages per cell (4096 + 65536
        # MiB: 28672 MiB of 4K pages left) and reserved_huge_pages: four 1G
        # pages on each node, 1024 2M pages on node 1. 2M: 2048 free in
        # cell 0 (4096 MiB) against 1024 in cell 1; 1G: 60 in either,
        # cell 0 first (61440 MiB). reserved_host_memory_mb 8192 is no
        # cell's: MEMORY_MB free 196608 - 8192 = 188416 bounds nothing.
        tracker, provider = empty_host('nfv-2s-10c-smt2-reserved')
        self.assertEqual({
            ('dedicated', 16, 1, DEDICATED, 0),
            ('shared', 4, 28672, ONE_NODE, 0),
            ('hugepages', 1, 4096, pages(2048), 0),
            ('hugepages', 1, 61440, pages(1048576), 0)},
            requests(tracker, provider))

    def test_every_profile_is_tested(self):
        tested = {name[len('test_'):].replace('_', '-')
                  for name in dir(self) if name.startswith('test_')}
        # Profile names use dashes; test names cannot.
        self.assertEqual(set(), {name.replace('_', '-') for name in
                                 profiles.known_profiles()} - tested)


class TestWhatPlacementCounts(testing.TestCase):
    """Usage in Placement narrows the requests to what is guaranteed."""

    def test_pinned_guests_anywhere_leave_each_cell_its_worst_case(self):
        # xeon-2s-20c-smt2 with 40 PCPU used: they may all sit in the cell
        # asked (36 dedicated CPUs), so neither cell is guaranteed any;
        # with 30 used, 6 are guaranteed in either (cell 0 first).
        tracker, provider = empty_host('xeon-2s-20c-smt2')
        self.assertIsNone(capacity.dedicated(
            tracker.cells, capacity.placement_free(
                used(provider, PCPU=40, MEMORY_MB=2048))))
        request = capacity.dedicated(tracker.cells, capacity.placement_free(
            used(provider, PCPU=30, MEMORY_MB=2048)))
        self.assertEqual((6, 0), (request.vcpus, request.cell))

    def test_placement_free_bounds_a_single_cell_host(self):
        # dev-1s-8c-smt2, 10 of 12 PCPU used: 2 pinned CPUs.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        request = capacity.dedicated(tracker.cells, capacity.placement_free(
            used(provider, PCPU=10, MEMORY_MB=512)))
        self.assertEqual(2, request.vcpus)
        self.assertEqual('PCPU free 2 (total 12, reserved 0, used 10)',
                         request.placement)

    def test_memory_used_may_hold_every_huge_page(self):
        # dev-1s-8c-smt2 with 2048 MiB used in Placement: a guest of 2 GiB
        # in 2M pages may hold all 1024 pages, so none is guaranteed;
        # with 1024 MiB used, 512 pages (1024 MiB) are.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        self.assertEqual([], capacity.hugepages(
            tracker.cells, capacity.placement_free(
                used(provider, MEMORY_MB=2048))))
        [request] = capacity.hugepages(
            tracker.cells, capacity.placement_free(
                used(provider, MEMORY_MB=1024)))
        self.assertEqual(1024, request.memory_mb)

    def test_shared_use_is_bounded_by_the_cell_limit(self):
        # dev-1s-8c-smt2, 14 VCPU used of 4 x 4.0 = 16: Placement has 2
        # free; the cell limit (4 x 4.0 - 14 = 2) agrees: 2 vCPUs. Memory:
        # 30000 used of 32256: 2256 MiB free, under the cell's 32768 - 30000.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        request = capacity.shared(tracker.cells, capacity.placement_free(
            used(provider, VCPU=14, MEMORY_MB=30000)))
        self.assertEqual((2, 2256), (request.vcpus, request.memory_mb))

    def test_nothing_free_asks_nothing(self):
        tracker, provider = empty_host('dev-1s-8c-smt2')
        full = used(provider, PCPU=12, VCPU=16, MEMORY_MB=32256)
        # The one request left is the phantom-capacity one: 1 pinned CPU
        # (PCPU free 0 + 1) needs MEMORY_MB free, and there is none.
        self.assertEqual(set(), requests(tracker, full))

    def test_a_host_without_numa_cells_is_not_asked(self):
        tracker, provider = empty_host('dev-1s-8c-smt2')
        self.assertEqual([], capacity.requests_for(
            dataclasses.replace(tracker, cells=()), provider))


class TestPhantomCapacity(testing.TestCase):

    def test_a_cell_freer_than_placement_asks_one_more(self):
        # dev-1s-8c-smt2 with 4 PCPU used in Placement but nothing pinned:
        # Placement has 8 free, the tracker's cell 12: 9 pinned CPUs, which
        # Placement refuses.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        request = capacity.phantom_capacity(
            tracker.cells, capacity.placement_free(
                used(provider, PCPU=4, MEMORY_MB=512)))
        self.assertEqual((9, False), (request.vcpus,
                                      request.placement_allows))

    def test_a_tracker_that_agrees_asks_nothing(self):
        # 4 PCPU used and 4 CPUs pinned: the tracker has 8 free, as
        # Placement.
        tracker, provider = empty_host('dev-1s-8c-smt2')
        cell = dataclasses.replace(tracker.cells[0], pinned_cpus=(2, 3, 4,
                                                                  5))
        self.assertIsNone(capacity.phantom_capacity(
            (cell,), capacity.placement_free(
                used(provider, PCPU=4, MEMORY_MB=512))))


class TestProblems(testing.TestCase):
    """The problem names the host, the request and both views."""

    def test_a_refused_request_is_phantom_usage(self):
        tracker, provider = empty_host('dev-1s-8c-smt2')
        cell = dataclasses.replace(tracker.cells[0], pinned_cpus=(2,))
        tracker = dataclasses.replace(tracker, cells=(cell,))
        snap = snapshot.Snapshot({'h1': provider}, {}, {'h1': tracker})
        asked = []

        def refuse_pinned(host, node, request):
            # Stands for the tracker's answer, which the functional test
            # (tests/functional/test_capacity_probe.py) gets from Nova.
            asked.append((host, node, request.kind))
            return None if request.kind == 'dedicated' else {0: ()}

        [problem] = capacity_probe.capacity_probe(
            snap, {'h1'}, refuse_pinned,
            {'h1': {'why': 'vm1 (moved before) deleted'}})
        self.assertEqual(('capacity_probe', 'host h1, dedicated', 'taken',
                          'refused'), (problem.check, problem.subject,
                                       problem.expected, problem.actual))
        self.assertIn('host h1 refuses 12 dedicated CPUs, 1 MiB, one NUMA '
                      'node that Placement allows (phantom usage)',
                      str(problem))
        self.assertIn('Placement: PCPU free 12 (total 12', str(problem))
        self.assertIn('tracker: cell 0: CPU 2 pinned of 2,3,4,5,6,7,10,11,'
                      '12,13,14,15', str(problem))
        self.assertIn('hidden by the window: vm1 (moved before) deleted',
                      str(problem))
        self.assertEqual(['dedicated', 'hugepages', 'shared'],
                         sorted(kind for _h, _n, kind in asked))

    def test_hosts_not_asked_are_left_alone(self):
        tracker, provider = empty_host('dev-1s-8c-smt2')
        snap = snapshot.Snapshot({'h1': provider}, {}, {'h1': tracker})
        self.assertEqual([], capacity_probe.capacity_probe(
            snap, set(), lambda *args: self.fail('asked')))

    def test_a_node_the_tracker_does_not_hold_is_skipped(self):
        tracker, provider = empty_host('dev-1s-8c-smt2')
        snap = snapshot.Snapshot({'h1': provider}, {}, {'h1': tracker})

        def untracked(host, node, request):
            raise LookupError(node)

        self.assertEqual([], capacity_probe.capacity_probe(
            snap, {'h1'}, untracked))


class TestSwitch(testing.TestCase):

    def test_off_unless_asked(self):
        self.useFixture(fixtures.EnvironmentVariable(invariants.PROBE_ENV))
        self.assertNotIn('capacity_probe', invariants.Checker().enabled)
        self.assertIn('capacity_probe',
                      invariants.Checker(capacity_probe=True).enabled)
        self.assertIn('capacity_probe', invariants.Checker(
            enabled={'capacity_probe'}).enabled)

    def test_on_by_default_in_the_gate(self):
        # The gate's checkers (scenario tests, harness run) say
        # probe_by_default; the environment still turns it off.
        self.useFixture(fixtures.EnvironmentVariable(invariants.PROBE_ENV))
        self.assertIn('capacity_probe', invariants.Checker(
            probe_by_default=True).enabled)
        self.useFixture(fixtures.EnvironmentVariable(
            invariants.PROBE_ENV, '0'))
        self.assertNotIn('capacity_probe', invariants.Checker(
            probe_by_default=True).enabled)
        self.assertFalse(invariants.probe_wanted(default=True))

    def test_the_environment_asks_for_it(self):
        self.useFixture(fixtures.EnvironmentVariable(
            invariants.PROBE_ENV, '1'))
        self.assertIn('capacity_probe', invariants.Checker().enabled)
        # A Checker told which invariants to run runs those.
        self.assertEqual({'usages_add_up'}, invariants.Checker(
            enabled={'usages_add_up'}).enabled)
        self.assertNotIn('capacity_probe', invariants.Checker(
            capacity_probe=False).enabled)
