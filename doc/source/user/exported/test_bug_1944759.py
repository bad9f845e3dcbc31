# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Regression test for bug 1944759.

Store old_flavor already on source host during resize.

Exported from the nova-harness scenario file harness/bugs/lp1944759.yaml.
"""

import re

import fixtures
from oslo_config import cfg
from oslo_utils import importutils
from oslo_utils import timeutils

from nova.compute import utils as compute_utils
from nova import context
from nova import exception
from nova import objects
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import base
from nova.virt.libvirt import config as vconfig

CONF = cfg.CONF


class TestBug1944759(base.ServersTestBase):
    """Bug 1944759.

    Store old_flavor already on source host during resize.
    """

    # As the harness runs it: the API at its latest microversion, as
    # admin; the scheduler fits NUMA topologies and PCI requests.
    ADMIN_API = True
    microversion = 'latest'
    # Casts as RPC casts (ProviderUsageBaseTestCase's too): a failure
    # stays with the service that got it, not handed back to the API.
    CAST_AS_CALL = False
    ADDITIONAL_FILTERS = ['NUMATopologyFilter', 'PciPassthroughFilter']

    def setUp(self):
        super().setUp()
        # The instances filesystem, as the profiles size it (ServersTestBase's
        # mock says 128 GB).
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.LibvirtDriver._get_local_gb_info',
            lambda driver: {'total': 512, 'used': 0, 'free': 512}))
        # A cold move copies no disk (the instances path is shared), as
        # Nova's NUMA tests mock it around a resize.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            'migrate_disk_and_power_off', return_value='{}'))
        self.context = context.get_admin_context()
        self.flavors = {}
        self.servers = {}
        # Seconds the test moved time on (_advance_clock).
        self._now = 0
        self._due = {}
        # Injections armed: (when, point) -> [action].
        self._injections = {}
        self._wrapped = set()

    def _providers(self):
        """Host -> its resource provider (none once its service is gone)."""
        providers = self.placement.get(
            '/resource_providers').body['resource_providers']
        return {rp['name']: rp['uuid'] for rp in providers
                if rp['name'] in self.computes}

    def _migrations_of(self, name):
        """The server's migrations, oldest first: a deleted server's too.

        Read from the cell database, deleted records too: the API lists
        a deleted server's migrations no more, and their allocations
        may outlive it.
        """
        context_deleted = context.get_admin_context(read_deleted='yes')
        migrations = objects.MigrationList.get_by_filters(
            context_deleted, {'instance_uuid': self.servers[name]['id']})
        return [{'id': migration.id, 'uuid': migration.uuid,
                 'status': migration.status}
                for migration in sorted(migrations,
                                        key=lambda migration: migration.id)]

    def _held(self, consumer_uuid):
        """What a consumer holds, by host name (none: left out).

        Not what it holds in a host's PCI device providers (Nova names
        them <host>_<PCI address>): the devices' assertions read those.
        The VGPU it holds on a host's GPU (<host>_pci_<GPU address>) is
        the host's.
        """
        by_provider = self.placement.get(
            '/allocations/%s' % consumer_uuid).body['allocations']
        hosts = {rp: host for host, rp in self._providers().items()}
        devices = set()
        if set(by_provider) - set(hosts):
            for rp in self._get_all_providers():
                host = hosts.get(rp['root_provider_uuid'])
                if host is None or rp['uuid'] in hosts:
                    continue
                if re.match(r'^%s_[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}'
                            r'\.[0-7]$' % re.escape(host), rp['name']):
                    devices.add(rp['uuid'])
                elif re.match(r'^%s_pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]'
                              r'{2}_[0-7]$' % re.escape(host), rp['name']):
                    hosts[rp['uuid']] = host
        held = {}
        for rp, allocation in by_provider.items():
            if rp in devices:
                continue
            into = held.setdefault(hosts[rp], {})
            for rc, amount in allocation['resources'].items():
                into[rc] = into.get(rc, 0) + amount
        return held

    def assertAllocations(self, expected):
        """Exactly what each consumer holds.

        The consumers are every server booted and its latest migration
        ('migration(NAME)'); one not named holds nothing, nor does an
        older migration, nor any other consumer of a host.
        """
        known = set()
        for name in sorted(self.servers):
            self.assertEqual(expected.get(name, {}),
                             self._held(self.servers[name]['id']),
                             'allocations of %s' % name)
            migrations = self._migrations_of(name)
            for migration in migrations:
                consumer = 'migration(%s)' % name
                want = (expected.get(consumer, {})
                        if migration is migrations[-1] else {})
                self.assertEqual(want, self._held(migration['uuid']),
                                 'allocations of %s' % consumer)
            known.add(self.servers[name]['id'])
            known.update(migration['uuid'] for migration in migrations)
        # Nor does any other consumer of a host's provider.
        for host, rp in sorted(self._providers().items()):
            consumers = self.placement.get(
                '/resource_providers/%s/allocations' % rp).body[
                    'allocations']
            for consumer in sorted(set(consumers) - known):
                self.assertEqual({}, self._held(consumer),
                                 'allocations of consumer %s' % consumer)

    def assertUsages(self, expected):
        """Exactly each host provider's usage (a host not named: none)."""
        providers = self._providers()
        for host in sorted(self.computes):
            usages = (self._get_provider_usages(providers[host])
                      if host in providers else {})
            self.assertEqual(
                expected.get(host, {}),
                {rc: used for rc, used in usages.items() if used},
                'usages of %s' % host)

    def assertProviders(self, expected):
        """Exactly the hosts that have a resource provider."""
        self.assertEqual(sorted(expected), sorted(self._providers()),
                         'the hosts with a resource provider')

    def assertProviderTraits(self, host, has=(), lacks=()):
        """The host's provider carries the traits ``has``, not ``lacks``."""
        traits = set(self._get_provider_traits(self._providers()[host]))
        self.assertEqual(sorted(has), sorted(traits & set(has)),
                         'traits %s has' % host)
        self.assertEqual([], sorted(traits & set(lacks)),
                         'traits %s lacks' % host)

    def assertTrackers(self, expected, skip=()):
        """What each host's compute node record counts.

        Its guests plus the host's reserved CPUs, memory and disk (a
        host not named counts no guest; one in ``skip`` is not checked).
        """
        reserved = {
            'vcpus_used': CONF.reserved_host_cpus,
            'memory_mb_used': CONF.reserved_host_memory_mb,
            'local_gb_used': compute_utils.convert_mb_to_ceil_gb(
                CONF.reserved_host_disk_mb),
        }
        for host in sorted(set(self.computes) - set(skip)):
            try:
                node = objects.ComputeNode.get_by_host_and_nodename(
                    self.context, host, host)
            except exception.ComputeHostNotFound:
                self.fail('the resource tracker of %s: no compute node '
                          'record' % host)
            guests = expected.get(host, {})
            self.assertEqual(
                {key: guests.get(key, 0) + extra
                 for key, extra in reserved.items()},
                {key: getattr(node, key) for key in reserved},
                'the resource tracker of %s' % host)

    def assertServer(self, name, status=None, host=None):
        server = self.api.get_server(self.servers[name]['id'])
        if status is not None:
            self.assertEqual(status, server['status'], name)
        if host is not None:
            self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'], name)

    def _schedule(self, host):
        """The compute's periodic tasks and heartbeat, due from now on.

        The test's services start without timers: ``_advance_clock``
        runs what a started service's timers would, each task first
        due its spacing after the start, then every spacing.
        """
        manager = self.computes[host].manager
        spacing = {task: manager._periodic_spacing[task]
                   for task, _ in manager._periodic_tasks}
        spacing['report_state'] = CONF.report_interval
        for task, every in spacing.items():
            self._due[(host, task)] = (self._now + every, every)

    def _unschedule(self, host):
        for key in [key for key in self._due if key[0] == host]:
            del self._due[key]

    def _advance_clock(self, seconds):
        """Move time on; run each task as it comes due on the way.

        In order of due time, then host, then task; the conductor and
        scheduler have no periodic task enabled by default and their
        heartbeats decide nothing checked here.
        """
        if self._now == 0:
            timeutils.set_time_override()
            self.addCleanup(timeutils.clear_time_override)
        target = self._now + seconds
        while True:
            pending = sorted((due, host, task)
                             for (host, task), (due, _) in self._due.items()
                             if due <= target)
            if not pending:
                break
            due, host, task = pending[0]
            timeutils.advance_time_seconds(due - self._now)
            self._now = due
            every = self._due[(host, task)][1]
            self._due[(host, task)] = (due + every, every)
            service = self.computes[host]
            if task == 'report_state':
                service.servicegroup_api._driver._report_state(service)
            else:
                getattr(service.manager, task)(self.context)
        timeutils.advance_time_seconds(target - self._now)
        self._now = target

    def assertLatestMigration(self, name, status):
        self.assertEqual(status, self._migrations_of(name)[-1]['status'],
                         'the latest migration of %s' % name)

    # The class whose method a point names: a compute manager's, or the
    # conductor's client of the scheduler (as Nova's tests of LP#1848343
    # wrap it): the call that sends the scheduler's RPC method.
    _WRAPPED = {
        '': 'nova.compute.manager.ComputeManager',
        'scheduler': 'nova.scheduler.client.query.SchedulerQueryClient',
    }

    def _arm(self, when, point, action, server=None, host=None):
        """Call ``action(manager, passed)`` once, at the next pass.

        The next time a service passes the point (``when``: just before
        or just after it): a compute's method (``finish_resize``), or
        the scheduler's (``scheduler.select_destinations``); with
        ``server``, the next time it passes it for that server (an
        instance among what it passes, or a migration of it); with
        ``host``, the next time the compute on that host passes it (a
        controller, whose ``manager`` is None, never does).
        ``passed`` lists the method's arguments (at a record's change,
        the record; at a conductor task, its instance and migration).
        Each point's actions fire in arming order.
        """
        if point not in self._wrapped:
            self._wrapped.add(point)
            self._wrap_method(point)
        self._injections.setdefault((when, point), []).append(
            (server, host, action))

    def _wrap_method(self, point):
        """Pass ``point`` around its method, on Nova's class."""
        service, _, method = point.rpartition('.')
        path = self._WRAPPED[service]
        real = getattr(importutils.import_class(path), method)
        # Nova's RPC endpoint wrapper keeps each method it has
        # dispatched (nova.service._TrackingEndpointWrapper): a
        # running compute looks the method up again, wrapped.
        for compute in self.computes.values():
            for endpoint in compute.rpcserver.dispatcher.endpoints:
                vars(endpoint).pop(method, None)

        def wrapper(manager, *args, **kwargs):
            passed = list(args) + list(kwargs.values())
            self._fire('before', point, manager, passed)
            result = real(manager, *args, **kwargs)
            self._fire('after', point, manager, passed)
            return result

        self.useFixture(fixtures.MonkeyPatch(
            '%s.%s' % (path, method), wrapper))

    def _fire(self, when, point, manager, passed):
        armed = self._injections.get((when, point), [])
        # The servers passed: an instance, or a migration's instance (a
        # save of its status passes the migration alone).
        uuids = {arg.uuid for arg in passed
                 if isinstance(arg, objects.Instance)}
        uuids.update(arg.instance_uuid for arg in passed
                     if isinstance(arg, objects.Migration))
        # The compute passing it (a compute's manager or its resource
        # tracker); None: a controller.
        here = getattr(manager, 'host', None)
        for server, host, action in list(armed):
            if server is not None and self.servers[server]['id'] not in uuids:
                continue
            if host is not None and host != here:
                continue
            armed.remove((server, host, action))
            if not armed:
                del self._injections[(when, point)]
            action(manager, passed)

    def assertInjectionsFired(self):
        """Every injection armed fired: none is left at its point.

        An injection nothing passed is a step that silently did nothing.
        """
        self.assertEqual([], sorted('%s %s' % point
                                    for point in self._injections),
                         'injections that never fired')

    def _inject(self, when, point, task, on, server=None, at_host=None):
        """Run the periodic ``task`` on ``on`` once, at the next pass.

        ``on`` is a host or a role of the move in flight: 'source' or
        'dest' (the server's migration), 'server_host' (the server's
        host as it passes). ``server``, ``at_host``: the passes that
        fire it (``_arm``).
        """
        def run(manager, passed):
            host = self._host(on, manager, passed)
            getattr(self.computes[host].manager, task)(self.context)
        self._arm(when, point, run, server=server, host=at_host)

    def _host(self, on, manager, passed):
        if on not in ('source', 'dest', 'server_host'):
            return on
        instances = [arg for arg in passed
                     if isinstance(arg, objects.Instance)]
        if on == 'server_host':
            return instances[0].host
        migrations = [arg for arg in passed
                      if isinstance(arg, objects.Migration)] or sorted(
            objects.MigrationList.get_by_filters(
                self.context, {'instance_uuid': instances[0].uuid}),
            key=lambda migration: migration.id)[-1:]
        host = getattr(migrations[0], '%s_compute' % on)
        # The compute passing the point (None: another service).
        here = getattr(manager, 'host', None)
        if host is None and on == 'dest' and here not in (
                None, migrations[0].source_compute):
            # Recorded only in the destination's prep_resize: before, a
            # compute other than the source that takes the move is it.
            host = here
        return host

    def _get_connection(
        self, host_info=None, pci_info=None, mdev_info=None, vdpa_info=None,
        libvirt_version=None, qemu_version=None, hostname=None,
    ):
        return fakelibvirt.Connection(
            'qemu:///system',
            version=libvirt_version or fakelibvirt.FAKE_LIBVIRT_VERSION,
            hv_version=qemu_version or fakelibvirt.FAKE_QEMU_VERSION,
            host_info=host_info, pci_info=pci_info, mdev_info=mdev_info,
            vdpa_info=vdpa_info, hostname=hostname)

    def _shape_cells(self, host_info, cells):
        """Edit fakelibvirt's cells to the host's, as NUMA tests do.

        ``cells``: per cell, its socket, memory (MiB), cores (each its
        sibling CPUs) and pages ({size in KiB: count}, the 4K pool
        included). fakelibvirt numbers a core's threads next to each
        other, every cell on socket 0.
        """
        for cell, (socket, memory_mb, cores, pages) in zip(
                host_info.numa_topology.cells, cells):
            cell.memory = memory_mb * 1024
            cell.cpus = []
            for core_id, core in enumerate(cores):
                for cpu_id in core:
                    cpu = vconfig.LibvirtConfigCapsNUMACPU()
                    cpu.id = cpu_id
                    cpu.socket_id = socket
                    cpu.core_id = core_id
                    cpu.siblings = set(core)
                    cell.cpus.append(cpu)
            cell.cpus.sort(key=lambda cpu: cpu.id)
            cell.mempages = fakelibvirt.create_mempages(
                sorted(pages.items()))

    def _pinned(self, host):
        """Cell id -> the CPUs the host's compute node record pins."""
        node = self._node(host)
        if node is None or not node.numa_topology:
            return {}
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return {cell.id: sorted(cell.pinned_cpus)
                for cell in topology.cells}

    def assertPinnedCpus(self, expected):
        """Each host's pinned CPUs: how many, or which (a list).

        On the host, or cell by cell ({cell id: ...}; a cell not named
        pins none); a host not named pins none.
        """
        for host in sorted(self.computes):
            cells = self._pinned(host)
            want = expected.get(host, 0)
            if not isinstance(want, dict):
                want = {None: want}
                cells = {None: sorted(
                    cpu for cpus in cells.values() for cpu in cpus)}
            for cell in sorted(set(want) | set(cells), key=str):
                pinned = cells.get(cell, [])
                wanted = want.get(cell, 0)
                self.assertEqual(
                    wanted, len(pinned) if isinstance(wanted, int)
                    else pinned, 'pinned CPUs on %s%s' % (
                        host, '' if cell is None else ' cell %d' % cell))

    def _node(self, host):
        try:
            return objects.ComputeNode.get_by_host_and_nodename(
                self.context, host, host)
        except exception.ComputeHostNotFound:
            return None

    def assertPci(self, name, expected):
        """The PCI devices the server holds (claimed or allocated).

        By host: how many, which (addresses) or how many on each NUMA
        cell ({cell id: n}); none on a host not named.
        """
        held = {}
        for host in sorted(self.computes):
            node = self._node(host)
            if node is None:
                continue
            for device in objects.PciDeviceList.get_by_compute_node(
                    self.context, node.id):
                held_by_it = (
                    device.instance_uuid == self.servers[name]['id'] and
                    device.status in ('claimed', 'allocated'))
                if held_by_it:
                    held.setdefault(host, []).append(device)
        for host in sorted(set(expected) | set(held)):
            want = expected.get(host, 0)
            devices = held.get(host, [])
            if isinstance(want, int):
                got = len(devices)
            elif isinstance(want, list):
                got = sorted(device.address for device in devices)
            else:
                want = {cell: n for cell, n in want.items() if n}
                got = {}
                for device in devices:
                    got[device.numa_node] = got.get(device.numa_node, 0) + 1
            self.assertEqual(want, got, 'PCI devices of %s on %s'
                             % (name, host))

    def assertTrackerFields(self, host, expected):
        """The fields named of the host's compute node record.

        And its NUMA cells' usage ({'cells': {cell id: {field: n}}}).
        """
        node = self._node(host)
        self.assertIsNotNone(node, 'the resource tracker of %s: no compute '
                             'node record' % host)
        got = {key: getattr(node, key) for key in expected
               if key != 'cells'}
        if 'cells' in expected:
            topology = objects.NUMATopology.obj_from_db_obj(
                node.numa_topology)
            cells = {cell.id: cell for cell in topology.cells}
            got['cells'] = {
                cell: {key: getattr(cells[cell], key, None)
                       if cell in cells else None for key in fields}
                for cell, fields in expected['cells'].items()}
        self.assertEqual(expected, got, 'the resource tracker of %s' % host)

    def _gpu_providers(self, host):
        """The host's GPUs' providers of VGPU.

        Nova names them <host>_<libvirt name of the GPU>
        (<host>_pci_0000_af_00_0).
        """
        root = self._providers().get(host)
        return [
            provider['uuid'] for provider in (
                self._get_all_rps_in_a_tree(root) if root else [])
            if re.match(r'^%s_pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}_[0-7]$'
                        % re.escape(host), provider['name'])]

    def assertMdevs(self, name, expected):
        """The mediated devices each running host's driver gave the server.

        As Nova's driver reads them from its guests; exact: none on a
        host not named.
        """
        got = {}
        for host in sorted({host for host, _ in self._due}):
            assigned = self.computes[host].driver.\
                _get_all_assigned_mediated_devices()
            count = list(assigned.values()).count(self.servers[name]['id'])
            if count:
                got[host] = count
        self.assertEqual({host: count for host, count in expected.items()
                          if count}, got, 'mediated devices of %s' % name)

    def assertDevices(self, host, expected):
        """The host's PCI devices by status (one not named: none).

        With 'placement': the usage of its PCI device providers (Nova
        names them <host>_<PCI address>), all classes summed; with
        'vgpus': the VGPU usage of its GPUs' providers.
        """
        got = {}
        node = self._node(host)
        if node is not None:
            for device in objects.PciDeviceList.get_by_compute_node(
                    self.context, node.id):
                got[device.status] = got.get(device.status, 0) + 1
        if 'vgpus' in expected:
            got['vgpus'] = sum(
                self._get_provider_usages(uuid).get('VGPU', 0)
                for uuid in self._gpu_providers(host))
        if 'placement' in expected:
            got['placement'] = 0
            root = self._providers().get(host)
            tree = self._get_all_rps_in_a_tree(root) if root else []
            for provider in tree:
                if re.match(r'^%s_[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}'
                            r'\.[0-7]$' % re.escape(host), provider['name']):
                    got['placement'] += sum(self._get_provider_usages(
                        provider['uuid']).values())
        self.assertEqual(
            {key: count for key, count in expected.items() if count},
            {key: count for key, count in got.items() if count},
            'devices of %s' % host)

    def _host_info_dev_1s_8c_smt2(self):
        """Profile dev-1s-8c-smt2.

        Developer workstation with one Intel Core i7-10700 (Comet Lake,
        8 cores, 2 threads per core, 16 logical CPUs) and 32 GiB of RAM
        in one NUMA node, numbered as Linux numbers it (lscpu -e): CPUs
        0-7 are the first threads of cores 0-7, CPUs 8-15 their
        siblings.
        """
        host_info = fakelibvirt.HostInfo(
            cpu_nodes=1, cpu_sockets=1, cpu_cores=8, cpu_threads=2,
            # getInfo() passes it on as libvirt's MiB.
            kB_mem=32768)
        self._shape_cells(host_info, [
            # cell 0
            (0, 32768, [
                [0, 8],
                [1, 9],
                [2, 10],
                [3, 11],
                [4, 12],
                [5, 13],
                [6, 14],
                [7, 15],
            ],
             {4: 7864320, 2048: 1024}),
        ])
        return host_info

    def _pci_info_dev_1s_8c_smt2(self):
        """Profile dev-1s-8c-smt2's devices."""
        pci_info = fakelibvirt.HostPCIDevicesInfo(
            num_pci=0, num_pfs=0, num_vfs=0)
        pci_info.add_device(
            dev_type='PCI', bus=2, slot=0, function=0,
            iommu_group=40, numa_node=0,
            vend_id='144d', prod_id='a80a',
            prod_name='Samsung 980 PRO NVMe 1 TB')
        return pci_info

    def test_periodic_on_the_source_between_resize_instance_and_confirm(self):
        """periodic on the source between resize_instance and
        finish_resize, then confirm
        """
        # The hosts' own options (their profiles' nova.conf), one for all.
        self.flags(cpu_dedicated_set='2-7,10-15', group='compute')
        self.flags(cpu_shared_set='0-1,8-9', group='compute')
        self.flags(device_spec=[
            '{"product_id": "a80a", "vendor_id": "144d"}',
        ], group='pci')
        self.start_compute(
            hostname='dst', host_info=self._host_info_dev_1s_8c_smt2(),
            pci_info=self._pci_info_dev_1s_8c_smt2())
        self._schedule('dst')
        self.start_compute(
            hostname='src', host_info=self._host_info_dev_1s_8c_smt2(),
            pci_info=self._pci_info_dev_1s_8c_smt2())
        self._schedule('src')
        self.flavors['pin2'] = self._create_flavor(
            name='pin2', vcpu=2, memory_mb=512, disk=1,
            ephemeral=0, swap=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})
        self.flavors['pin2b'] = self._create_flavor(
            name='pin2b', vcpu=2, memory_mb=1024, disk=1,
            ephemeral=0, swap=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})

        # 1. boot vm1 (pin2) on src
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['pin2'],
            host='src', networks='none')
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 2,
        })

        # 2. inject before finish_resize: update_available_resource on source
        self._inject('before', 'finish_resize',
                     'update_available_resource', 'source')

        # 3. resize vm1 to pin2b
        self.servers['vm1'] = self._resize_server(
            self.servers['vm1'], self.flavors['pin2b'])
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 2,
            'src': 2,
        })
        self.assertServer('vm1', host='dst', status='VERIFY_RESIZE')

        # 4. confirm vm1
        self.servers['vm1'] = self._confirm_resize(self.servers['vm1'])
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 2,
            'src': 0,
        })
        self.assertServer('vm1', host='dst', status='ACTIVE')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 2,
            'src': 0,
        })

        # 6. delete vm1
        self._delete_server(self.servers['vm1'])
        self.assertAllocations({
        })
        self.assertUsages({
        })

        # 7. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertTrackers({
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 0,
        })

        self.assertInjectionsFired()

    def test_periodic_on_the_source_between_resize_instance_and_revert(self):
        """periodic on the source between resize_instance and
        finish_resize, then revert
        """
        # The hosts' own options (their profiles' nova.conf), one for all.
        self.flags(cpu_dedicated_set='2-7,10-15', group='compute')
        self.flags(cpu_shared_set='0-1,8-9', group='compute')
        self.flags(device_spec=[
            '{"product_id": "a80a", "vendor_id": "144d"}',
        ], group='pci')
        self.start_compute(
            hostname='dst', host_info=self._host_info_dev_1s_8c_smt2(),
            pci_info=self._pci_info_dev_1s_8c_smt2())
        self._schedule('dst')
        self.start_compute(
            hostname='src', host_info=self._host_info_dev_1s_8c_smt2(),
            pci_info=self._pci_info_dev_1s_8c_smt2())
        self._schedule('src')
        self.flavors['pin2'] = self._create_flavor(
            name='pin2', vcpu=2, memory_mb=512, disk=1,
            ephemeral=0, swap=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})
        self.flavors['pin2b'] = self._create_flavor(
            name='pin2b', vcpu=2, memory_mb=1024, disk=1,
            ephemeral=0, swap=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})

        # 1. boot vm1 (pin2) on src
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['pin2'],
            host='src', networks='none')
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 2,
        })

        # 2. inject before finish_resize: update_available_resource on source
        self._inject('before', 'finish_resize',
                     'update_available_resource', 'source')

        # 3. resize vm1 to pin2b
        self.servers['vm1'] = self._resize_server(
            self.servers['vm1'], self.flavors['pin2b'])
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 2,
            'src': 2,
        })

        # 4. revert vm1
        self.servers['vm1'] = self._revert_resize(self.servers['vm1'])
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 2,
        })
        self.assertServer('vm1', host='src', status='ACTIVE')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'PCPU': 2},
            },
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 2,
        })

        # 6. delete vm1
        self._delete_server(self.servers['vm1'])
        self.assertAllocations({
        })
        self.assertUsages({
        })

        # 7. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertTrackers({
        })
        self.assertPinnedCpus({
            'dst': 0,
            'src': 0,
        })

        self.assertInjectionsFired()
