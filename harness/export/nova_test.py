"""A scenario file as a Nova functional regression test module.

``export(path, bug=None, with_harness=False)`` returns the module's
source. It is built on ``integrated_helpers.ProviderUsageBaseTestCase``
(the base of Nova's resize, migrate and allocation regressions): the
scenario's hosts are computes of Nova's fake driver, its flavors are
created through the API, each scenario is one test method whose steps
call ``integrated_helpers``' helpers (``steps``) and whose expectations
are assertions on Placement, the compute node records and the API
(``expect``). The module imports no harness unless ``with_harness``
(it may, and does where it needs to): then, for a bug,
``HARNESS_REINTRODUCE=1`` in the environment puts the bug back into Nova
with its reintroduction fixture, so the same test shows the bite; and
profiled hosts that need different options (refused otherwise: Nova's
test config is one per process) each get their own with the harness's
``PerHostConfig``.

What the exported test does not check: the harness's invariants, which
run after every step of a scenario; only the scenario's own
expectations are translated.
"""

import functools
import os
import re
import textwrap

from harness.core import names
from harness.core import profiles
from harness.core import scenario as scenario_mod
from harness.export import expect as expect_units
from harness.export import layout
from harness.export import libvirt
from harness.export import nodes
from harness.export import refusal
from harness.export import steps as step_units

INDENT = ' ' * 8

# The assertion helpers every exported class carries: the expectation
# units' lines call them. Each reads what the harness's key reads.
HELPERS = '''
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
                            r'\\.[0-7]$' % re.escape(host), rp['name']):
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
'''

# The compute node helper, in a class whose scenarios expect records.
NODE_HELPERS = '''
    def assertComputeNode(self, node, expected):
        """The node's compute node record, as the cell database holds it.

        Its live record, else its latest deleted one (None: it has no
        record), the fields named only: 'records' counts the node's
        records, deleted ones too (a node brought back is its old
        record, undeleted); 'uuid': 'provider' is its provider's.
        """
        context_deleted = context.get_admin_context(read_deleted='yes')
        found = sorted(
            (record for record in objects.ComputeNodeList.get_all(
                context_deleted) if record.hypervisor_hostname == node),
            key=lambda record: record.id)
        if expected is None:
            self.assertEqual([], found, 'the records of node %s' % node)
            return
        self.assertNotEqual([], found, 'compute node %s: no record' % node)
        live = [record for record in found if not record.deleted]
        record = (live or found)[-1]
        got = {'records': len(found), 'deleted': bool(record.deleted),
               'mapped': bool(record.mapped)}
        want = dict(expected)
        if want.get('uuid') == 'provider':
            want['uuid'] = self._providers().get(node)
        self.assertEqual(
            want, {key: got[key] if key in got else getattr(record, key)
                   for key in want}, 'compute node %s' % node)
'''

# The hypervisor helper, in a class whose scenarios expect the list.
HYPERVISOR_HELPERS = '''
    def assertHypervisors(self, expected):
        """Exactly the hypervisors the API lists, by name.

        Each with the ``state`` and ``status`` given ({}: listed).
        """
        listed = {
            hypervisor['hypervisor_hostname']: hypervisor
            for hypervisor in self.admin_api.api_get(
                '/os-hypervisors/detail').body['hypervisors']}
        self.assertEqual(sorted(expected), sorted(listed),
                         'the hypervisors listed')
        for node, want in sorted(expected.items()):
            self.assertEqual(
                want, {key: listed[node][key] for key in want},
                'hypervisor %s' % node)
'''

# The instance action helper, in a class whose scenarios expect events.
ACTION_HELPERS = '''
    def assertActionEvent(self, name, **want):
        """An event of the server's instance actions matches ``want``.

        As an admin sees them: 'action' (the latest action of that name;
        any, if not named), 'event', 'result', 'host', and 'details', a
        shell pattern.
        """
        server_id = self.servers[name]['id']
        actions = self.admin_api.get_instance_actions(server_id)
        if 'action' in want:
            # The API lists the latest action first.
            actions = [action for action in actions
                       if action['action'] == want['action']][:1]
        events = [event for action in actions
                  for event in self.admin_api.get_instance_action_details(
                      server_id, action['request_id'])['events']]
        found = []
        for event in events:
            if any(event.get(key) != want[key]
                   for key in ('event', 'result', 'host') if key in want):
                continue
            if 'details' in want and not fnmatch.fnmatchcase(
                    event.get('details') or '', want['details']):
                continue
            found.append(event)
        self.assertNotEqual([], found, 'no event of %s matches %r; its '
                            'events: %r' % (name, want, events))
'''

# The host mapping helpers, in a class whose scenarios start a compute
# whose service was deleted, mapped again as the harness maps it.
MAPPING_HELPERS = '''
    def _map_host(self, host):
        """Map ``host`` to its cell again, as discover_hosts would have.

        Its service's delete destroyed its host mapping; a restart makes
        none (the test's host_mappings keeps the old one).
        """
        try:
            objects.HostMapping.get_by_host(self.context, host)
        except exception.HostMappingNotFound:
            objects.HostMapping(
                context=self.context, host=host,
                cell_mapping=self.host_mappings[host].cell_mapping).create()

    def _flag_mapped(self, host):
        """Flag the host's records mapped, as discover_hosts does."""
        for node in objects.ComputeNodeList.get_all_by_host(
                self.context, host):
            if not node.mapped:
                node.mapped = 1
                node.save()
'''

# The image helper, in a class whose scenarios have images.
IMAGE_HELPERS = '''
    def _create_image(self, name, properties):
        """An image of Glance's stand-in with ``properties`` added.

        The stand-in's first image (raw, x86_64) otherwise, as
        ``_create_server``'s default image.
        """
        image = {key: value for key, value in self.glance.image1.items()
                 if key not in ('id', 'name', 'properties')}
        image['name'] = name
        image['properties'] = dict(self.glance.image1['properties'],
                                   **properties)
        return self.glance.create(self.context, image)['id']
'''

# The log helper, in a class whose scenarios expect logs: Nova's tests
# read the test's log (StandardLogging) with assertIn and assertNotIn.
LOG_HELPERS = '''
    def assertLogged(self, mark, level, pattern=None, present=False):
        """The records logged since ``mark`` at ``level`` or above.

        Those matching ``pattern`` (searched in the message): none, or
        at least one (``present``).
        """
        levels = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')
        found = []
        for record in re.split(r'\\n(?=\\d{4}-\\d\\d-\\d\\d \\S+ [A-Z]+ \\[)',
                               self.stdlog.logger.output[mark:]):
            match = re.match(r'\\S+ \\S+ ([A-Z]+) \\[[^]]*\\] (.*)', record,
                             re.S)
            if not match or match.group(1) not in levels:
                continue
            if levels.index(match.group(1)) < levels.index(level):
                continue
            if pattern is None or re.search(pattern, match.group(2)):
                found.append(record.splitlines()[0])
        if present:
            self.assertNotEqual([], found, 'no record at %s or above '
                                'matching %r' % (level, pattern))
        else:
            self.assertEqual([], found, 'records at %s or above matching '
                             '%r' % (level, pattern))
'''

# The injection helpers, in a class whose scenarios inject: Nova's
# tests wrap the method at the race point (stub_out) and act there: run
# a periodic, send an API request, stop a compute.
INJECTION_HELPERS = '''
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
'''

# The record helpers, in a class whose scenarios inject at a record's
# change: Nova's tests wrap the record's save (as its tests of
# LP#1879878 wrap Migration.save) and act when the change is saved.
RECORD_HELPERS = '''
    def _wrap_save(self, point):
        """Pass ``point`` around the save that makes its record's change.

        'instance.host': an instance saved with its host changed;
        'migration.status=<status>': a migration saved with its status
        changed to <status>. The manager passing it is the compute's
        whose code saves the record (None: the conductor's or the API's).
        """
        record, _, change = point.partition('.')
        field, _, value = change.partition('=')
        path = 'nova.objects.%s.%s' % (record, record.capitalize())
        real = importutils.import_class(path).save

        def save(obj, *args, **kwargs):
            if field not in obj.obj_what_changed() or (
                    value and getattr(obj, field) != value):
                return real(obj, *args, **kwargs)
            manager = self._saving_manager()
            self._fire('before', point, manager, [obj])
            result = real(obj, *args, **kwargs)
            self._fire('after', point, manager, [obj])
            return result

        self.useFixture(fixtures.MonkeyPatch('%s.save' % path, save))

    def _saving_manager(self):
        """The compute manager whose code runs in this thread, or None.

        The nearest of the computes' managers (or their resource
        trackers) up this thread's stack: the compute whose RPC handler,
        executor task or periodic makes the save.
        """
        owners = {}
        for compute in self.computes.values():
            owners[id(compute.manager)] = compute.manager
            owners[id(compute.manager.rt)] = compute.manager
        frame = sys._getframe(1)
        while frame is not None:
            manager = owners.get(id(frame.f_locals.get('self')))
            if manager is not None:
                return manager
            frame = frame.f_back
        return None
'''

# The lock helper, in a class whose scenarios inject a periodic at a
# record's change: the change may be saved inside the tracker's lock.
LOCK_HELPERS = '''
    def _after_tracker_lock(self, call):
        """``call()`` now, or as this thread frees the tracker's lock.

        A periodic needs the resource tracker's lock (compute_resources,
        one for every compute of the process). At a point inside it (a
        claim's save of 'pre-migrating') Nova's own periodic would wait
        for it and run once the code there frees it: here it runs in the
        thread that frees it, before that code goes on, at the same
        moment in every run.
        """
        lock = lockutils.internal_fair_lock('compute_resources')
        if not lock.is_writer(check_pending=False):
            call()
            return
        release = lock._release_write_lock

        def release_then_call(*args, **kwargs):
            lock._release_write_lock = release
            release(*args, **kwargs)
            call()

        lock._release_write_lock = release_then_call
        self.addCleanup(vars(lock).pop, '_release_write_lock', None)
'''

# The task helper, in a class whose scenarios inject at a conductor
# task: Nova's tests wrap the task's execute.
CONDUCTOR_TASK_HELPERS = '''
    def _wrap_task(self, point):
        """Pass ``point`` around each run of a conductor task.

        'conductor.<class>': the execute of each task of that class (a
        LiveMigrationTask), passing the instance and the migration it
        was made for; no compute passes it.
        """
        name = point.partition('.')[2]
        path = 'nova.conductor.tasks.base.TaskBase'
        real = importutils.import_class(path).execute

        def execute(task):
            if type(task).__name__ != name:
                return real(task)
            passed = [getattr(task, 'instance', None),
                      getattr(task, 'migration', None)]
            self._fire('before', point, None, passed)
            result = real(task)
            self._fire('after', point, None, passed)
            return result

        self.useFixture(fixtures.MonkeyPatch('%s.execute' % path, execute))
'''


# The check helpers, in a class whose scenarios check expectations at a
# point: the assertions run there, their failure reported after the step.
CHECK_HELPERS = '''
    def _inject_check(self, number, when, point, check, server=None,
                      at_host=None):
        """Call ``check`` once, at the next pass (armed at step ``number``).

        ``server``, ``at_host``: the passes that fire it (``_arm``).
        Its assertions run in the thread that passes the point, where
        Nova's own error handling would take a failure: what they find
        is kept for ``_assertChecked`` to report in the test's thread.
        """
        def run(manager, passed):
            try:
                check()
            except self.failureException as exc:
                self._checked[number] = exc
            else:
                self._checked[number] = None
        self._arm(when, point, run, server=server, host=at_host)

    def _assertChecked(self, number):
        """The check armed at step ``number`` ran, and found nothing.

        Asked after the step that follows its arming: the harness also
        takes a check that runs in a later step (there, this is
        stronger).
        """
        self.assertIn(number, self._checked,
                      'the check of step %d never ran' % number)
        found = self._checked.pop(number)
        if found is not None:
            raise found
'''


# The request helper, in a class whose scenarios send one at a point.
REQUEST_HELPERS = '''
    def _inject_request(self, when, point, action, name, server=None,
                        at_host=None):
        """Send the API request ``action`` for ``name`` there.

        ``name``: a server; a host or role for a compute service's
        delete. ``server``, ``at_host``: the passes that fire it
        (``_arm``).

        As a user whose request lands while the service is busy: the
        request is answered and what it casts is done (a delete: the
        server is gone; a live migration: taken by the source compute,
        queued in its live migration executor or run) before the
        interrupted method goes on.
        """
        def send(manager, passed):
            # A server's name; a service delete's host or role.
            server = self.servers.get(name)
            if action == 'delete':
                self._delete_server(server)
            elif action == 'abort_live_migration':
                migration = self._migrations_of(name)[-1]
                self.api.api_delete('/servers/%s/migrations/%s' % (
                    server['id'], migration['id']))
                # Handled by the source compute before the migration
                # goes on, as a compute that takes the cast at once.
                self._wait_for_instance_action_event(
                    server, 'live_migration_cancel',
                    'compute_live_migration_abort', 'Success')
            elif action == 'delete_service':
                # Of a host or a role (``_host``); the API's answer is
                # checked after the step (assertServiceDeletesRefused).
                host = self._host(name, manager, passed)
                service = self.admin_api.get_services(
                    binary='nova-compute', host=host)[0]
                try:
                    self.admin_api.api_delete(
                        '/os-services/%s' % service['id'])
                except client.OpenStackApiException as exc:
                    self._answers.append((host, exc.response.status_code))
                else:
                    self._answers.append((host, 204))
            elif action == 'live_migrate':
                self.api.post_server_action(server['id'], {
                    'os-migrateLive': {'host': None,
                                       'block_migration': 'auto'}})
                # Its earlier migrations are over: the new one is taken
                # once in one of these (queued while the executor's
                # worker is busy, [DEFAULT] max_concurrent_live_migrations).
                self._wait_for_migration_status(
                    server, ['queued', 'preparing', 'running'])
        self._arm(when, point, send, server=server, host=at_host)
'''

# The task helper, in a class whose scenarios wait for the end of a
# compute's task (a live migration whose server was deleted in it).
TASK_HELPERS = '''
    def _wait_for_tasks_of(self, name):
        """Until no compute has a task in progress for server ``name``.

        Nova's computes record the work they spawn (a build, a live
        migration) until it ends, for their graceful shutdown
        (Manager._in_progress_tasks, since Nova 33); the condition is
        notified as a compute's last task ends.
        """
        uuid = self.servers[name]['id']
        for host, compute in sorted(self.computes.items()):
            manager = compute.manager

            def ended():
                return not any(
                    task['instance_uuid'] == uuid
                    for task in manager._in_progress_tasks.values())

            with manager._in_progress_task_cond:
                self.assertTrue(
                    manager._in_progress_task_cond.wait_for(
                        ended, timeout=60),
                    'a task of %s on %s never ended' % (name, host))
'''

# The answers' helper, in a class whose scenarios delete a compute
# service at a point, the API to refuse it.
ANSWER_HELPERS = '''
    def assertServiceDeletesRefused(self):
        """Each compute service delete sent at a point so far: a 409.

        Nova refuses it while the host has instances or migrations in
        progress. Checked after each step, so that another answer fails
        the step in which it was sent.
        """
        answers, self._answers = self._answers, []
        for host, status in answers:
            self.assertEqual(409, status, 'the delete of the compute '
                             'service of %s' % host)
'''

# The death helpers, in a class whose scenarios kill a compute at a
# point: Nova's tests stop the service's RPC servers there.
DEATH_HELPERS = '''
    class _ComputeDied(BaseException):
        """The compute on ``host`` died: the work it was doing ends here.

        A ``BaseException``, so that Nova's ``except Exception`` clean-up
        does not run (the process is gone) and its RPC server sends no
        reply.
        """

        def __init__(self, host):
            super().__init__('nova-compute on %s died' % host)
            self.host = host

    def _inject_death(self, when, point, host, at_host=None):
        """The compute on ``host`` dies there, as a killed process.

        At the next pass (on the host ``at_host``, if given: ``_arm``).

        It takes no more messages (its RPC servers stop; what is cast to
        it waits on the bus for its start) and its timers stop. When it
        is the compute passing the point, its work there ends with it:
        ``_ComputeDied`` is no ``Exception``, so Nova's clean-up
        handlers do not run, as in a process that is gone.
        """
        self._deaths[host] = threading.Event()

        def die(manager, passed):
            service = self.computes[host]
            for server in (service.rpcserver,
                           getattr(service, 'rpcserver_alt', None)):
                if server is not None:
                    server.stop()
            self._unschedule(host)
            # Dead now: the test goes on (its clock without this host).
            self._deaths[host].set()
            if manager is service.manager:
                raise self._ComputeDied(host)
        self._arm(when, point, die, host=at_host)

    def _wait_for_death(self, host):
        """Until the compute on ``host`` has died at its point."""
        self.assertTrue(self._deaths[host].wait(timeout=60),
                        'the compute on %s never passed its point' % host)
'''

# The fault helper, in a class whose scenarios arm faults: Nova's tests
# patch the driver's method (mock.patch.object with a side effect).
FAULT_HELPERS = '''
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
'''

# The fault helper, in a class whose scenarios expect faults: the
# instance faults Nova recorded, read from every cell's database.
FAULT_KEY_HELPERS = '''
    def assertFault(self, name, **expected):
        """The server's latest instance fault: the fields named, or none.

        As Nova recorded it (add_instance_fault_from_exc), in whichever
        cell holds the server (cell0 for one no host took): 'message'
        and 'exception' (the class its traceback ends with, alone or
        with its module) are shell patterns; 'code' and 'host' exact.
        No field named: the server has no fault.
        """
        found = []
        faults = objects.InstanceFaultList
        for cell in objects.CellMappingList.get_all(self.context):
            with context.target_cell(self.context, cell) as cctxt:
                found.extend(faults.get_latest_by_instance_uuids(
                    cctxt, [self.servers[name]['id']]))
        if not expected:
            self.assertEqual([], [fault.message for fault in found],
                             'the fault of %s' % name)
            return
        self.assertNotEqual([], found, 'the fault of %s: none' % name)
        fault = max(found, key=lambda fault: (fault.created_at, fault.id))
        lines = [line for line in (fault.details or '').splitlines()
                 if line.strip()]
        match = re.match(r'^([A-Za-z_][\\w.]*)(?::|$)',
                         lines[-1] if lines else ' ')
        exception = match.group(1) if match else None
        for key, want in sorted(expected.items()):
            if key == 'message':
                self.assertTrue(fnmatch.fnmatchcase(fault.message, want),
                                'the fault of %s: message %r is not %r'
                                % (name, fault.message, want))
            elif key == 'exception':
                self.assertTrue(
                    exception is not None and (
                        fnmatch.fnmatchcase(exception, want) or
                        fnmatch.fnmatchcase(exception.rsplit('.')[-1],
                                            want)),
                    'the fault of %s: exception %r is not %r'
                    % (name, exception, want))
            else:
                self.assertEqual(want, getattr(fault, key),
                                 'the fault of %s: %s' % (name, key))
'''

# The device providers' helper, in a class whose scenarios expect them:
# Placement's view of the host's devices, as Nova's PCI in Placement
# tests read it (PlacementPCIReportingTests.assert_placement_pci_view).
DEVICE_PROVIDER_HELPERS = '''
    def assertDeviceProviders(self, host, expected):
        """The host's device providers in Placement, the keys named.

        Its PCI devices' (<host>_<PCI address>) and its GPUs' providers
        (<host>_pci_<domain>_<bus>_<slot>_<function>), by PCI address in
        lower case: exactly those ``expected`` names; of each, 'class'
        (its one resource class), 'total' and 'reserved' (its
        inventory), 'used' (its usage) and 'traits', less those Nova
        puts on every device provider (COMPUTE_MANAGED_PCI_DEVICE, and
        OWNER_NOVA from Nova 34).
        """
        root = self._providers()[host]
        found = {}
        for rp in self._get_all_providers():
            name = rp['name'][len(host) + 1:]
            if (rp['root_provider_uuid'] != root or rp['uuid'] == root or
                    not rp['name'].startswith(host + '_')):
                continue
            if re.match(r'^[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}\\.[0-7]$',
                        name):
                address = name.lower()
            elif re.match(r'^pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}_'
                          r'[0-7]$', name):
                address = '%s:%s:%s.%s' % tuple(name.split('_')[1:])
            else:
                continue
            inventory = self._get_provider_inventory(rp['uuid'])
            classes = sorted(inventory)
            found[address] = {
                'class': classes[0] if len(classes) == 1 else classes,
                'total': sum(inv['total'] for inv in inventory.values()),
                'reserved': sum(inv['reserved']
                                for inv in inventory.values()),
                'used': sum(self._get_provider_usages(rp['uuid']).values()),
                'traits': sorted(
                    set(self._get_provider_traits(rp['uuid'])) -
                    {'COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'}),
            }
        self.assertEqual(sorted(expected), sorted(found),
                         'the device providers of %s' % host)
        for address, want in sorted(expected.items()):
            self.assertEqual(
                want, {key: found[address][key] for key in want},
                'the device provider %s of %s' % (address, host))
'''

# The network fault helper, in a class whose scenarios arm one: Nova's
# tests patch the Neutron fixture's method (as its test of LP#1862633
# patches update_port).
NETWORK_HELPERS = '''
    def _network_fault(self, call, times):
        """Neutron's next ``times`` answers to ``call`` are errors.

        ``call`` is a method of the Neutron fixture (update_port,
        activate_port_binding, ...); it raises as Neutron's client does
        on a 500 answer.
        """
        real = getattr(self.neutron, call)
        left = [times]

        def failing(*args, **kwargs):
            if left[0]:
                left[0] -= 1
                raise neutron_client_exc.NeutronClientException(
                    message='injected fault (%s) on the network service'
                    % call, status_code=500)
            return real(*args, **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            self.neutron, call, side_effect=failing))
        self._faults.append(('%s of the network service' % call, left,
                             times))
'''

# The port helper, in a class whose scenarios boot with a port of a
# kind: Nova's SR-IOV, vDPA and QoS tests register theirs with the
# Neutron fixture.
PORT_HELPERS = '''
    def _port(self, server, kind):
        """A port of its own for ``server``; its id.

        A copy of one of the Neutron fixture's ports, registered with
        it: 'direct', 'vdpa' or 'remote-managed', its ``sriov_port``
        (on network_2, a VLAN network on physnet2, added to the
        fixture) of that vnic type; 'bandwidth', its
        ``port_with_resource_request``. Its id and MAC are its own.
        """
        if kind == 'bandwidth':
            port = copy.deepcopy(self.neutron.port_with_resource_request)
            port['name'] = 'bandwidth-%s' % server
        else:
            network, subnet = self.neutron.network_2, self.neutron.subnet_2
            self.neutron._networks.setdefault(network['id'], network)
            self.neutron._subnets.setdefault(subnet['id'], subnet)
            port = copy.deepcopy(self.neutron.sriov_port)
            port['name'] = '%s-%s' % (
                'sriov' if kind == 'direct' else kind, server)
            port['binding:vnic_type'] = kind
            if kind != 'direct':
                # OVS-bound, as Nova's VDPAServersTest and
                # RemoteManagedServersTest make theirs.
                port.update({'binding:vif_type': 'ovs',
                             'binding:vif_details': {}})
        port['id'] = uuidutils.generate_uuid()
        port['mac_address'] = '52:54:00:%s:%s:%s' % (
            port['id'][0:2], port['id'][2:4], port['id'][4:6])
        self.neutron._ports[port['id']] = port
        return port['id']
'''

# The Placement fault helper, in a class whose scenarios arm one: Nova's
# tests patch the report client's request (SchedulerReportClient.put
# answering a FakeResponse, or raising keystoneauth's errors).
PLACEMENT_HELPERS = '''
    def _placement_fault(self, request, status, times):
        """Placement answers the next ``times`` ``request``s with ``status``.

        ``request`` is 'METHOD /path', the path matched from its start
        (no query), ``*`` one path segment. 409: a generation conflict
        (Placement's 'placement.concurrent_update' code); 500; 'timeout':
        no answer, the read times out (keystoneauth's ConnectTimeout);
        'unreachable': no connection (its ConnectFailure). Every Nova
        service's report client meets it; its retries do not back off.
        """
        method, path = request.split(' ', 1)
        pattern = re.compile('^%s' % re.escape(path).replace(
            r'\\*', '[^/]+'))
        left = [times]

        def failing(real):
            def call(client, url, *args, **kwargs):
                if not (left[0] and pattern.match(url.split('?')[0])):
                    return real(client, url, *args, **kwargs)
                left[0] -= 1
                if status == 'timeout':
                    raise ks_exc.ConnectTimeout(
                        'injected fault: %s timed out' % request)
                if status == 'unreachable':
                    raise ks_exc.ConnectFailure(
                        'injected fault: %s unreachable' % request)
                code = ('placement.concurrent_update' if status == 409
                        else 'placement.undefined_code')
                return fake_requests.FakeResponse(
                    status, content=jsonutils.dumps({'errors': [{
                        'status': status, 'code': code,
                        'detail': 'injected fault: Placement %s on %s'
                        % (status, request)}]}),
                    headers={'Content-Type': 'application/json'})
            return call

        report = 'nova.scheduler.client.report'
        self.useFixture(fixtures.MonkeyPatch(
            '%s.SchedulerReportClient.%s' % (report, method.lower()),
            failing(getattr(report_client.SchedulerReportClient,
                            method.lower()))))
        # The report client's retries of a conflict wait up to 2, 4, 6 s
        # at random: no wait here.
        self.useFixture(fixtures.MonkeyPatch(
            '%s.time' % report, types.SimpleNamespace(
                time=time.time, sleep=lambda seconds: None)))
        self._faults.append(('Placement %s on %s' % (status, request),
                             left, times))
'''

# Where a scenario's steps arm faults: the test ends asserting each fired.
FIRED_FAULT_HELPERS = '''
    def assertFaultsFired(self):
        """Every fault a step armed failed a call: Nova made one.

        A fault Nova never met is a step that silently did nothing.
        """
        self.assertEqual([], sorted(what for what, left, times in self._faults
                                    if left[0] == times),
                         'faults Nova never met')
'''

# The helpers a class carries where a line of its test methods starts
# with their call (one of them), in this order.
_CALLED_HELPERS = (
    ('self.assertComputeNode(', NODE_HELPERS),
    ('self.assertHypervisors(', HYPERVISOR_HELPERS),
    ('self.assertActionEvent(', ACTION_HELPERS),
    ('self.assertFault(', FAULT_KEY_HELPERS),
    ('self.assertDeviceProviders(', DEVICE_PROVIDER_HELPERS),
    ('self._wait_for_tasks_of(', TASK_HELPERS),
    (('self._map_host(', 'self._flag_mapped('), MAPPING_HELPERS),
)

HEADER = '''\
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
'''


def export(path, bug=None, with_harness=False):
    """The source of a Nova regression test module for ``path``."""
    header, scenarios = scenario_mod.load_file(path)
    meta = header.get('bug') or {}
    bug = str(bug or meta.get('id') or '') or None
    # A bug whose fix cannot be put back (its file says why) gets no
    # HARNESS_REINTRODUCE lines: they could only raise.
    puts_back = bool(bug) and not (
        str(meta.get('id', '')) == bug and meta.get('no_reintroduction'))
    title = ' '.join(str(meta.get('title', '')).split())
    groups = _groups(path, scenarios, per_host=with_harness)
    names = method_names([scenario.name for scenario in scenarios])
    body = []
    for (hosts, group), name in zip(groups, _class_names(
            'TestBug%s' % bug if bug else 'TestScenarios', groups)):
        if body:
            body += ['', '']
        if hosts is None:
            body += _class(path, group, _driver(path, group), bug, title,
                           with_harness, name, methods=names,
                           puts_back=puts_back)
        else:
            body += _class(path, group, None, bug, title, with_harness,
                           name, hosts=hosts, methods=names,
                           puts_back=puts_back)
    injects = any('self._inject' in line for line in body)
    placement = any('self._placement_fault(' in line for line in body)
    wraps = (injects or placement
             or any('self._fault(' in line for line in body)
             or any('self._network_fault(' in line for line in body)
             or any('fixtures.Mock' in line for line in body)
             or any('fixtures.MonkeyPatch' in line for line in body))
    live = any('urllib.parse' in line for line in body)
    out = [HEADER, '"""%s"""' % _docstring(bug, title, path), '']
    stdlib = []
    if any('copy.deepcopy(' in line for line in body):
        stdlib += ['copy']
    if any('fnmatch.' in line for line in body):
        stdlib += ['fnmatch']
    if any("os.environ.get('HARNESS_REINTRODUCE')" in line
           for line in body):
        stdlib += ['os']
    if any('sys._getframe(' in line for line in body):
        stdlib += ['sys']
    if any('threading.' in line for line in body):
        stdlib += ['threading']
    if placement or any('re.match(' in line for line in body):
        stdlib += ['re']
    if placement:
        stdlib += ['time', 'types']
    if live:
        stdlib += ['urllib.parse']
    if stdlib:
        out += ['import %s' % name for name in sorted(stdlib)] + ['']
    if wraps:
        out += ['import fixtures']
    if placement:
        out += ['from keystoneauth1 import exceptions as ks_exc']
    if any('neutron_client_exc.' in line for line in body):
        out += ['from neutronclient.common import exceptions as '
                'neutron_client_exc']
    if any('lockutils.' in line for line in body):
        out += ['from oslo_concurrency import lockutils']
    out += ['from oslo_config import cfg']
    if placement:
        out += ['from oslo_serialization import jsonutils']
    if injects:
        out += ['from oslo_utils import importutils']
    out += ['from oslo_utils import timeutils']
    if any('uuidutils.' in line for line in body):
        out += ['from oslo_utils import uuidutils']
    out += ['']
    if any('compute_utils.' in line for line in body):
        out += ['from nova.compute import utils as compute_utils']
    out += ['from nova import context']
    if any('db_api.' in line for line in body):
        out += ['from nova.db.main import api as db_api']
    out += ['from nova import exception', 'from nova import objects']
    if any('host_mapping.' in line for line in body):
        out += ['from nova.objects import host_mapping']
    if any('report_client.' in line for line in body):
        out += ['from nova.scheduler.client import report as report_client']
    if any('nova_fixtures.' in line for line in body):
        out += ['from nova.tests import fixtures as nova_fixtures']
    if any('fakelibvirt.' in line for line in body):
        out += ['from nova.tests.fixtures import libvirt as fakelibvirt']
    if any('client.OpenStackApiException' in line for line in body):
        out += ['from nova.tests.functional.api import client']
    if any('integrated_helpers.' in line for line in body):
        out += ['from nova.tests.functional import integrated_helpers']
    if any('base.ServersTestBase' in line for line in body):
        out += ['from nova.tests.functional.libvirt import base']
    if placement:
        out += ['from nova.tests.unit import fake_requests']
    if any('fake_driver.' in line for line in body):
        out += ['from nova.virt import fake as fake_driver']
    if any('vconfig.' in line for line in body):
        out += ['from nova.virt.libvirt import config as vconfig']
    if any('libvirt_utils.' in line for line in body):
        out += ['from nova.virt.libvirt import utils as libvirt_utils']
    harness = []
    if any('harness.PerHostConfig(' in line for line in body):
        harness += ['import harness']
    if any('bugs.get(' in line for line in body):
        harness += ['from harness import bugs']
    if harness:
        out += [''] + harness
    out += ['', 'CONF = cfg.CONF', '', '']
    out += body
    return layout.fit('\n'.join(out).rstrip('\n') + '\n')


def _groups(path, scenarios, per_host=False):
    """``[(hosts, scenarios)]``: one test class each.

    A class has one compute driver (Nova's fake, or libvirt for profiled
    hosts: then ``hosts`` is their ``libvirt.Hosts``, else None) and one
    setUp: the scenarios of another config, other weights or other
    limits make another class. ``per_host``: profiled hosts may each have
    their own options (``libvirt.Hosts``).
    """
    keys, groups = [], {}
    for scenario in scenarios:
        try:
            profiled = libvirt.profiled(scenario)
        except libvirt.Unsupported as exc:
            raise refusal.Refused(path, scenario.name, 'hosts', str(exc))
        key = (profiled, repr(sorted(scenario.config.items())),
               repr(sorted(scenario.weights.items())),
               repr(sorted(scenario.limits.items())))
        if key not in groups:
            keys.append(key)
            groups[key] = []
        groups[key].append(scenario)
    found = []
    for key in keys:
        group, hosts = groups[key], None
        if key[0]:
            for number in range(len(group)):
                try:
                    hosts = libvirt.Hosts(group[:number + 1],
                                          per_host=per_host)
                except libvirt.Unsupported as exc:
                    raise refusal.Refused(path, group[number].name,
                                          'hosts', str(exc))
        found.append((hosts, group))
    return found


def _class_names(base, groups):
    """A name for each group's class: ``base``, then told apart."""
    kinds = {hosts is None for hosts, _ in groups}
    names, seen = [], {}
    for hosts, _ in groups:
        name = base + ('Libvirt' if hosts is not None and len(kinds) > 1
                       else '')
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else '%s%d' % (
            name, seen[name]))
    return names


def _docstring(bug, title, path):
    what = 'Regression test for bug %s.' % bug if bug else 'Scenarios.'
    body = ['', textwrap.fill(title + '.', 79)] if title else []
    path = re.sub(r'.*/((harness|findings|tests)/)', r'\1', path)
    origin = textwrap.fill(
        'Exported from the nova-harness scenario file %s.' % path, 79,
        break_long_words=False, break_on_hyphens=False)
    if max(len(line) for line in origin.splitlines()) > 79:
        # A file name too long for a line with its directory.
        folder, name = os.path.split(path)
        origin = ('Exported from the nova-harness scenario file in %s/:\n%s'
                  % (folder, name))
    return '\n'.join([what] + body + ['', origin, ''])


#: assertTrackers' reserved amounts, the test's config for every host.
_RESERVED = '''\
        reserved = {
            'vcpus_used': CONF.reserved_host_cpus,
            'memory_mb_used': CONF.reserved_host_memory_mb,
            'local_gb_used': compute_utils.convert_mb_to_ceil_gb(
                CONF.reserved_host_disk_mb),
        }
        for host in sorted(set(self.computes) - set(skip)):'''

#: The same, each host's own where it has them (PerHostConfig).
_RESERVED_BY_HOST = '''\
        for host in sorted(set(self.computes) - set(skip)):
            # As the host's compute reads them: its own, else the test's.
            reserved = {
                'vcpus_used': CONF.reserved_host_cpus,
                'memory_mb_used': self.host_config.get(
                    host, 'reserved_host_memory_mb'),
                'local_gb_used': compute_utils.convert_mb_to_ceil_gb(
                    self.host_config.get(host, 'reserved_host_disk_mb')),
            }'''


def _by_host_reserved(lines):
    """The class's ``lines``, assertTrackers reading each host's own."""
    text = '\n'.join(lines)
    if _RESERVED not in text:
        # A bug of ours: the helper changed, this did not.
        raise RuntimeError('assertTrackers changed: update _RESERVED')
    return text.replace(_RESERVED, _RESERVED_BY_HOST).split('\n')


def _failing_method(driver):
    """The driver method a ``fail:`` host's driver fails in, or None."""
    for method in names.FAULT_METHODS:
        if driver == names.fault_driver_name(method):
            return method
    return None


def _driver(path, scenarios):
    drivers = set()
    for scenario in scenarios:
        for host in scenario.hosts.values():
            if _failing_method(host.driver):
                # Nova's fake driver, its method failing on that host
                # (as Nova's tests patch FakeDriver's methods).
                if any(step.kind == 'start_compute'
                       and step.args['host'] == host.name
                       for step in scenario.steps):
                    raise refusal.Refused(
                        path, scenario.name, 'host %r' % host.name,
                        'a failing driver (fail:) started again')
                drivers.add(names.DRIVERS['fake'])
                continue
            if host.profile:
                raise refusal.Refused(
                    path, scenario.name, 'host %r' % host.name,
                    'a profiled host (libvirt over fakelibvirt) is not '
                    'translated yet')
            if host.nodes is not None:
                # The harness's driver of several nodes is Nova's
                # MediumFakeDriver listing them (nodes.py).
                try:
                    nodes.check_host(host)
                except nodes.Unsupported as exc:
                    raise refusal.Refused(path, scenario.name,
                                          'host %r' % host.name, str(exc))
                drivers.add(names.DRIVERS['fake'])
                continue
            if not (host.driver or '').startswith('fake.'):
                raise refusal.Refused(
                    path, scenario.name, 'host %r' % host.name,
                    'driver %r is not one of Nova\'s fake drivers'
                    % host.driver)
            drivers.add(host.driver)
    if len(drivers) != 1:
        raise refusal.Refused(path, '*', 'hosts', 'the scenarios use '
                              'drivers %s; one test class has one'
                              % sorted(drivers))
    return drivers.pop()


def _class(path, scenarios, driver, bug, title, with_harness, name,
           hosts=None, methods=None, puts_back=True):
    """One test class: Nova's fake ``driver``, or profiled ``hosts``.

    ``methods``: scenario name -> its test method's name; ``puts_back``:
    whether ``bug``'s fix can be put back (``with_harness``: its
    reintroduction fixture under ``HARNESS_REINTRODUCE``).
    """
    config = scenarios[0].config
    for scenario in scenarios:
        _check_scenario(path, scenario, config, scenarios[0].weights,
                        hosts is not None)
    names = methods or {}
    methods = [line for scenario in scenarios
               for line in _method(path, scenario, hosts,
                                   names.get(scenario.name),
                                   hosts is None
                                   and nodes.multi_node(scenarios))]
    lines = ['class %s(%s):' % (
        name, 'integrated_helpers.ProviderUsageBaseTestCase'
        if hosts is None else 'base.ServersTestBase')]
    if title:
        text = textwrap.wrap(title.replace('"""', "'''") + '.', 68)
        lines += ['    """%s' % ('Bug %s.' % bug if bug else 'Scenarios.'),
                  ''] + ['    %s' % line for line in text] + ['    """', '']
    if hosts is None:
        lines += ["    compute_driver = %r" % driver, '']
    else:
        filters = config.get('filter_scheduler', {}).get(
            'enabled_filters')
        lines += [
            '    # As the harness runs it: the API at its latest '
            'microversion, as',
            '    # admin; the scheduler fits NUMA topologies and PCI '
            'requests.',
            '    ADMIN_API = True',
            "    microversion = 'latest'",
            '    # Casts as RPC casts (ProviderUsageBaseTestCase\'s too): a '
            'failure',
            '    # stays with the service that got it, not handed back to '
            'the API.',
            '    CAST_AS_CALL = False',
            '    ADDITIONAL_FILTERS = %r' % [
                name for name in ('NUMATopologyFilter',
                                  'PciPassthroughFilter')
                if name not in (filters or ())], '']
    lines += ['    def setUp(self):']
    flags = []
    for group, options in sorted(config.items()):
        for option, value in sorted(options.items()):
            flags += libvirt.flags_lines(group, option, value)
    if hosts is not None:
        # Before the services start, which read them (as ServersTestBase
        # sets its instances_path).
        lines += flags
        flags = []
    if scenarios[0].weights:
        # The scheduler loads its weighers when it starts (in the base
        # class's setUp): the weights go first.
        lines += ['        self.useFixture(nova_fixtures.'
                  'HostNameWeigherFixture(',
                  '            %r))'
                  % dict(sorted(scenarios[0].weights.items()))]
    lines += ['        super().setUp()']
    per_host = any('self.host_config.' in line for line in methods)
    if per_host:
        lines += [
            "        # Each compute's own host-local options, as each has "
            "its own",
            "        # nova.conf in a deployment: Nova's test config is one "
            "per",
            "        # process, so the harness answers the modules that "
            "read them",
            "        # for a compute with that compute's values.",
            '        self.host_config = self.useFixture('
            'harness.PerHostConfig())']
    if with_harness and bug and puts_back:
        lines += ["        # HARNESS_REINTRODUCE=1: the bug put back into "
                  "Nova.",
                  "        if os.environ.get('HARNESS_REINTRODUCE'):",
                  '            self.useFixture(bugs.get(%r).reintroduce())'
                  % bug]
    lines += flags
    if scenarios[0].limits:
        # Keystone's unified limits: registered limits, every project's
        # default, in Keystone's place (as the harness registers them).
        lines += (['        registered = {'] + [
            '            %r: %r,' % item
            for item in sorted(scenarios[0].limits.items())] + [
            '        }',
            '        limits = self.useFixture('
            'nova_fixtures.UnifiedLimitsFixture())',
            '        for name, limit in sorted(registered.items()):',
            '            limits.create_registered_limit(',
            '                resource_name=name, default_limit=limit)'])
    if hosts is not None:
        lines += libvirt.setup_lines(hosts, any(
            step.kind == 'live_migrate' for scenario in scenarios
            for step in scenario.steps))
    lines += ['        self.context = context.get_admin_context()']
    if hosts is None:
        lines += ['        self.computes = {}']
    lines += ['        self.flavors = {}',
              '        self.servers = {}',
              '        # Seconds the test moved time on (_advance_clock).',
              '        self._now = 0',
              '        self._due = {}']
    if hosts is None and nodes.multi_node(scenarios):
        lines += nodes.SETUP.split('\n')
        lines += _without(nodes.by_node(HELPERS), nodes.REPLACED)
        lines += nodes.HELPERS.rstrip('\n').split('\n')
    else:
        lines += HELPERS.rstrip('\n').split('\n')
    if per_host:
        lines = _by_host_reserved(lines)
    if any(scenario.images for scenario in scenarios):
        lines[lines.index('        self.servers = {}') + 1:0] = [
            '        self.images = {}']
        lines += IMAGE_HELPERS.rstrip('\n').split('\n')
    if any('self._wait_for_event_end(' in line for line in methods):
        lines += step_units.EVENT_END_HELPER.rstrip('\n').split('\n')
    if any((step.kind == 'inject'
            and step.args.get('point') != nodes.NODE_CHECK)
           or (step.kind == 'fault' and step.args.get('at'))
           for scenario in scenarios for step in scenario.steps):
        lines[lines.index('        self._due = {}') + 1:0] = [
            '        # Injections armed: (when, point) -> [action].',
            '        self._injections = {}',
            '        self._wrapped = set()']
        lines += INJECTION_HELPERS.rstrip('\n').split('\n')
    injects = [step for scenario in scenarios for step in scenario.steps
               if step.kind == 'inject']
    if any(step.args['point'].startswith('tracker.') for step in injects):
        entry = lines.index("        'scheduler': 'nova.scheduler.client."
                            "query.SchedulerQueryClient',")
        lines[entry + 1:entry + 1] = [
            "        # The resource tracker's step: before it takes the "
            "tracker's",
            '        # lock, after it frees it.',
            "        'tracker': 'nova.compute.resource_tracker."
            "ResourceTracker',"]
    if any(step.args.get('check') for step in injects):
        lines[lines.index('        self._wrapped = set()') + 1:0] = [
            '        # Step number -> what its check found (None: nothing).',
            '        self._checked = {}']
        lines += CHECK_HELPERS.rstrip('\n').split('\n')
    if any(step.args.get('do') for step in injects):
        lines += REQUEST_HELPERS.rstrip('\n').split('\n')
    if any(tuple(step.args.get('do') or ())[:1] == ('delete_service',)
           for step in injects):
        lines[lines.index('        self._wrapped = set()') + 1:0] = [
            '        # Answers to service deletes sent at a point.',
            '        self._answers = []']
        lines += ANSWER_HELPERS.rstrip('\n').split('\n')
    if any(step.args.get('stop') for step in injects):
        lines[lines.index('        self._wrapped = set()') + 1:0] = [
            '        # Host -> its death at a point (_inject_death).',
            '        self._deaths = {}']
        lines += DEATH_HELPERS.rstrip('\n').split('\n')
    kinds = {step_units.point_kind(step.args['point']) for step in injects}
    if kinds - {'method'}:
        at_records = [step for step in injects if step_units.point_kind(
            step.args['point']) == 'record']
        lines = _changes_armed(
            lines, kinds, any(step.args.get('run') for step in at_records),
            any(step.args.get('do') for step in at_records))
    compute_faults = any(
        step.kind == 'fault' and not step.args.get('placement')
        and not step.args.get('network')
        for scenario in scenarios for step in scenario.steps) or any(
            _failing_method(host.driver) for scenario in scenarios
            for host in scenario.hosts.values())
    placement_faults = any(
        step.kind == 'fault' and step.args.get('placement')
        for scenario in scenarios for step in scenario.steps)
    network_faults = any(
        step.kind == 'fault' and step.args.get('network')
        for scenario in scenarios for step in scenario.steps)
    if compute_faults:
        lines += FAULT_HELPERS.rstrip('\n').split('\n')
    if placement_faults:
        lines += PLACEMENT_HELPERS.rstrip('\n').split('\n')
    if network_faults:
        lines += NETWORK_HELPERS.rstrip('\n').split('\n')
    if compute_faults or placement_faults or network_faults:
        lines[lines.index('        self._due = {}') + 1:0] = [
            '        # Fault steps armed: (what, [calls left], times).',
            '        self._faults = []']
        lines += FIRED_FAULT_HELPERS.rstrip('\n').split('\n')
    if any('self._port(' in line for line in methods):
        lines += PORT_HELPERS.rstrip('\n').split('\n')
    if any('logs' in step.expect for scenario in scenarios
           for step in scenario.steps):
        lines += LOG_HELPERS.rstrip('\n').split('\n')
    for call, helpers in _CALLED_HELPERS:
        if any(line.lstrip().startswith(call) for line in methods):
            lines += helpers.rstrip('\n').split('\n')
    if hosts is not None:
        if hosts.widens_online_cpus():
            lines += libvirt.WIDE_CONNECTION.rstrip('\n').split('\n')
        lines += libvirt.HELPERS.rstrip('\n').split('\n')
        for profile_name in sorted(hosts.profiles):
            lines += libvirt.host_info_method(hosts.profiles[profile_name])
    return lines + methods


def _without(helpers, methods):
    """The lines of ``helpers`` with the ``methods`` named left out."""
    lines = helpers.rstrip('\n').split('\n')
    kept, skipping = [], False
    for line in lines:
        match = re.match(r'    def (\w+)\(', line)
        if match:
            skipping = match.group(1) in methods
        if not skipping:
            kept.append(line)
    return kept


def _expectations(path, scenario, where, expect):
    """The assertions of ``expect`` (a step's, or a check's)."""
    body = []
    for key, value in expect.items():
        check = expect_units.get(key)
        if check is None:
            raise refusal.Refused(path, scenario.name, '%s: %s'
                                  % (where, key), 'expectation key %r' % key)
        try:
            body += check(value, scenario)
        except expect_units.Unsupported as exc:
            raise refusal.Refused(path, scenario.name, '%s: %s'
                                  % (where, key), str(exc))
    return body


def _changes_armed(lines, kinds, periodic, request):
    """The class's ``lines``, arming at a record's change or a task.

    ``kinds``: the kinds of point armed (``steps.point_kind``); their
    wrappers' helpers are added, and ``_arm`` picks one by the point.

    ``periodic``, ``request``: a periodic, a delete is injected at a
    record's change, which may be made inside the tracker's lock: the
    periodic waits for the lock, the delete's end is waited for once
    the lock is free.
    """
    wrap = lines.index('            self._wrap_method(point)')
    branches = []
    if 'record' in kinds:
        branches += ["point.startswith(('instance.', 'migration.'))",
                     'self._wrap_save(point)']
        lines += RECORD_HELPERS.rstrip('\n').split('\n')
    if 'task' in kinds:
        branches += ["point.startswith('conductor.')",
                     'self._wrap_task(point)']
        lines += CONDUCTOR_TASK_HELPERS.rstrip('\n').split('\n')
    dispatch = []
    for number in range(0, len(branches), 2):
        dispatch += ['            %s %s:' % ('elif' if number else 'if',
                                             branches[number]),
                     '                ' + branches[number + 1]]
    # A compute's method, or the scheduler's.
    dispatch += ['            else:',
                 '                self._wrap_method(point)']
    lines[wrap:wrap + 1] = dispatch
    if periodic or request:
        lines += LOCK_HELPERS.rstrip('\n').split('\n')
    if request:
        send = lines.index('                self._delete_server(server)')
        lines[send:send + 1] = [
            '                # Sent; done once the compute\'s '
            'terminate_instance is,',
            '                # which waits for the tracker\'s lock where '
            'the point',
            '                # holds it: then, once this thread frees it.',
            "                self.api.delete_server(server['id'])",
            '                self._after_tracker_lock(',
            '                    lambda: self._wait_for_instance_action_'
            'event(',
            "                        server, 'delete', "
            "'compute_terminate_instance',",
            "                        'Success'))"]
    if periodic:
        call = lines.index('            getattr(self.computes[host].manager, '
                           'task)(self.context)')
        lines[call:call + 1] = [
            '            periodic = getattr(self.computes[host].manager, '
            'task)',
            '            self._after_tracker_lock(lambda: '
            'periodic(self.context))']
    return lines


def _check_scenario(path, scenario, config, weights, profiled=False):
    if scenario.config != config:
        raise refusal.Refused(path, scenario.name, 'config', 'differs '
                              'from the first scenario\'s; one test '
                              'class has one setUp')
    if scenario.weights != weights:
        raise refusal.Refused(path, scenario.name, 'weights', 'differ '
                              'from the first scenario\'s; one test '
                              'class has one setUp')
    offload = scenario.config.get('DEFAULT', {}).get('shelved_offload_time')
    if offload not in (None, 0) and any(
            step.kind == 'shelve' for step in scenario.steps):
        raise refusal.Refused(path, scenario.name, 'config', 'a shelve '
                              'with shelved_offload_time %r (the '
                              'translation waits for the offload)'
                              % offload)
    if scenario.expected_breaks:
        raise refusal.Refused(path, scenario.name, 'expected_breaks',
                              'the harness\'s invariants are not exported')
    try:
        nodes.check_steps(scenario)
    except nodes.Unsupported as exc:
        raise refusal.Refused(path, scenario.name, *exc.args)
    for flavor in scenario.flavors.values():
        if flavor.extra_specs and not profiled:
            raise refusal.Refused(path, scenario.name, 'flavor %r'
                                  % flavor.name, 'extra specs need a '
                                  'libvirt host')


def _world(scenario, hosts=None, by_node=False):
    """The scenario's hosts and flavors, made at the test's start."""
    if by_node:
        lines = nodes.world_lines(scenario)
    elif hosts is None:
        lines = [INDENT + 'for host in %r:' % sorted(scenario.hosts),
                 INDENT + '    self.computes[host] = '
                 'self._start_compute(host)',
                 INDENT + '    self._schedule(host)']
    else:
        lines = libvirt.option_lines(hosts.options[scenario.name])
        own = hosts.own[scenario.name]
        for host in sorted(scenario.hosts.values(), key=lambda h: h.name):
            profile = profiles.load_profile(host.profile)
            if host.name in own:
                lines += libvirt.own_lines(host.name, own[host.name])
            lines += libvirt.start_lines(host.name, profile, INDENT)
            lines.append(INDENT + 'self._schedule(%r)' % host.name)
    for host in sorted(scenario.hosts.values(), key=lambda h: h.name):
        method = _failing_method(host.driver)
        if method:
            lines.append(INDENT + 'self._fault(%r, %r, None)'
                         % (host.name, method))
    for name, image in sorted(scenario.images.items()):
        lines += [INDENT + 'self.images[%r] = self._create_image(' % name,
                  INDENT + '    %r, %r)' % (name, dict(sorted(
                      image.items())))]
    for flavor in sorted(scenario.flavors.values(), key=lambda f: f.name):
        lines += [
            INDENT + 'self.flavors[%r] = self._create_flavor(' % flavor.name,
            INDENT + '    name=%r, vcpu=%d, memory_mb=%d, disk=%d,'
            % (flavor.name, flavor.vcpus, flavor.ram, flavor.disk),
            INDENT + '    ephemeral=%d, swap=%d%s'
            % (flavor.ephemeral, flavor.swap,
               ',' if flavor.extra_specs else ')')]
        if flavor.extra_specs:
            lines.append(INDENT + '    extra_spec=%r)'
                         % dict(sorted(flavor.extra_specs.items())))
    return lines


#: The longest test method name a ``def`` line of 79 columns holds.
METHOD_NAME = layout.WIDTH - len('    def (self):')


def method_names(scenario_names):
    """Scenario name -> the name of the test method it is exported as.

    Its words, as many as a ``def`` line holds (the whole name is the
    method's docstring); where two would then share a name, the words
    that tell them apart at their ends are kept, those before them cut.
    """
    words = {name: ['test'] + re.sub(r'[^a-z0-9]+', '_', name.lower(
    )).strip('_').split('_') for name in scenario_names}
    first = {name: _cut(parts, []) for name, parts in words.items()}
    found = dict(first)
    for name, method in first.items():
        same = [other for other in scenario_names
                if first[other] == method and other != name]
        if not same:
            continue
        ends = 1
        while ends < len(words[name]) and any(
                words[name][-ends:] == words[other][-ends:]
                for other in same):
            ends += 1
        found[name] = _cut(words[name][:-ends], words[name][-ends:])
    return found


def _cut(head, tail):
    """``head + tail`` joined, words of ``head`` dropped to fit a line."""
    head = list(head)
    while head and len('_'.join(head + tail)) > METHOD_NAME:
        head.pop()
    return '_'.join(head + tail)


def _method(path, scenario, hosts=None, name=None, by_node=False):
    text = scenario.name.replace('"""', "'''")
    name = name or method_names([scenario.name])[scenario.name]
    lines = ['', '    def %s(self):' % name]
    if len(INDENT + '""""""' + text) <= layout.WIDTH:
        lines.append(INDENT + '"""%s"""' % text)
    else:
        lines += textwrap.wrap(text, layout.WIDTH - len(INDENT) - 3,
                               initial_indent=INDENT + '"""',
                               subsequent_indent=INDENT,
                               break_long_words=False,
                               break_on_hyphens=False) + [INDENT + '"""']
    lines += _world(scenario, hosts, by_node)
    if hosts is not None:
        options = libvirt.Options(
            scenario, hosts.options[scenario.name],
            own=hosts.own[scenario.name] if hosts.per_host else None)
    # Hosts whose service a step deleted, since their compute's start.
    deleted = set()
    # The steps whose check (an inject's) the next step reports.
    checks = []
    # Hosts whose compute a step stopped, not started since.
    stopped = set()
    # Host -> servers whose confirm waits on its bus (stopped).
    held = {}
    # A service delete armed for the next step (inject ... do:
    # delete_service): sent in it.
    sending = False
    for step in scenario.steps:
        what = 'step %d (%s)' % (step.index, step.kind)
        unit = step_units.get(step.kind, libvirt=hosts is not None)
        if hosts is not None and step.kind in nodes.STEPS:
            # Its helpers are those of Nova's fake driver.
            unit = None
        if step.kind == 'inject' and step.args.get('check'):
            unit = functools.partial(
                step_units.inject_check, number=step.index,
                lines=_expectations(path, scenario, what + ': check',
                                    step.args['check']))
            checks.append(step.index)
        if unit is None:
            raise refusal.Refused(path, scenario.name, what,
                                  'step kind %r' % step.kind)
        dead = [inject.args['host'] or inject.args['stop']
                for inject in getattr(step, 'interjected', ())
                if inject.args.get('stop')]
        deletes = [inject.args['point']
                   for inject in getattr(step, 'interjected', ())
                   if tuple(inject.args.get('do') or ()) == (
                       'delete', step.args.get('server'))]
        if step.error is not None and dead:
            # A compute dies in it (an inject's stop).
            unit = functools.partial(step_units.dying, step.kind,
                                     error=step.error, host=dead[-1])
        elif step.error is not None and deletes:
            # Its server deleted in it (an inject's do).
            unit = functools.partial(step_units.gone, step.kind,
                                     error=step.error, point=deletes[-1])
        elif step.error is not None:
            unit = step_units.get_failing(step.kind)
            if unit is None:
                raise refusal.Refused(path, scenario.name, what + ': error',
                                      'a step expected to fail')
            unit = functools.partial(unit, error=step.error,
                                     expect=step.expect)
            if step.kind == 'confirm' and stopped:
                unit = functools.partial(unit, stopped=sorted(stopped))
                if step_units.confirm_held(step.args, step.error,
                                           step.expect, stopped):
                    held.setdefault(min(stopped), []).append(
                        step.args['server'])
        try:
            if step.kind == 'start_compute' and step.error is None:
                host = step.args['host']
                unit = functools.partial(unit, mapping=step.args.get(
                    'mapped', True) if host in deleted else None)
                deleted.discard(host)
            if (hosts is not None and step.kind == 'start_compute'
                    and step.error is None):
                # What the start reads set first; a machine booted
                # afresh is its profile's fake libvirt again.
                unit = functools.partial(
                    unit, flags=options.start(host, step.args.get('config')),
                    fresh=libvirt.connection_items(profiles.load_profile(
                        scenario.hosts[host].profile)))
            if step.kind == 'delete_service' and step.error is None:
                deleted.add(step.args['host'])
            if step.kind == 'stop_compute' and step.error is None:
                stopped.add(step.args['host'])
            elif step.kind == 'start_compute' and step.error is None:
                stopped.discard(step.args['host'])
            if (step.kind == 'inject'
                    and step.args.get('point') == nodes.NODE_CHECK):
                unit = nodes.inject_at_node_check
            body = unit(step.args)
            if step.kind == 'start_compute' and step.error is None:
                for server in held.pop(step.args['host'], ()):
                    body += step_units.held_confirm_ends(server)
        except step_units.Unsupported as exc:
            raise refusal.Refused(path, scenario.name, what, str(exc))
        if step.kind == 'inject':
            sending = sending or tuple(
                step.args.get('do') or ())[:1] == ('delete_service',)
        refused_here, sending = (sending and step.kind != 'inject',
                                 sending and step.kind == 'inject')
        refused_here = refused_here and not any(
            '"""' in line or "'''" in line for line in body)
        if refused_here:
            # A service delete sent in this step: its answer is what the
            # step is about, even if the step's own waits then fail (the
            # host gone, the move never ends): said first, the wait's
            # failure chained to it.
            body = (['try:'] + ['    ' + line for line in body]
                    + ['finally:', '    self.assertServiceDeletesRefused()'])
        if step.kind != 'inject':
            # What the checks at the points it passed found.
            body += ['self._assertChecked(%d)' % number for number in checks]
            checks = []
        body += _expectations(path, scenario, what + ': expect',
                              step.expect)
        if 'logs' in step.expect:
            # Where the test's log stands: the step's records come after.
            body[:0] = ['log_mark = len(self.stdlog.logger.output)']
        if step.kind != 'inject' and not refused_here and any(
                tuple(earlier.args.get('do') or ())[:1] == (
                    'delete_service',) for earlier in scenario.steps
                if earlier.kind == 'inject' and earlier.index < step.index):
            body.append('self.assertServiceDeletesRefused()')
        lines.append('')
        lines.append(INDENT + '# %d. %s' % (step.index, step.label))
        lines += [INDENT + line for line in body]
    # After the last step, as the harness checks that what a run armed
    # fired.
    fired = []
    if any(step.kind == 'inject'
           and step.args.get('point') != nodes.NODE_CHECK
           for step in scenario.steps):
        fired.append('self.assertInjectionsFired()')
    if any(step.kind == 'fault' for step in scenario.steps):
        fired.append('self.assertFaultsFired()')
    if any(nodes.arms_node_check(step) for step in scenario.steps):
        fired.append('self.assertNodeChecksFired()')
    if fired:
        lines += [''] + [INDENT + line for line in fired]
    return lines
