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

"""Regression test for bug 1707071.

Compute nodes will fight over allocations during migration.

Exported from the nova-harness scenario file harness/bugs/lp1707071.yaml.
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
from nova.tests.functional import integrated_helpers

CONF = cfg.CONF


class TestBug1707071(integrated_helpers.ProviderUsageBaseTestCase):
    """Bug 1707071.

    Compute nodes will fight over allocations during migration.
    """

    compute_driver = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()
        self.computes = {}
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

    def test_resize_with_periodics_on_both_hosts_before_resize_instance(self):
        """resize with periodics on both hosts before
        resize_instance, confirm, then resize back with a periodic
        on the destination before finish_resize, revert
        """
        for host in ['dst', 'src']:
            self.computes[host] = self._start_compute(host)
            self._schedule(host)
        self.flavors['large'] = self._create_flavor(
            name='large', vcpu=2, memory_mb=1024, disk=1,
            ephemeral=0, swap=0)
        self.flavors['small'] = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1,
            ephemeral=0, swap=0)

        # 1. boot vm1 (small) on src
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['small'],
            host='src', networks='none')
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        # 2. inject before resize_instance: update_available_resource on src
        self._inject('before', 'resize_instance',
                     'update_available_resource', 'src')

        # 3. inject before resize_instance: update_available_resource on dst
        self._inject('before', 'resize_instance',
                     'update_available_resource', 'dst')

        # 4. resize vm1 to large
        self.servers['vm1'] = self._resize_server(
            self.servers['vm1'], self.flavors['large'])
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })
        self.assertServer('vm1', host='dst', status='VERIFY_RESIZE')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        # 6. confirm vm1
        self.servers['vm1'] = self._confirm_resize(self.servers['vm1'])
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
        })

        # 7. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
        })

        # 8. inject before finish_resize: update_available_resource on dest
        self._inject('before', 'finish_resize',
                     'update_available_resource', 'dest')

        # 9. resize vm1 to small
        self.servers['vm1'] = self._resize_server(
            self.servers['vm1'], self.flavors['small'])
        self.assertAllocations({
            'migration(vm1)': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })
        self.assertServer('vm1', host='src', status='VERIFY_RESIZE')

        # 10. inject before finish_revert_resize: update_available_resource on
        # src
        self._inject('before', 'finish_revert_resize',
                     'update_available_resource', 'src')

        # 11. inject before finish_revert_resize: update_available_resource on
        # dst
        self._inject('before', 'finish_revert_resize',
                     'update_available_resource', 'dst')

        # 12. revert vm1
        self.servers['vm1'] = self._revert_resize(self.servers['vm1'])
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
        })
        self.assertServer('vm1', host='dst', status='ACTIVE')

        # 13. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},
        })

        # 14. delete vm1
        self._delete_server(self.servers['vm1'])
        self.assertAllocations({
        })
        self.assertUsages({
        })

        self.assertInjectionsFired()

    def test_cold_migration_with_periodics_on_both_hosts_before_resize(self):
        """cold migration with periodics on both hosts before
        resize_instance, then confirm with periodics before
        confirm_resize
        """
        for host in ['dst', 'src']:
            self.computes[host] = self._start_compute(host)
            self._schedule(host)
        self.flavors['small'] = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1,
            ephemeral=0, swap=0)

        # 1. boot vm1 (small) on src
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['small'],
            host='src', networks='none')
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })

        # 2. inject before resize_instance: update_available_resource on dst
        self._inject('before', 'resize_instance',
                     'update_available_resource', 'dst')

        # 3. inject before resize_instance: update_available_resource on src
        self._inject('before', 'resize_instance',
                     'update_available_resource', 'src')

        # 4. migrate vm1 to dst
        self.servers['vm1'] = self._migrate_server(
            self.servers['vm1'], host='dst')
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'migration(vm1)': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })

        # 6. inject before confirm_resize: update_available_resource on src
        self._inject('before', 'confirm_resize',
                     'update_available_resource', 'src')

        # 7. inject before confirm_resize: update_available_resource on dst
        self._inject('before', 'confirm_resize',
                     'update_available_resource', 'dst')

        # 8. confirm vm1
        self.servers['vm1'] = self._confirm_resize(self.servers['vm1'])
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })
        self.assertServer('vm1', host='dst', status='ACTIVE')

        # 9. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        self.assertInjectionsFired()

    def test_live_migration_with_a_periodic_on_the_destination_before(self):
        """live migration with a periodic on the destination before
        pre_live_migration and on the source before
        _post_live_migration
        """
        for host in ['dst', 'src']:
            self.computes[host] = self._start_compute(host)
            self._schedule(host)
        self.flavors['small'] = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1,
            ephemeral=0, swap=0)

        # 1. boot vm1 (small) on src
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['small'],
            host='src', networks='none')
        self.assertAllocations({
            'vm1': {
                'src': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })

        # 2. inject before pre_live_migration: update_available_resource on dst
        self._inject('before', 'pre_live_migration',
                     'update_available_resource', 'dst')

        # 3. inject before _post_live_migration: update_available_resource on
        # src
        self._inject('before', '_post_live_migration',
                     'update_available_resource', 'src')

        # 4. live migrate vm1 to dst
        self.servers['vm1'] = self._live_migrate(
            self.servers['vm1'], host='dst')
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })
        self.assertServer('vm1', host='dst', status='ACTIVE')
        self.assertLatestMigration('vm1', 'completed')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
            'vm1': {
                'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'dst': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        self.assertInjectionsFired()
