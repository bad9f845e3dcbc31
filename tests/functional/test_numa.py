"""Nova's own NUMA code on hosts shaped like real servers.

Every host here runs Nova's libvirt driver over a fake libvirt connection
built from a profile in fixtures/hosts. Expected values come from each
machine's documented figures, written out as arithmetic below, and from
Nova's documented behaviour:

- Inventory (libvirt driver, update_provider_tree): PCPU total is the size
  of cpu_dedicated_set (allocation ratio 1); VCPU total is the size of
  cpu_shared_set, with cpu_allocation_ratio as its ratio (Nova's
  initial_cpu_allocation_ratio, 4.0, when unset); MEMORY_MB total is all
  of the host's memory, huge pages included, with reserved_host_memory_mb
  (default 512) as "reserved"; DISK_GB total is the instances filesystem.
- hw:cpu_policy=dedicated asks Placement for PCPU instead of VCPU and the
  tracker pins that many CPUs of cpu_dedicated_set, in one NUMA cell
  unless hw:numa_nodes says otherwise; hw:cpu_thread_policy=require takes
  whole sibling sets.
- hw:cpu_thread_policy=isolate forbids the HW_CPU_HYPERTHREADING trait, so
  a host with SMT is not a candidate when it reports PCPU (bug #1889633).
  Only a host with legacy config (no CPU sets) still takes it, through
  the scheduler's fallback VCPU query: Placement holds VCPU, and the
  tracker pins one thread per core and keeps the core's siblings from
  every other guest.
- Emulator threads run on the guest's pinned CPUs, or on the host's
  cpu_shared_set with hw:emulator_threads_policy=share.
- hw:mem_page_size=1GB takes the guest's memory as 1G pages from one cell.
- Moves: the destination claims (and pins) at prep_resize or when it
  accepts a live migration; the source keeps a resized guest's pins until
  confirm, and releases a live-migrated guest's when the migration ends.
"""

import dataclasses
import re

import ddt

from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness.core import profiles
from harness import testing

G_KB = 1024 * 1024  # a 1G page, in KiB
DEFAULT_RESERVED_MB = 512  # Nova's reserved_host_memory_mb
DEFAULT_CPU_RATIO = 4.0  # Nova's initial_cpu_allocation_ratio

# Each profile's figures, from the machine its description names.
FIGURES = {
    'dev-1s-8c-smt2': dict(
        cpus=1 * 8 * 2, cells=1,
        # shared 0-1,8-9: 2 cores x 2 threads
        vcpu=2 * 2, pcpu=16 - 2 * 2, cpu_ratio=DEFAULT_CPU_RATIO,
        memory_mb=32 * 1024, reserved_mb=DEFAULT_RESERVED_MB,
        disk_gb=512, page_1g=0),
    'xeon-2s-20c-smt2': dict(
        cpus=2 * 20 * 2, cells=2,
        # 2 cores per socket x 2 threads x 2 sockets are shared
        vcpu=2 * 2 * 2, pcpu=80 - 2 * 2 * 2, cpu_ratio=DEFAULT_CPU_RATIO,
        memory_mb=2 * 192 * 1024, reserved_mb=DEFAULT_RESERVED_MB,
        disk_gb=1788, page_1g=16),
    'epyc-2s-64c-smt2-nps4': dict(
        cpus=2 * 64 * 2, cells=2 * 4,
        # 8 cores x 2 threads of node 0 are shared
        vcpu=8 * 2, pcpu=256 - 8 * 2, cpu_ratio=DEFAULT_CPU_RATIO,
        memory_mb=1024 * 1024, reserved_mb=DEFAULT_RESERVED_MB,
        disk_gb=3576, page_1g=32),
    'mixed-1s-16c-smt2': dict(
        cpus=1 * 16 * 2, cells=1,
        vcpu=4 * 2, pcpu=32 - 4 * 2, cpu_ratio=8.0,
        memory_mb=128 * 1024, reserved_mb=DEFAULT_RESERVED_MB,
        disk_gb=960, page_1g=0),
    'nfv-2s-10c-smt2-reserved': dict(
        cpus=2 * 10 * 2, cells=2,
        vcpu=2 * 2 * 2, pcpu=40 - 2 * 2 * 2, cpu_ratio=DEFAULT_CPU_RATIO,
        memory_mb=2 * 96 * 1024, reserved_mb=8 * 1024,
        disk_gb=480, page_1g=64),
}

PIN = {'hw:cpu_policy': 'dedicated'}
RAM = 1024


def guest_pins(cloud, host, server):
    """The host CPUs the guest's vCPUs run on, from its libvirt XML."""
    conn = cloud.libvirt_hosts().connection(host)
    xml = conn.lookupByUUIDString(cloud.servers.uuid(server)).XMLDesc(0)
    return {int(cpu) for cpu in
            re.findall(r'<vcpupin vcpu="\d+" cpuset="(\d+)"/>', xml)}


def emulator_pin(cloud, host, server):
    conn = cloud.libvirt_hosts().connection(host)
    xml = conn.lookupByUUIDString(cloud.servers.uuid(server)).XMLDesc(0)
    return profiles.parse_cpu_spec(
        re.search(r'<emulatorpin cpuset="([^"]+)"/>', xml).group(1))


class NumaTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        # Guests here are as big as the hosts, not as the default project
        # quota (20 cores); lift it as an admin would.
        self.cloud.api.update_quota({'cores': -1})

    def start(self, host, profile):
        self.cloud.start_compute(host, profile=profile)
        return profiles.load_profile(profile)

    def pinned_by_cell(self, host):
        tracker = self.cloud.snapshot().trackers[host]
        return {cell.id: set(cell.pinned_cpus)
                for cell in tracker.cells if cell.pinned_cpus}

    def assertPinnedInOneCell(self, host, profile, count):
        by_cell = self.pinned_by_cell(host)
        self.assertEqual(1, len(by_cell), by_cell)
        [(cell_id, pinned)] = by_cell.items()
        self.assertEqual(count, len(pinned))
        self.assertLessEqual(pinned, profile.dedicated_cpus)
        self.assertEqual({cell_id}, {profile.cell_of(c) for c in pinned})
        return pinned

    def assertNoValidHost(self, server, flavor, host):
        exc = self.assertRaises(errors.OperationFailed,
                                self.cloud.servers.boot, server, flavor,
                                host=host)
        self.assertIn('No valid host', str(exc))
        self.assertEqual({}, self.cloud.snapshot().allocations)
        self.assertEqual({}, self.pinned_by_cell(host))


class TestInventory(NumaTestCase):

    def test_every_profile_reports_what_it_implies(self):
        for name in sorted(FIGURES):
            self.cloud.start_compute(name, profile=name)
        snap = self.cloud.snapshot()
        for name, fig in sorted(FIGURES.items()):
            inv = snap.provider(name).inventories
            self.assertEqual(
                {'PCPU': (fig['pcpu'], 0, 1.0),
                 'VCPU': (fig['vcpu'], 0, fig['cpu_ratio']),
                 'MEMORY_MB': (fig['memory_mb'], fig['reserved_mb'], 1.0),
                 'DISK_GB': (fig['disk_gb'], 0, 1.0)},
                {rc: (i['total'], i['reserved'], i['allocation_ratio'])
                 for rc, i in inv.items()}, name)
            tracker = snap.trackers[name]
            self.assertEqual(fig['cells'], len(tracker.cells), name)
            self.assertEqual(fig['cpus'], sum(
                len(c.cpus) + len(c.pcpus) for c in tracker.cells), name)
            self.assertEqual(fig['memory_mb'],
                             sum(c.memory_mb for c in tracker.cells), name)
            for cell in tracker.cells:
                self.assertEqual(fig['page_1g'], cell.pages.get(
                    G_KB, {'total': 0})['total'], name)

    def test_reserved_pages_reach_the_tracker(self):
        profile = self.start('host1', 'nfv-2s-10c-smt2-reserved')
        cells = self.cloud.snapshot().trackers['host1'].cells
        # OVS-DPDK keeps four 1G pages per node, the host 1024 2M pages on
        # node 1 (see the profile's description).
        self.assertEqual([4, 4], [c.pages[G_KB]['reserved'] for c in cells])
        self.assertEqual([0, 1024], [c.pages[2048]['reserved']
                                     for c in cells])
        self.assertEqual([4, 4], [profile.reserved_pages(c.id, G_KB)
                                  for c in cells])


@ddt.ddt
class TestPinning(NumaTestCase):

    def flavors(self, profile):
        cloud = self.cloud
        cloud.create_flavor('pin4', 4, RAM, 1, PIN)
        cloud.create_flavor('pin4-require', 4, RAM, 1, dict(
            PIN, **{'hw:cpu_thread_policy': 'require'}))
        cloud.create_flavor('pin4-isolate', 4, RAM, 1, dict(
            PIN, **{'hw:cpu_thread_policy': 'isolate'}))
        cloud.create_flavor('pin4-2cells', 4, RAM, 1, dict(
            PIN, **{'hw:numa_nodes': '2'}))
        cloud.create_flavor('pin2-1g', 2, 2048, 1, dict(
            PIN, **{'hw:mem_page_size': '1GB'}))
        # One vCPU more than the largest cell has dedicated CPUs, in one
        # cell: Placement may have the PCPUs, the cell does not.
        most = max(len(c.cpus & profile.dedicated_cpus)
                   for c in profile.cells)
        cloud.create_flavor('too-big', most + 1, RAM, 1, dict(
            PIN, **{'hw:numa_nodes': '1'}))

    @ddt.data(*sorted(FIGURES))
    def test_pinned_flavors(self, name):
        profile = self.start('host1', name)
        fig = FIGURES[name]
        self.flavors(profile)

        self.cloud.servers.boot('vm1', 'pin4', host='host1')
        self.assertEqual(
            {'vm1': {'host1': {'PCPU': 4, 'MEMORY_MB': RAM, 'DISK_GB': 1}}},
            self.cloud.snapshot().allocations)
        pinned = self.assertPinnedInOneCell('host1', profile, 4)
        self.assertEqual(pinned, guest_pins(self.cloud, 'host1', 'vm1'))
        # Without hw:emulator_threads_policy the emulator threads run on
        # the guest's own pinned CPUs.
        self.assertEqual(pinned, emulator_pin(self.cloud, 'host1', 'vm1'))
        self.cloud.servers.delete('vm1')

        self.cloud.servers.boot('vm2', 'pin4-require', host='host1')
        pinned = self.assertPinnedInOneCell('host1', profile, 4)
        cores = {profile.core_of(cpu) for cpu in pinned}
        self.assertEqual(2, len(cores))
        self.assertEqual(pinned, frozenset().union(*cores))
        self.cloud.servers.delete('vm2')

        # Every profile has SMT and cpu_dedicated_set: no candidate.
        self.assertNoValidHost('vm3', 'pin4-isolate', 'host1')
        self.cloud.servers.delete('vm3')

        if fig['cells'] > 1:
            self.cloud.servers.boot('vm4', 'pin4-2cells', host='host1')
            by_cell = self.pinned_by_cell('host1')
            self.assertEqual([2, 2], [len(p) for p in by_cell.values()])
            for cell_id, pinned in by_cell.items():
                self.assertEqual({cell_id},
                                 {profile.cell_of(c) for c in pinned})
            self.cloud.servers.delete('vm4')

        if fig['page_1g']:
            self.cloud.servers.boot('vm5', 'pin2-1g', host='host1')
            used = {c.id: c.pages[G_KB]['used'] for c in
                    self.cloud.snapshot().trackers['host1'].cells}
            # 2048 MB of guest memory is two 1G pages, all in one cell.
            self.assertEqual([2], [n for n in used.values() if n])
            self.assertEqual(set(self.pinned_by_cell('host1')),
                             {c for c, n in used.items() if n})
            self.cloud.servers.delete('vm5')

        self.assertNoValidHost('vm6', 'too-big', 'host1')
        self.cloud.servers.delete('vm6')

    def test_isolate_on_a_legacy_host_takes_whole_cores(self):
        # The developer host as it runs without CPU sets (as before
        # Train): cpuset == pcpuset, no PCPU inventory.
        dev = profiles.load_profile('dev-1s-8c-smt2')
        legacy = dataclasses.replace(dev, name='dev-legacy', nova={})
        self.start('host1', legacy)
        self.flavors(dev)
        self.cloud.create_flavor('pin8', 8, RAM, 1, PIN)
        self.cloud.create_flavor('pin1', 1, RAM, 1, PIN)

        self.cloud.servers.boot('vm1', 'pin4-isolate', host='host1')
        snap = self.cloud.snapshot()
        # The fallback query: Placement holds VCPU, not PCPU.
        self.assertEqual(
            {'vm1': {'host1': {'VCPU': 4, 'MEMORY_MB': RAM, 'DISK_GB': 1}}},
            snap.allocations)
        pins = guest_pins(self.cloud, 'host1', 'vm1')
        self.assertEqual(4, len(pins))
        cores = {dev.core_of(cpu) for cpu in pins}
        self.assertEqual(4, len(cores))  # no two vCPUs share a core
        # The tracker keeps the whole cores: 4 x 2 threads.
        whole = frozenset().union(*cores)
        self.assertEqual(whole, set(snap.trackers['host1'].pinned_cpus))

        # The other 4 cores are all that is left for pinned guests.
        self.cloud.servers.boot('vm2', 'pin8', host='host1')
        self.assertEqual(dev.cpus - whole,
                         guest_pins(self.cloud, 'host1', 'vm2'))
        self.assertEqual(dev.cpus,
                         set(self.cloud.snapshot().trackers[
                             'host1'].pinned_cpus))
        exc = self.assertRaises(errors.OperationFailed,
                                self.cloud.servers.boot, 'vm3', 'pin1',
                                host='host1')
        self.assertIn('No valid host', str(exc))


class TestMoves(NumaTestCase):

    def setUp(self):
        super().setUp()
        self.dev = self.start('host1', 'dev-1s-8c-smt2')
        self.nfv = self.start('host2', 'nfv-2s-10c-smt2-reserved')
        # emulator threads on cpu_shared_set: the guest XML then shows
        # which host's config Nova wrote it with.
        share = dict(PIN, **{'hw:emulator_threads_policy': 'share'})
        self.cloud.create_flavor('pin4', 4, RAM, 1, share)
        self.cloud.create_flavor('pin6', 6, 2 * RAM, 1, share)

    def assertPins(self, host1, host2):
        by_host = {}
        for host, profile, count in (('host1', self.dev, host1),
                                     ('host2', self.nfv, host2)):
            if count:
                by_host[host] = self.assertPinnedInOneCell(
                    host, profile, count)
            else:
                self.assertEqual({}, self.pinned_by_cell(host))
        return by_host

    def test_resize_confirm_then_live_migrate_back(self):
        self.cloud.servers.boot('vm1', 'pin4', host='host1')
        self.assertPins(4, 0)

        # The only other host; the destination pins at prep_resize, the
        # source keeps the old flavor's pins until confirm.
        self.cloud.servers.resize('vm1', 'pin6')
        snap = self.cloud.snapshot()
        self.assertEqual('host2', snap.servers['vm1'].host)
        self.assertEqual(
            {'migration(vm1)': {'host1': {'PCPU': 4, 'MEMORY_MB': RAM,
                                          'DISK_GB': 1}},
             'vm1': {'host2': {'PCPU': 6, 'MEMORY_MB': 2 * RAM,
                               'DISK_GB': 1}}},
            snap.allocations)
        pinned = self.assertPins(4, 6)
        self.assertEqual(pinned['host2'],
                         guest_pins(self.cloud, 'host2', 'vm1'))
        self.assertEqual(self.nfv.shared_cpus,
                         emulator_pin(self.cloud, 'host2', 'vm1'))
        self.cloud.run_periodics()
        self.assertPins(4, 6)

        self.cloud.servers.confirm('vm1')
        self.assertPins(0, 6)
        self.cloud.run_periodics()
        self.assertPins(0, 6)

        self.cloud.servers.live_migrate('vm1', host='host1')
        self.assertEqual(
            {'vm1': {'host1': {'PCPU': 6, 'MEMORY_MB': 2 * RAM,
                               'DISK_GB': 1}}},
            self.cloud.snapshot().allocations)
        pinned = self.assertPins(6, 0)
        # Nova rewrote the guest for the destination's CPU sets.
        self.assertEqual(pinned['host1'],
                         guest_pins(self.cloud, 'host1', 'vm1'))
        self.assertEqual(self.dev.shared_cpus,
                         emulator_pin(self.cloud, 'host1', 'vm1'))
        self.cloud.run_periodics()
        self.assertPins(6, 0)

        self.cloud.servers.delete('vm1')
        self.cloud.run_periodics()
        self.assertPins(0, 0)
        self.assertEqual({}, self.cloud.snapshot().allocations)


class TestPerHostConfig(NumaTestCase):

    def inventory(self, host):
        inv = self.cloud.snapshot().provider(host).inventories
        return {rc: (inv[rc]['total'], inv[rc]['allocation_ratio'])
                for rc in ('PCPU', 'VCPU')}

    def test_different_cpu_sets_survive_a_restart(self):
        self.start('host1', 'dev-1s-8c-smt2')
        self.start('host2', 'mixed-1s-16c-smt2')
        self.cloud.create_flavor('pin4', 4, RAM, 1, PIN)
        dev = FIGURES['dev-1s-8c-smt2']
        mixed = FIGURES['mixed-1s-16c-smt2']
        expected = {
            'host1': {'PCPU': (dev['pcpu'], 1.0),
                      'VCPU': (dev['vcpu'], dev['cpu_ratio'])},
            'host2': {'PCPU': (mixed['pcpu'], 1.0),
                      'VCPU': (mixed['vcpu'], mixed['cpu_ratio'])},
        }
        self.assertEqual(expected, {h: self.inventory(h) for h in expected})
        # Nova's plain fake driver still runs beside them, untouched by
        # the profiled hosts' config: 10 VCPUs at Nova's default ratio
        # (not the mixed host's 8.0).
        self.cloud.start_compute('plain')
        inv = self.cloud.snapshot().provider('plain').inventories
        self.assertNotIn('PCPU', inv)
        self.assertEqual(
            (10, DEFAULT_CPU_RATIO),
            (inv['VCPU']['total'], inv['VCPU']['allocation_ratio']))
        self.cloud.servers.boot('vm1', 'pin4', host='host2')
        uuid = self.cloud.snapshot().provider('host2').uuid

        self.cloud.restart_compute('host2')
        self.cloud.run_periodics()
        snap = self.cloud.snapshot()
        self.assertEqual(uuid, snap.provider('host2').uuid)
        self.assertEqual(expected, {h: self.inventory(h) for h in expected})
        self.assertEqual(4, len(snap.trackers['host2'].pinned_cpus))

        # A host rebooted without its guests comes back with its own
        # config too.
        self.cloud.restart_compute('host1', keep_hypervisor_state=False)
        self.cloud.run_periodics()
        self.assertEqual(expected, {h: self.inventory(h) for h in expected})
