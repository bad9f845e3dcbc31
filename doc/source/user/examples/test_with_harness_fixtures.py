"""A test in Nova's own tree that uses the harness's fixtures.

It runs with Nova's runner from an installed Nova (``python -m
testtools.run``), on Nova's libvirt test base class: two computes shaped
like the harness's ``dev-1s-8c-smt2`` profile (one socket of eight cores,
two threads each; CPUs 2-7 and 10-15 dedicated, 0-1 and 8-9 shared), a
race point, a dying compute, a Placement fault and the virtual clock.
"""

# Nova's test package first, as in Nova's tree (where it is the
# module's own package): importing it chooses eventlet or native threading
# (OS_NOVA_DISABLE_EVENTLET_PATCHING) before anything imports eventlet.
from nova.tests.functional.libvirt import base  # noqa: I100

import fixtures  # noqa: I100
from nova import context
from nova import objects

import harness

HOSTS = ('host1', 'host2')


def start_two_profiled_computes(test):
    """host1 and host2 as dev-1s-8c-smt2 boxes, for cold migrations."""
    # No disk to move between the fake hosts, as Nova's own NUMA
    # migration tests stub it.
    test.useFixture(fixtures.MockPatch(
        'nova.virt.libvirt.driver.LibvirtDriver.migrate_disk_and_power_off',
        return_value='{}'))
    for host in HOSTS:
        test.useFixture(harness.ProfiledCompute(test, host, 'dev-1s-8c-smt2'))


class TestWithHarnessFixtures(base.ServersTestBase):

    ADMIN_API = True
    microversion = 'latest'

    def setUp(self):
        super().setUp()
        start_two_profiled_computes(self)
        self.pinned = self._create_flavor(
            vcpu=2, memory_mb=512, disk=1,
            extra_spec={'hw:cpu_policy': 'dedicated'})

    def _pinned_cpus(self, host):
        """How many host CPUs ``host``'s resource tracker has pinned."""
        node = objects.ComputeNode.get_by_nodename(
            context.get_admin_context(), host)
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return sum(len(cell.pinned_cpus) for cell in topology.cells)

    def _usage(self, host):
        return self._get_provider_usages(self.compute_rp_uuids[host])

    def test_periodic_on_the_source_before_finish_resize(self):
        server = self._create_server(flavor_id=self.pinned, host='host1',
                                     networks='none')
        # The source's periodic runs as the destination starts
        # finish_resize (the moment of LP#1944759).
        point = self.useFixture(harness.RacePoint(
            'before finish_resize', harness.periodic(self, 'host1')))
        server = self._migrate_server(server, host='host2')
        self.assertEqual(['host2'], point.fired)
        # The migration holds the source's PCPUs, the server the dest's;
        # each tracker pins what its guest (or migration) holds.
        self.assertEqual(2, self._usage('host1')['PCPU'])
        self.assertEqual(2, self._usage('host2')['PCPU'])
        self.assertEqual(2, self._pinned_cpus('host1'))
        self.assertEqual(2, self._pinned_cpus('host2'))
        self._confirm_resize(server)
        self.assertEqual(0, self._usage('host1')['PCPU'])
        self.assertEqual(0, self._pinned_cpus('host1'))

    def test_destination_dies_before_finish_resize(self):
        server = self._create_server(flavor_id=self.pinned, host='host1',
                                     networks='none')
        point = self.useFixture(harness.RacePoint(
            'before finish_resize', harness.kill(self, 'host2')))
        self.api.post_server_action(server['id'],
                                    {'migrate': {'host': 'host2'}})
        # The source handed over; the destination died before finishing.
        self._wait_for_migration_status(server, ['post-migrating'])
        self.assertEqual(['host2'], point.fired)
        self.assertEqual(2, self._usage('host1')['PCPU'])
        self.assertEqual(2, self._usage('host2')['PCPU'])

    def test_placement_refuses_allocation_candidates(self):
        fault = self.useFixture(harness.PlacementFault(
            self, 'GET /allocation_candidates', status=500))
        shared = self._create_flavor(vcpu=1, memory_mb=512, disk=1)
        server = self._create_server(flavor_id=shared, networks='none',
                                     expected_state='ERROR')
        self.assertEqual(['GET /allocation_candidates'], fault.fired)
        self.assertIn('No valid host', server['fault']['message'])
        self.assertEqual(0, self._usage('host1')['VCPU'])


class TestVirtualClock(base.ServersTestBase):
    """The virtual clock confirms a resize after resize_confirm_window."""

    ADMIN_API = True
    microversion = 'latest'

    def setUp(self):
        # Before any service starts: their records carry its time.
        self.clock = self.useFixture(harness.VirtualClock())
        super().setUp()
        self.flags(resize_confirm_window=60)
        start_two_profiled_computes(self)
        for host in HOSTS:
            self.clock.add_service(host, self.computes[host])

    def test_resize_confirmed_once_its_window_passed(self):
        flavor = self._create_flavor(vcpu=1, memory_mb=512, disk=1)
        server = self._create_server(flavor_id=flavor, host='host1',
                                     networks='none')
        server = self._migrate_server(server, host='host2')
        # _poll_unconfirmed_resizes runs every 60 s of virtual time and
        # confirms migrations finished more than 60 s before.
        self.clock.advance(59)
        self._wait_for_state_change(server, 'VERIFY_RESIZE')
        fired = self.clock.advance(62)
        self.assertIn(('host2', '_poll_unconfirmed_resizes'),
                      [(host, task) for _, host, task in fired])
        self._wait_for_state_change(server, 'ACTIVE')
