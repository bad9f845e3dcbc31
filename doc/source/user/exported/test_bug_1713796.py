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

"""Regression test for bug 1713796.

Failed unshelve does not remove allocations from placement.

Exported from the nova-harness scenario file harness/bugs/lp1713796.yaml.
"""

import re

import fixtures
from oslo_config import cfg
from oslo_utils import timeutils

from nova.compute import utils as compute_utils
from nova import context
from nova import exception
from nova import objects
from nova.tests.functional import integrated_helpers

CONF = cfg.CONF


class TestBug1713796(integrated_helpers.ProviderUsageBaseTestCase):
    """Bug 1713796.

    Failed unshelve does not remove allocations from placement.
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
        # Fault steps armed: (what, [calls left], times).
        self._faults = []

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

    def _fault(self, host, method, times):
        """The next ``times`` calls of ``method`` on ``host`` fail.

        ``times`` None: every call, as a driver whose method always
        fails (kept with the driver across a restart).
        A virt driver method raises as a failing hypervisor would;
        'claim': the resource tracker's next claim raises
        ComputeResourcesUnavailable, as a host that no longer fits does.
        Armed on the compute as it runs: started again, it has none.
        """
        manager = self.computes[host].manager
        reason = 'injected fault (%s) on %s' % (method, host)
        if method == 'claim':
            error = exception.ComputeResourcesUnavailable(reason=reason)
            targets = [(manager.rt, claim) for claim in (
                'instance_claim', 'resize_claim', 'rebuild_claim',
                'live_migration_claim')]
        elif method.startswith('check_can_live_migrate_'):
            error = exception.MigrationPreCheckError(reason=reason)
            targets = [(manager.driver, method)]
        else:
            error = exception.NovaException(
                'injected hypervisor fault: %s failed on %s' % (method, host))
            targets = [(manager.driver, method)]
        left = [times]

        def failing(real):
            def call(*args, **kwargs):
                if left[0] is None:
                    raise error
                if left[0] and self.computes[host].manager is manager:
                    left[0] -= 1
                    raise error
                return real(*args, **kwargs)
            return call

        for target, name in targets:
            self.useFixture(fixtures.MockPatchObject(
                target, name, side_effect=failing(getattr(target, name))))
        if times is not None:
            # A fault step's (not a failing driver's): it must fire.
            self._faults.append(('%s on %s' % (method, host), left, times))

    def assertFaultsFired(self):
        """Every fault a step armed failed a call: Nova made one.

        A fault Nova never met is a step that silently did nothing.
        """
        self.assertEqual([], sorted(what for what, left, times in self._faults
                                    if left[0] == times),
                         'faults Nova never met')

    def test_unshelve_whose_spawn_fails_on_the_chosen_host(self):
        """unshelve whose spawn fails on the chosen host"""
        for host in ['h1', 'h2']:
            self.computes[host] = self._start_compute(host)
            self._schedule(host)
        self.flavors['small'] = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1,
            ephemeral=0, swap=0)

        # 1. boot vm1 (small) on h1
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['small'],
            host='h1', networks='none')
        self.assertAllocations({
            'vm1': {
                'h1': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'h1': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        # 2. shelve vm1
        self.servers['vm1'] = self._shelve_server(
            self.servers['vm1'], expected_state='SHELVED_OFFLOADED')
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })
        self.assertServer('vm1', host=None, status='SHELVED_OFFLOADED')

        # 3. fault spawn on h2
        self._fault('h2', 'spawn', 1)

        # 4. unshelve vm1 to h2
        self.api.post_server_action(
            self.servers['vm1']['id'], {'unshelve': {'host': 'h2'}})
        self.servers['vm1'] = self._wait_for_server_parameter(
            self.servers['vm1'],
            {'status': 'SHELVED_OFFLOADED', 'OS-EXT-STS:task_state': None})
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })
        self.assertServer('vm1', host=None, status='SHELVED_OFFLOADED')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })

        # 6. unshelve vm1 to h2
        self.api.post_server_action(
            self.servers['vm1']['id'], {'unshelve': {'host': 'h2'}})
        self.servers['vm1'] = self._wait_for_state_change(
            self.servers['vm1'], 'ACTIVE')
        self.assertAllocations({
            'vm1': {
                'h2': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'h2': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })
        self.assertTrackers({
            'h2': {'local_gb_used': 1, 'memory_mb_used': 512, 'vcpus_used': 1},
        })
        self.assertServer('vm1', host='h2', status='ACTIVE')

        # 7. delete vm1
        self._delete_server(self.servers['vm1'])
        self.assertAllocations({
        })
        self.assertUsages({
        })

        # 8. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })

        self.assertFaultsFired()

    def test_unshelve_whose_claim_fails_on_the_chosen_host(self):
        """unshelve whose claim fails on the chosen host"""
        for host in ['h1', 'h2']:
            self.computes[host] = self._start_compute(host)
            self._schedule(host)
        self.flavors['small'] = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1,
            ephemeral=0, swap=0)

        # 1. boot vm1 (small) on h1
        self.servers['vm1'] = self._create_server(
            name='vm1', flavor_id=self.flavors['small'],
            host='h1', networks='none')
        self.assertAllocations({
            'vm1': {
                'h1': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
            },
        })
        self.assertUsages({
            'h1': {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
        })

        # 2. shelve vm1
        self.servers['vm1'] = self._shelve_server(
            self.servers['vm1'], expected_state='SHELVED_OFFLOADED')
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })

        # 3. fault claim on h2
        self._fault('h2', 'claim', 1)

        # 4. unshelve vm1 to h2
        self.api.post_server_action(
            self.servers['vm1']['id'], {'unshelve': {'host': 'h2'}})
        self.servers['vm1'] = self._wait_for_server_parameter(
            self.servers['vm1'],
            {'status': 'SHELVED_OFFLOADED', 'OS-EXT-STS:task_state': None})
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })
        self.assertServer('vm1', host=None, status='SHELVED_OFFLOADED')

        # 5. run update_available_resource on all
        for host in sorted(self.computes):
            self.computes[host].manager.update_available_resource(
                self.context)
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })

        # 6. delete vm1
        self._delete_server(self.servers['vm1'])
        self.assertAllocations({
        })
        self.assertUsages({
        })
        self.assertTrackers({
        })

        self.assertFaultsFired()
