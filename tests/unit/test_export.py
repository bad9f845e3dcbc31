"""``harness export nova-test``: each translation, each refusal (no Nova).

The exported source is compiled and read back: each step kind's unit
must call the ``integrated_helpers`` helper that does what the step does,
each expectation key's unit must assert the values the scenario expects.
Whether the exported test passes on Nova and fails with the bug put back
is proved by ``tests/functional/test_export_proofs.py``.
"""

import ast
import io
import os

import fixtures

from harness.export import expect as expect_units
from harness.export import nova_test
from harness.export import refusal
from harness.export import steps as step_units
from harness.runners import cli
from harness import testing

HEAD = '''\
bug: {id: 1, title: a test bug, fix: abc, story: s}
scenarios:
  - name: the scenario
    hosts:
      src: {driver: fake}
      dst: {driver: fake}
    flavors:
      small: {vcpus: 1, ram: 512, disk: 1}
      large: {vcpus: 2, ram: 1024, disk: 1}
    steps:
'''

SMALL = "{'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}"


class ExportTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        # The units' own lines, as they write them: the layout that wraps
        # them to Nova's 79 columns, keeping the module's tree, is
        # test_export_layout's.
        self.useFixture(fixtures.MonkeyPatch(
            'harness.export.layout.fit', lambda source: source))

    def path(self, steps, head=HEAD):
        path = os.path.join(self.tmp, 'lp1.yaml')
        with open(path, 'w') as f:
            f.write(head + ''.join('      %s\n' % line
                                   for line in steps.splitlines()))
        return path

    def export(self, steps, head=HEAD, **kwargs):
        source = nova_test.export(self.path(steps, head), **kwargs)
        # The module compiles, and is one class on Nova's base.
        module = ast.parse(source)
        classes = [n for n in module.body if isinstance(n, ast.ClassDef)]
        self.assertEqual(['TestBug1'], [c.name for c in classes])
        self.assertEqual('integrated_helpers.ProviderUsageBaseTestCase',
                         ast.unparse(classes[0].bases[0]))
        return source

    def body(self, steps):
        """The test method's lines after the hosts and flavors."""
        source = self.export(steps)
        method = source[source.index('    def test_the_scenario'):]
        return [line.strip() for line in method.splitlines()
                if line.strip()][11:]

    def assertRefused(self, steps, *words, head=HEAD):
        exc = self.assertRaises(refusal.Refused, nova_test.export,
                                self.path(steps, head))
        for word in (self.tmp, "scenario 'the scenario'") + words:
            self.assertIn(word, str(exc))
        return str(exc)


class StepTranslationTest(ExportTestCase):

    def test_boot(self):
        self.assertEqual([
            '# 1. boot vm1 (small) on src',
            "self.servers['vm1'] = self._create_server(",
            "name='vm1', flavor_id=self.flavors['small'],",
            "host='src', networks='none')"],
            self.body('- boot: {server: vm1, flavor: small, host: src}'))

    def test_boot_where_the_scheduler_chooses(self):
        self.assertIn("host=None, networks='none')",
                      self.body('- boot: {server: vm1, flavor: small}'))

    def test_boot_forced_to_a_host(self):
        # The availability zone nova:<host>, the scheduler's filters
        # skipped, as the harness's boot forces it.
        self.assertEqual(
            "az='nova:src', networks='none')",
            self.body('- boot: {server: vm1, flavor: small, host: src, '
                      'force: true}')[3])
        body = self.body('- boot: {server: vm1, flavor: small, host: src, '
                         'force: true}\n'
                         '  error: No valid host')
        self.assertEqual(
            "az='nova:src', networks='none', expected_state='ERROR')",
            body[3])

    def test_rebuild_from_the_default_image(self):
        # The harness's default image: Glance's stand-in's image1, which
        # _create_server boots from too.
        self.assertEqual(
            ["state = self.api.get_server(self.servers['vm1']['id'])"
             "['status']",
             "self.servers['vm1'] = self._rebuild_server(",
             "self.servers['vm1'], self.glance.image1['id'],",
             "expected_state='SHUTOFF' if state == 'SHUTOFF' else "
             "'ACTIVE')"],
            self.body('- boot: {server: vm1, flavor: small}\n'
                      '- rebuild: vm1')[5:])

    def test_a_rebuild_whose_driver_fails(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- fault: {host: src, method: spawn}\n'
                         '- rebuild: vm1\n'
                         '  error: spawn\n'
                         '  expect: {servers: {vm1: ERROR}}')
        self.assertEqual(
            ['# 3. rebuild vm1', 'self.api.post_server_action(',
             "self.servers['vm1']['id'], {'rebuild': {'imageRef': "
             "self.glance.image1['id']}})",
             "self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None})",
             "self.assertIn('spawn', self.servers['vm1']['fault']"
             "['message'])"], body[6:12])

    def test_a_rebuild_whose_driver_fails_with_no_status_expected(self):
        # Its compute event, in error (the fault recorded first), then
        # the driver's error in the server's fault.
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- fault: {host: src, method: spawn}\n'
                         '- rebuild: vm1\n'
                         '  error: spawn\n'
                         '  expect: {allocations: {vm1: {src: small}}}')
        self.assertEqual(
            ['# 3. rebuild vm1', 'self.api.post_server_action(',
             "self.servers['vm1']['id'], {'rebuild': {'imageRef': "
             "self.glance.image1['id']}})",
             'self._wait_for_instance_action_event(',
             "self.servers['vm1'], 'rebuild', 'compute_rebuild_instance', "
             "'Error')",
             "self.assertIn('spawn', self.api.get_server(",
             "self.servers['vm1']['id'])['fault']['message'])"],
            body[6:13])

    def test_resize_and_confirm(self):
        body = self.body('- boot: {server: vm1, flavor: small}\n'
                         '- resize: {server: vm1, flavor: large}\n'
                         '- confirm: vm1')
        self.assertIn("self.servers['vm1'], self.flavors['large'])", body)
        self.assertIn("self.servers['vm1'] = self._resize_server(", body)
        self.assertIn("self.servers['vm1'] = self._confirm_resize("
                      "self.servers['vm1'])", body)

    def test_migrate_and_revert(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- migrate: {server: vm1, host: dst}\n'
                         '- revert: vm1')
        self.assertIn("self.servers['vm1'] = self._migrate_server("
                      "self.servers['vm1'], host='dst')", body)
        self.assertIn("self.servers['vm1'] = self._revert_resize("
                      "self.servers['vm1'])", body)

    def test_migrate_where_the_scheduler_chooses(self):
        self.assertIn("self.servers['vm1'] = self._migrate_server("
                      "self.servers['vm1'])",
                      self.body('- boot: {server: vm1, flavor: small}\n'
                                '- migrate: {server: vm1}'))

    def test_live_migrate(self):
        self.assertIn("self.servers['vm1'] = self._live_migrate("
                      "self.servers['vm1'], host='dst')",
                      self.body('- boot: {server: vm1, flavor: small, '
                                'host: src}\n'
                                '- live_migrate: {server: vm1, host: dst}'))

    def test_delete(self):
        self.assertIn("self._delete_server(self.servers['vm1'])",
                      self.body('- boot: {server: vm1, flavor: small}\n'
                                '- delete: vm1'))

    def test_run_periodic_on_every_host_in_name_order(self):
        body = self.body('- run_periodic: update_available_resource')
        self.assertEqual(['for host in sorted(self.computes):',
                          'self.computes[host].manager.'
                          'update_available_resource(',
                          'self.context)'], body[1:])

    def test_run_periodic_on_named_hosts(self):
        body = self.body('- run_periodic: {task: _poll_unconfirmed_resizes,'
                         ' hosts: [src]}')
        self.assertEqual(["for host in ['src']:",
                          'self.computes[host].manager.'
                          '_poll_unconfirmed_resizes(',
                          'self.context)'], body[1:])

    def test_the_hosts_and_flavors(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        self.assertIn("compute_driver = 'fake.MediumFakeDriver'", source)
        self.assertIn("for host in ['dst', 'src']:\n"
                      "            self.computes[host] = "
                      "self._start_compute(host)", source)
        self.assertIn("self.flavors['small'] = self._create_flavor(\n"
                      "            name='small', vcpu=1, memory_mb=512, "
                      "disk=1,\n            ephemeral=0, swap=0)", source)

    def test_every_unit_is_a_registered_step_kind(self):
        from harness.core import steps as kinds
        self.assertLessEqual(set(step_units.names()), set(kinds.names()))
        self.assertEqual(
            ('add_node', 'advance_clock', 'archive_deleted_rows', 'boot',
             'confirm', 'delete', 'delete_service',
             'destroy_compute_node', 'disable_compute', 'discover_hosts',
             'enable_compute', 'evacuate', 'fault', 'force_down',
             'force_up', 'inject', 'live_migrate', 'migrate',
             'rebalance_node', 'rebuild', 'remove_node', 'resize',
             'revert', 'run_periodic', 'shelve', 'start_compute',
             'stop_compute', 'unshelve'),
            step_units.names())

    def test_disable_and_enable_a_compute(self):
        body = self.body('- disable_compute: {host: src, reason: m}\n'
                         '- enable_compute: src')
        service = ['service = self.admin_api.get_services(',
                   "binary='nova-compute', host='src')[0]",
                   "self.admin_api.put_service(service['id'], {"]
        self.assertEqual(
            ['# 1. disable compute src'] + service
            + ["'status': 'disabled',", "'disabled_reason': 'm',", '})',
               '# 2. enable compute src'] + service
            + ["'status': 'enabled',", '})'], body)

    def test_stop_and_start_a_compute(self):
        # Stopped: its timers stop too; started: a new manager over the
        # same hypervisor (or an empty one), its timers from now on.
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- stop_compute: src\n'
                         '- start_compute: src\n'
                         '- stop_compute: src\n'
                         '- start_compute: {host: src, guests: gone}')
        self.assertEqual(
            ['# 2. stop compute src', "self.computes['src'].stop()",
             "self._unschedule('src')",
             '# 3. start compute src',
             "self.computes['src'] = self.restart_compute_service(",
             "self.computes['src'], keep_hypervisor_state=True)",
             "self._schedule('src')"], body[4:11])
        self.assertIn("self.computes['src'], keep_hypervisor_state=False)",
                      body)

    def test_force_down_and_delete_a_service(self):
        body = self.body('- stop_compute: src\n'
                         '- force_down: src\n'
                         '- delete_service: src')
        service = ['service = self.admin_api.get_services(',
                   "binary='nova-compute', host='src')[0]"]
        self.assertEqual(
            ['# 2. force up src'] + service
            + ["self.admin_api.put_service(service['id'], {",
               "'forced_down': False,", '})'],
            self.body('- force_down: src\n- force_up: src')[6:])
        self.assertEqual(
            ['# 2. force down src'] + service
            + ["self.admin_api.put_service(service['id'], {",
               "'forced_down': True,", '})', '# 3. delete service src']
            + service
            + ["self.admin_api.api_delete('/os-services/%s' % "
               "service['id'])"], body[3:])
        self.assertEqual(('boot', 'confirm', 'delete_service', 'evacuate',
                          'live_migrate', 'migrate', 'rebuild', 'resize',
                          'revert', 'unshelve'),
                         step_units.failing_names())

    def test_a_compute_back_after_its_service_s_delete(self):
        # Its host mapping went with the service: mapped again, as the
        # harness's start does by default (discover_hosts' work), or
        # left unmapped for a discover_hosts step.
        source = self.export('- stop_compute: src\n'
                             '- delete_service: src\n'
                             '- start_compute: src\n'
                             '- stop_compute: dst\n'
                             '- delete_service: dst\n'
                             '- start_compute: {host: dst, mapped: false}\n'
                             '- discover_hosts: {maps: [dst]}\n'
                             '- stop_compute: src\n'
                             '- start_compute: src')
        method = source[source.index('    def test_the_scenario'):]
        body = [line.strip() for line in method.splitlines()
                if line.strip()]
        start = body.index('# 3. start compute src')
        self.assertEqual(
            ["self._map_host('src')",
             "self.computes['src'] = self.restart_compute_service(",
             "self.computes['src'], keep_hypervisor_state=True)",
             "self._schedule('src')", "self._flag_mapped('src')"],
            body[start + 1:start + 6])
        start = body.index('# 6. start compute dst (unmapped)')
        self.assertEqual(
            "self.computes['dst'] = self.restart_compute_service(",
            body[start + 1])
        start = body.index('# 7. discover hosts')
        self.assertEqual(
            ['mapped = host_mapping.discover_hosts(',
             'self.context, status_fn=lambda message: None)',
             "self.assertEqual(['dst'], sorted(",
             'mapping.host for mapping in mapped))'],
            body[start + 1:start + 5])
        # Mapped since: its next start maps nothing.
        start = body.index('# 9. start compute src')
        self.assertEqual(
            "self.computes['src'] = self.restart_compute_service(",
            body[start + 1])
        for helper in ('_map_host', '_flag_mapped'):
            self.assertIn('    def %s(self, host):' % helper, source)
        self.assertIn('from nova.objects import host_mapping\n', source)

    def test_a_service_delete_nova_refuses(self):
        source = self.export('- boot: {server: vm1, flavor: small, '
                             'host: src}\n'
                             '- stop_compute: src\n'
                             '- delete_service: src\n'
                             '  error: hosting instances')
        self.assertIn('from nova.tests.functional.api import client\n',
                      source)
        self.assertIn(
            "        exc = self.assertRaises(\n"
            "            client.OpenStackApiException, "
            "self.admin_api.api_delete,\n"
            "            '/os-services/%s' % service['id'])\n"
            "        self.assertEqual(409, exc.response.status_code)\n"
            "        self.assertIn('hosting instances', "
            "exc.response.text)\n", source)

    def test_a_periodic_injected_at_a_compute_method(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: resize_instance, run: '
            'update_available_resource, on: src}\n'
            '- inject: {after: finish_resize, run: '
            'update_available_resource, on: dest}\n'
            '- resize: {server: vm1, flavor: large}')
        self.assertIn("        self._inject('before', 'resize_instance',\n"
                      "                     'update_available_resource', "
                      "'src')\n", source)
        self.assertIn("        self._inject('after', 'finish_resize',\n"
                      "                     'update_available_resource', "
                      "'dest')\n", source)
        # Wrapped on Nova's class as its tests do; armed in order, each
        # fires once.
        self.assertIn("'': 'nova.compute.manager.ComputeManager',", source)
        self.assertIn("'%s.%s' % (path, method), wrapper))", source)
        # Also where a running compute's RPC endpoint kept the method.
        self.assertIn('vars(endpoint).pop(method, None)', source)
        self.assertIn('for server, host, action in list(armed):', source)
        self.assertIn("if server is not None and self.servers[server]['id'] "
                      "not in uuids:", source)
        self.assertIn('import fixtures\n', source)
        self.assertIn('from oslo_utils import importutils\n', source)
        # Nothing of a record's change, a task, a death or a request
        # where none is armed.
        self.assertNotIn('_wrap_save', source)
        self.assertNotIn('_wrap_task', source)
        self.assertNotIn('lockutils', source)
        self.assertNotIn('import sys', source)
        self.assertNotIn('_ComputeDied', source)
        self.assertNotIn('import threading', source)
        self.assertNotIn('def _inject_request', source)

    def test_a_periodic_injected_at_a_migration_status(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- inject: {after: migration.status=confirmed, run: '
            'update_available_resource, on: source}\n'
            '- confirm: vm1')
        self.assertIn("        self._inject('after', "
                      "'migration.status=confirmed',\n"
                      "                     'update_available_resource', "
                      "'source')\n", source)
        # Armed on the record's save, a compute's method on its class.
        self.assertIn(
            "            if point.startswith(('instance.', 'migration.')):\n"
            "                self._wrap_save(point)\n"
            "            else:\n"
            "                self._wrap_method(point)\n", source)
        # Fired when the saved change is the point's, on the compute
        # whose code saves it.
        self.assertIn("        path = 'nova.objects.%s.%s' % (record, "
                      "record.capitalize())\n", source)
        self.assertIn("            if field not in obj.obj_what_changed() "
                      "or (\n"
                      "                    value and getattr(obj, field) != "
                      "value):\n"
                      "                return real(obj, *args, **kwargs)\n"
                      "            manager = self._saving_manager()\n"
                      "            self._fire('before', point, manager, "
                      "[obj])\n", source)
        self.assertIn('        frame = sys._getframe(1)\n', source)
        # The periodic waits for the tracker's lock, held there, and runs
        # as the saving thread frees it.
        self.assertIn("            periodic = getattr(self.computes[host]."
                      "manager, task)\n"
                      "            self._after_tracker_lock(lambda: "
                      "periodic(self.context))\n", source)
        self.assertIn("        lock = lockutils.internal_fair_lock("
                      "'compute_resources')\n"
                      "        if not lock.is_writer(check_pending=False):\n"
                      "            call()\n"
                      "            return\n", source)
        self.assertIn('        def release_then_call(*args, **kwargs):\n'
                      '            lock._release_write_lock = release\n'
                      '            release(*args, **kwargs)\n'
                      '            call()\n', source)
        self.assertIn('import sys\n', source)
        self.assertIn('from oslo_concurrency import lockutils\n', source)
        self.assertNotIn('_wrap_task', source)

    def test_a_periodic_injected_where_an_instance_s_host_changes(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- shelve: vm1\n'
            '- inject: {after: instance.host, run: '
            'update_available_resource, on: src}\n'
            '- unshelve: vm1')
        self.assertIn("        self._inject('after', 'instance.host',\n"
                      "                     'update_available_resource', "
                      "'src')\n", source)
        self.assertIn('    def _wrap_save(self, point):\n', source)
        self.assertIn('self._after_tracker_lock(lambda: ', source)

    def test_a_periodic_injected_after_a_conductor_task(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {after: conductor.LiveMigrationTask, run: '
            'update_available_resource, on: dest}\n'
            '- live_migrate: {server: vm1, host: dst}')
        self.assertIn("        self._inject('after', "
                      "'conductor.LiveMigrationTask',\n"
                      "                     'update_available_resource', "
                      "'dest')\n", source)
        self.assertIn(
            "            if point.startswith('conductor.'):\n"
            "                self._wrap_task(point)\n"
            "            else:\n"
            "                self._wrap_method(point)\n", source)
        # Each task of the class, its instance and migration passed; no
        # compute passes it.
        self.assertIn("        path = 'nova.conductor.tasks.base.TaskBase'\n",
                      source)
        self.assertIn('            if type(task).__name__ != name:\n'
                      '                return real(task)\n', source)
        self.assertIn("            self._fire('after', point, None, "
                      "passed)\n", source)
        # No record's save, so no tracker's lock held at the point.
        self.assertNotIn('_wrap_save', source)
        self.assertNotIn('lockutils', source)
        self.assertIn('            getattr(self.computes[host].manager, '
                      'task)(self.context)\n', source)

    def test_a_compute_dying_at_a_status_saved_in_a_cast_method(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: migration.status=post-migrating, '
            'stop: source}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: {status: RESIZE, host: src}}}')
        self.assertIn("        self._inject_death('before', "
                      "'migration.status=post-migrating', 'src')\n"
                      "\n"
                      "        # 3. resize vm1 to large\n", source)
        self.assertIn('    def _wrap_save(self, point):\n', source)
        # Its own work there (the saving manager's) ends with it.
        self.assertIn('            if manager is service.manager:\n'
                      '                raise self._ComputeDied(host)\n',
                      source)
        self.assertNotIn('lockutils', source)

    def test_a_periodic_injected_at_a_tracker_s_step(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- inject: {before: tracker.drop_move_claim_at_dest, run: '
            'update_available_resource, on: source}\n'
            '- revert: vm1')
        self.assertIn("        self._inject('before', "
                      "'tracker.drop_move_claim_at_dest',\n"
                      "                     'update_available_resource', "
                      "'source')\n", source)
        # Wrapped on the tracker's class: outside its lock.
        self.assertIn("        'tracker': 'nova.compute.resource_tracker."
                      "ResourceTracker',\n", source)
        self.assertNotIn('lockutils', source)

    def test_expectations_checked_at_a_point(self):
        body = self.body(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- inject: {before: tracker.drop_move_claim_at_dest, check: '
            '{tracker: {src: small, dst: large}}}\n'
            '- revert: vm1\n'
            '  expect: {servers: {vm1: {status: ACTIVE}}}')
        start = body.index('# 3. inject before tracker.drop_move_claim_at_'
                           'dest: check tracker')
        # The assertions run at the point; the step that passes it
        # reports what they found, before its own expectations.
        self.assertEqual(
            ['def check():',
             'self.assertTrackers({',
             "'dst': {", "'local_gb_used': 1,", "'memory_mb_used': 1024,",
             "'vcpus_used': 2,", '},',
             "'src': {", "'local_gb_used': 1,", "'memory_mb_used': 512,",
             "'vcpus_used': 1,", '},',
             '})',
             "self._inject_check(3, 'before', "
             "'tracker.drop_move_claim_at_dest', check)",
             '# 4. revert vm1',
             "self.servers['vm1'] = self._revert_resize("
             "self.servers['vm1'])",
             'self._assertChecked(3)',
             "self.assertServer('vm1', status='ACTIVE')",
             # Armed, so asserted fired after the last step.
             'self.assertInjectionsFired()'], body[start + 1:])
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- inject: {before: tracker.drop_move_claim_at_dest, check: '
            '{tracker: {src: small, dst: large}}}\n'
            '- revert: vm1')
        self.assertIn('        self._checked = {}\n', source)
        self.assertIn('            except self.failureException as exc:\n'
                      '                self._checked[number] = exc\n',
                      source)
        self.assertIn("        self.assertIn(number, self._checked,\n"
                      "                      'the check of step %d never "
                      "ran' % number)\n", source)

    def test_a_delete_at_a_record_change_inside_the_tracker_s_lock(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {after: migration.status=pre-migrating, '
            'do: {delete: vm1}}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '  error: is gone')
        self.assertIn("        self._inject_request('after', "
                      "'migration.status=pre-migrating',\n"
                      "                             'delete', 'vm1')\n",
                      source)
        # Sent there; its end (the source's terminate_instance, which
        # waits for the tracker's lock the claim holds) waited for as the
        # claim's thread frees the lock, before the claim goes on.
        self.assertIn(
            "                self.api.delete_server(server['id'])\n"
            "                self._after_tracker_lock(\n"
            "                    lambda: self._wait_for_instance_action_"
            "event(\n"
            "                        server, 'delete', "
            "'compute_terminate_instance',\n"
            "                        'Success'))\n", source)
        self.assertNotIn('self._delete_server(server)', source)
        # The resize ends in the source's resize_instance, which finds
        # the server deleting.
        self.assertIn("            self.servers['vm1'], 'resize', "
                      "'compute_resize_instance', 'Error')\n", source)
        self.assertNotIn('periodic = getattr(', source)

    def test_a_compute_dying_at_a_method_cast_to_it(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: finish_resize, stop: dest}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: {status: RESIZE, host: dst}}}')
        # The loader's host for the role; armed on Nova's class.
        self.assertIn("        # 2. inject before finish_resize: stop dest\n"
                      "        self._inject_death('before', 'finish_resize', "
                      "'dst')\n", source)
        # The request sent without waiting for a rest, then the death
        # waited for; the state is the expectations'.
        self.assertIn(
            "        self.api.post_server_action(\n"
            "            self.servers['vm1']['id'], {'resize': {'flavorRef': "
            "self.flavors['large']}})\n"
            "        self._wait_for_death('dst')\n"
            "        self.assertServer('vm1', host='dst', status='RESIZE')\n",
            source)
        # Its RPC servers stop, its timers too, and its own work there
        # ends with an error Nova's handlers do not catch.
        self.assertIn('class _ComputeDied(BaseException):', source)
        self.assertIn('                    server.stop()\n'
                      '            self._unschedule(host)\n'
                      '            # Dead now: the test goes on (its clock '
                      'without this host).\n'
                      '            self._deaths[host].set()\n'
                      '            if manager is service.manager:\n'
                      '                raise self._ComputeDied(host)\n',
                      source)
        self.assertIn('import threading\n', source)

    def test_a_compute_dying_in_a_build(self):
        self.assertEqual(
            ["self._inject_death('before', 'build_and_run_instance', 'src')",
             '# 2. boot vm1 (small) on src',
             "self.servers['vm1'] = self._create_server(",
             "name='vm1', flavor_id=self.flavors['small'],",
             "host='src', networks='none', expected_state='BUILD')",
             "self._wait_for_death('src')",
             "self.assertServer('vm1', host=None, status='BUILD')",
             # Every injection fired, after the last step.
             'self.assertInjectionsFired()'],
            self.body(
                '- inject: {before: build_and_run_instance, stop: src}\n'
                '- boot: {server: vm1, flavor: small, host: src}\n'
                '  error: did not reach its resting state\n'
                '  expect: {servers: {vm1: {status: BUILD, host: null}}}'
            )[1:])

    def test_a_request_sent_at_a_point(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: pre_live_migration, '
            'do: {abort_live_migration: vm1}}\n'
            '- inject: {before: scheduler.select_destinations, '
            'do: {delete: vm1}}\n'
            '- live_migrate: {server: vm1, host: dst}\n'
            '- migrate: vm1')
        self.assertIn("        self._inject_request('before', "
                      "'pre_live_migration',\n"
                      "                             'abort_live_migration', "
                      "'vm1')\n", source)
        self.assertIn("        self._inject_request('before', "
                      "'scheduler.select_destinations',\n"
                      "                             'delete', 'vm1')\n",
                      source)
        # The scheduler's manager wrapped; a delete waits for the server
        # to go, an abort for the source compute's handling of it.
        self.assertIn("'scheduler': 'nova.scheduler.client.query."
                      "SchedulerQueryClient',", source)
        self.assertIn('                self._delete_server(server)\n',
                      source)
        self.assertIn("                    server, 'live_migration_cancel',\n"
                      "                    'compute_live_migration_abort', "
                      "'Success')\n", source)
        self.assertNotIn('_ComputeDied', source)

    def test_requests_narrowed_to_one_server_s_passes(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- boot: {server: vm2, flavor: small, host: src}\n'
            '- inject: {before: pre_live_migration, server: vm1,\n'
            '           do: {live_migrate: vm2}}\n'
            '- inject: {before: post_live_migration_at_destination, '
            'server: vm1,\n'
            '           do: {delete: vm2}}\n'
            '- inject: {before: pre_live_migration, server: vm2,\n'
            '           run: update_available_resource, on: src}\n'
            '- live_migrate: {server: vm1, host: dst}')
        self.assertIn("        self._inject_request('before', "
                      "'pre_live_migration',\n"
                      "                             'live_migrate', 'vm2', "
                      "server='vm1')\n", source)
        self.assertIn("'delete', 'vm2', server='vm1')\n", source)
        self.assertIn("'update_available_resource', 'src', "
                      "server='vm2')\n", source)
        # A pass fires the actions armed for its server (an Instance
        # among the method's arguments), or for any.
        self.assertIn('    def _arm(self, when, point, action, '
                      'server=None, host=None):', source)
        self.assertIn('uuids = {arg.uuid for arg in passed\n'
                      '                 if isinstance(arg, objects.Instance)}',
                      source)
        self.assertIn("if server is not None and self.servers[server]['id'] "
                      "not in uuids:", source)
        self.assertIn('self._arm(when, point, send, server=server, '
                      'host=at_host)', source)
        self.assertIn('self._arm(when, point, run, server=server, '
                      'host=at_host)', source)
        # A live migration sent there: taken by the source compute (run,
        # or queued behind its busy executor) before the pass goes on.
        self.assertIn("            elif action == 'live_migrate':\n"
                      "                self.api.post_server_action("
                      "server['id'], {\n"
                      "                    'os-migrateLive': {'host': None,\n"
                      "                                       "
                      "'block_migration': 'auto'}})\n", source)
        self.assertIn("                self._wait_for_migration_status(\n"
                      "                    server, ['queued', 'preparing', "
                      "'running'])\n", source)

    def test_a_service_delete_at_a_point_that_nova_refuses(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: finish_resize, server: vm1,\n'
            '           do: {delete_service: dest}, refused: true}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- revert: vm1')
        self.assertIn("        self._inject_request('before', "
                      "'finish_resize',\n"
                      "                             'delete_service', "
                      "'dest', server='vm1')\n", source)
        # The host of a role read at the point; the answer kept, and
        # checked after each later step: a 409.
        self.assertIn("            elif action == 'delete_service':\n", source)
        self.assertIn('                host = self._host(name, manager, '
                      'passed)\n', source)
        self.assertIn('self._answers.append((host, exc.response.'
                      'status_code))', source)
        self.assertIn('        self._answers = []\n', source)
        self.assertIn('            self.assertEqual(409, status, ', source)
        method = source[source.index('    def test_the_scenario'):]
        # The step it is sent in says the answer even when its own wait
        # fails after (a delete that went through leaves a move that
        # never ends): in a finally; the later step after itself.
        self.assertIn('        try:\n'
                      "            self.servers['vm1'] = "
                      "self._resize_server(\n"
                      "                self.servers['vm1'], "
                      "self.flavors['large'])\n"
                      '        finally:\n'
                      '            self.assertServiceDeletesRefused()\n',
                      method)
        self.assertEqual(1, method.count(
            '\n        self.assertServiceDeletesRefused()\n'))
        revert = method[method.index('# 4. revert vm1'):]
        self.assertIn('        self.assertServiceDeletesRefused()\n',
                      revert)

    def test_a_service_delete_at_a_point_that_goes_through(self):
        self.assertRefused(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- stop_compute: dst\n'
            '- inject: {before: resize_instance, server: vm1,\n'
            '           do: {delete_service: dst}, refused: false}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: ERROR}}',
            'step 3 (inject)', 'refused False (a service deleted at a '
            'point)')

    def test_a_periodic_overlapping_the_held_call(self):
        # The harness carries the tracker's call on in a thread of its
        # own once the periodic has read its instances; a wrapped method
        # would run the periodic before the call instead.
        self.assertRefused(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- inject: {before: tracker.drop_move_claim_at_dest, run: '
            'update_available_resource, on: dest, overlap: instances_read}\n'
            '- revert: vm1',
            'step 3 (inject)', "field 'overlap'")

    def test_a_death_narrowed_to_one_server(self):
        self.assertRefused(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: build_and_run_instance, stop: src, '
            'server: vm2}\n'
            '- boot: {server: vm2, flavor: small, host: src}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm2: {status: BUILD, host: null}}}',
            'step 2 (inject)', "field 'server'")

    def test_a_step_whose_server_a_delete_at_a_point_removed(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- inject: {before: scheduler.select_destinations, '
                         'do: {delete: vm1}}\n'
                         '- live_migrate: vm1\n'
                         '  error: is gone')
        start = body.index('# 3. live migrate vm1')
        # The conductor's event, in error, as Nova's test of LP#1848343
        # waits for it.
        self.assertEqual(
            ['self.api.post_server_action(',
             "self.servers['vm1']['id'], {'os-migrateLive': "
             "{'host': None, 'block_migration': 'auto'}})",
             'self._wait_for_instance_action_event(',
             "self.servers['vm1'], 'live-migration', "
             "'conductor_live_migrate_instance', 'Error')",
             'self.assertInjectionsFired()'],
            body[start + 1:])

    def test_a_resize_whose_server_a_delete_before_finish_resize_removed(
            self):
        # The destination's finish_resize then fails on the deleted
        # instance: its event, in error, ends the resize.
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- inject: {before: finish_resize, '
                         'do: {delete: vm1}}\n'
                         '- resize: {server: vm1, flavor: large}\n'
                         '  error: is gone')
        start = body.index('# 3. resize vm1 to large')
        self.assertEqual(
            ['self._wait_for_instance_action_event(',
             "self.servers['vm1'], 'resize', 'compute_finish_resize', "
             "'Error')", 'self.assertInjectionsFired()'], body[start + 3:])

    def test_a_live_migration_whose_server_a_delete_while_it_prepares_removed(
            self):
        # The source's live migration task goes on past any event: gone
        # once the delete has run in it, then the end of the tasks the
        # computes record for the server.
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: pre_live_migration, do: {delete: vm1}}\n'
            '- live_migrate: {server: vm1, host: dst}\n'
            '  error: is gone\n'
            '  expect: {usages: {}}')
        method = source[source.index('        # 3. live migrate vm1'):]
        self.assertEqual(
            ['self._wait_until_deleted(self.servers[\'vm1\'])',
             "self._wait_for_tasks_of('vm1')",
             'self.assertUsages({'],
            [line.strip() for line in method.splitlines()][3:6])
        self.assertIn('    def _wait_for_tasks_of(self, name):', source)
        self.assertIn("task['instance_uuid'] == uuid", source)
        self.assertIn('for task in manager._in_progress_tasks.values())',
                      source)
        self.assertIn('manager._in_progress_task_cond.wait_for(\n'
                      '                        ended, timeout=60),', source)

    def test_a_delete_at_a_point_no_event_ends(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: resize_instance, '
                           'do: {delete: vm1}}\n'
                           '- migrate: {server: vm1, host: dst}\n'
                           '  error: is gone',
                           'step 3 (migrate)',
                           "after a delete at 'resize_instance'")

    def test_no_injection_helpers_without_injections(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        self.assertNotIn('_inject', source)
        self.assertNotIn('import fixtures', source)

    def test_a_fault_on_a_compute(self):
        source = self.export(
            '- fault: {host: src, method: spawn}\n'
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: ERROR}}')
        self.assertIn("        self._fault('src', 'spawn', 1)\n", source)
        # Each patched method fails while calls are left and the compute
        # is the one it was armed on.
        self.assertIn('    def _fault(self, host, method, times):', source)
        self.assertIn('if left[0] and self.computes[host].manager is '
                      'manager:', source)

    def test_a_fault_of_placement(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            "- fault: {placement: 'PUT /allocations/*', times: 10}\n"
            "- fault: {placement: 'DELETE /allocations/*', "
            'status: timeout}\n'
            '- confirm: vm1')
        self.assertIn("        self._placement_fault('PUT /allocations/*', "
                      "409, 10)\n", source)
        self.assertIn("        self._placement_fault('DELETE "
                      "/allocations/*', 'timeout', 1)\n", source)
        # On the report client's method of the request, matched on the
        # path from its start, '*' one segment, while calls are left;
        # the conflict Placement answers, or keystoneauth's errors.
        self.assertIn("'%s.SchedulerReportClient.%s' % (report, "
                      "method.lower()),", source)
        self.assertIn("pattern = re.compile('^%s' % re.escape(path)."
                      "replace(\n            r'\\*', '[^/]+'))", source)
        self.assertIn("if not (left[0] and pattern.match(url.split('?')"
                      "[0])):", source)
        self.assertIn("code = ('placement.concurrent_update' if status == "
                      "409", source)
        self.assertIn('raise ks_exc.ConnectTimeout(', source)
        self.assertIn('raise ks_exc.ConnectFailure(', source)
        # The retries' back-off passes no time.
        self.assertIn("sleep=lambda seconds: None)))", source)
        for line in ('import re', 'import time', 'import types',
                     'from keystoneauth1 import exceptions as ks_exc',
                     'from oslo_serialization import jsonutils',
                     'from nova.scheduler.client import report as '
                     'report_client',
                     'from nova.tests.unit import fake_requests'):
            self.assertIn('\n%s\n' % line, source)
        # No driver fault helper.
        self.assertNotIn('def _fault(', source)

    def test_a_boot_with_a_port_on_the_network(self):
        # Nova makes the port on the Neutron fixture's network_1, as the
        # harness's boot asks it to; the build's network thread is
        # synchronous while the boot is waited for, so that the port's
        # network info is cached where the server's moves read it.
        self.assertEqual([
            '# 1. boot vm1 (small) on src',
            'with nova_fixtures.SpawnIsSynchronousFixture():',
            "self.servers['vm1'] = self._create_server(",
            "name='vm1', flavor_id=self.flavors['small'],",
            "host='src', networks=[{'uuid': self.neutron.network_1['id']}])"],
            self.body('- boot: {server: vm1, flavor: small, host: src, '
                      'port: true}'))
        source = self.export('- boot: {server: vm1, flavor: small, '
                             'port: true}')
        self.assertIn('\nfrom nova.tests import fixtures as nova_fixtures\n',
                      source)
        # No port of its own to make.
        self.assertNotIn('def _port(', source)

    def test_a_boot_with_a_port_of_a_kind(self):
        # A copy of the fixture's port of that kind, made for the server
        # before the boot (_port), as Nova's SR-IOV and QoS tests pass
        # theirs.
        for kind in ('direct', 'vdpa', 'remote-managed'):
            body = self.body('- boot: {server: vm1, flavor: small, '
                             'port: %s}' % kind)
            self.assertEqual(
                "host=None, networks=[{'port': self._port('vm1', %r)}])"
                % kind, body[4])
        # A bandwidth port's boot no host fits (none reports bandwidth).
        body = self.body('- boot: {server: vm1, flavor: small, '
                         'port: bandwidth}\n'
                         '  error: No valid host')
        self.assertEqual(
            "host=None, networks=[{'port': self._port('vm1', 'bandwidth')}],"
            " expected_state='ERROR')", body[4])
        source = self.export('- boot: {server: vm1, flavor: small, '
                             'port: direct}\n'
                             '- boot: {server: vm2, flavor: small, '
                             'port: bandwidth}\n'
                             '  error: No valid host')
        self.assertIn('    def _port(self, server, kind):', source)
        self.assertIn('port = copy.deepcopy(self.neutron.sriov_port)',
                      source)
        self.assertIn("port['binding:vnic_type'] = kind", source)
        self.assertIn('port = copy.deepcopy(self.neutron.port_with_'
                      'resource_request)', source)
        self.assertIn('self.neutron._ports[port[\'id\']] = port', source)
        self.assertIn('\nimport copy\n', source)
        self.assertIn('\nfrom oslo_utils import uuidutils\n', source)

    def test_a_boot_with_a_port_that_ends_in_error(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src, '
                         'port: true}\n'
                         '  error: No valid host\n')
        self.assertEqual('with nova_fixtures.SpawnIsSynchronousFixture():',
                         body[1])
        # The wait for the server's rest is inside it too.
        self.assertEqual(
            ["host='src', networks=[{'uuid': self.neutron.network_1['id']}],"
             " expected_state='ERROR')",
             "self.servers['vm1'] = self._wait_for_server_parameter("],
            body[4:6])

    def test_a_fault_of_the_network(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src, port: true}\n'
            '- fault: {network: update_port, times: 2}\n'
            '- shelve: vm1\n'
            '- unshelve: vm1\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: {status: SHELVED_OFFLOADED}}}')
        self.assertIn("        self._network_fault('update_port', 2)\n",
                      source)
        # The Neutron fixture's method raises as Neutron's client does on
        # a 500, while calls are left, then answers again.
        self.assertIn('    def _network_fault(self, call, times):', source)
        self.assertIn('raise neutron_client_exc.NeutronClientException(',
                      source)
        self.assertIn("% call, status_code=500)", source)
        self.assertIn('return real(*args, **kwargs)', source)
        self.assertIn('self.neutron, call, side_effect=failing))', source)
        self.assertIn('\nfrom neutronclient.common import exceptions as '
                      'neutron_client_exc\n', source)
        self.assertIn('\nimport fixtures\n', source)
        # No driver fault helper.
        self.assertNotIn('def _fault(', source)

    def test_a_boot_over_a_unified_limit(self):
        # The registered limits in Keystone's place (Nova's fixture), in
        # setUp; the boot the API refuses, its error in the answer.
        head = HEAD.replace('    steps:\n', '    limits: {servers: 1, '
                            '"class:VCPU": 4}\n    steps:\n')
        source = self.export('- boot: {server: vm1, flavor: small}\n'
                             '- boot: {server: vm2, flavor: small}\n'
                             '  error: servers\n'
                             '  expect: {allocations: {vm1: {src: small}}}',
                             head=head)
        self.assertIn("        self.flags(driver='nova.quota."
                      "UnifiedLimitsDriver', group='quota')\n"
                      "        registered = {\n"
                      "            'class:VCPU': 4,\n"
                      "            'servers': 1,\n"
                      "        }\n"
                      "        limits = self.useFixture(nova_fixtures."
                      "UnifiedLimitsFixture())\n"
                      "        for name, limit in sorted(registered.items()):"
                      "\n"
                      "            limits.create_registered_limit(\n"
                      "                resource_name=name, default_limit="
                      "limit)\n", source)
        method = source[source.index('        # 2. boot vm2'):]
        self.assertEqual(
            ['exc = self.assertRaises(',
             'client.OpenStackApiException, self._create_server,',
             "name='vm2', flavor_id=self.flavors['small'],",
             "host=None, networks='none')",
             "self.assertIn('servers', exc.response.text)",
             'self.assertAllocations({'],
            [line.strip() for line in method.splitlines()][1:7])
        # After the quota driver that reads them (set by the loader).
        self.assertIn('        super().setUp()\n        self.flags(driver=',
                      source)

    def test_scenarios_with_other_limits(self):
        # Another class, with its own setUp.
        head = HEAD.replace('    steps:\n', '    limits: {servers: 1}\n'
                            '    steps:\n')
        head = head.replace('scenarios:\n', 'scenarios:\n'
                            '  - name: another\n'
                            '    limits: {servers: 2}\n'
                            '    hosts: {src: {driver: fake}}\n'
                            '    flavors: {small: {vcpus: 1, ram: 512, '
                            'disk: 1}}\n'
                            '    steps:\n'
                            '      - boot: {server: vm1, flavor: small}\n')
        source = nova_test.export(self.path(
            '- boot: {server: vm1, flavor: small}\n', head))
        self.assertIn('class TestBug1(', source)
        self.assertIn('class TestBug12(', source)
        self.assertIn("            'servers': 1,\n", source)
        self.assertIn("            'servers': 2,\n", source)

    def test_a_fault_armed_at_a_point(self):
        # Armed as the point's method is passed, as an injection's
        # action; each kind of fault.
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- fault: {host: dst, method: claim, at: {before: prep_resize}}\n'
            "- fault: {placement: 'PUT /allocations/*', status: 500,\n"
            '          at: {after: scheduler.select_destinations}}\n'
            '- migrate: {server: vm1, host: dst}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: ERROR}}')
        self.assertIn("        self._arm('before', 'prep_resize',\n"
                      "                  lambda manager, passed: "
                      "self._fault('dst', 'claim', 1))\n", source)
        self.assertIn("        self._arm('after', 'scheduler.select_"
                      "destinations',\n"
                      "                  lambda manager, passed: "
                      "self._placement_fault('PUT /allocations/*', 500, 1))"
                      "\n", source)
        self.assertIn('    def _arm(self, when, point, action, '
                      'server=None, host=None):', source)
        self.assertIn('        self._injections = {}\n', source)
        self.assertIn('    def _fault(self, host, method, times):', source)
        self.assertIn('    def _placement_fault(self, request, status, '
                      'times):', source)

    def test_faults(self):
        # The latest instance fault in whichever cell holds the server,
        # the fields named, as the harness reads them; or none.
        source = self.export(
            '- boot: {server: vm1, flavor: small}\n'
            '  expect: {fault: {vm1: null}}\n'
            '- boot: {server: vm2, flavor: small}\n'
            '  expect: {fault: {vm2: {message: "No valid*", code: 500, '
            'exception: NoValidHost}}}')
        self.assertIn("        self.assertFault('vm1')\n", source)
        # A message too long for the line alone on the next.
        self.assertIn("        self.assertFault('vm2', code=500, "
                      "exception='NoValidHost', message=(\n"
                      "            'No valid*'))\n", source)
        self.assertIn("        self.assertFault('vm3', message='No valid*')\n",
                      self.export('- boot: {server: vm3, flavor: small}\n'
                                  '  expect: {fault: {vm3: {message: '
                                  '"No valid*"}}}'))
        helper = source[source.index('    def assertFault('):]
        helper = helper[:helper.index('\n    def ', 10)]
        self.assertIn('for cell in objects.CellMappingList.get_all('
                      'self.context):\n'
                      '            with context.target_cell(self.context, '
                      'cell) as cctxt:\n'
                      '                found.extend(faults.get_latest_by_'
                      'instance_uuids(', helper)
        self.assertIn("match = re.match(r'^([A-Za-z_][\\w.]*)(?::|$)',",
                      helper)
        self.assertIn('fnmatch.fnmatchcase(fault.message, want)', helper)
        self.assertIn("fnmatch.fnmatchcase(exception.rsplit('.')[-1],",
                      helper)
        self.assertIn('\nimport fnmatch\n', source)

    def test_a_confirm_that_fails_at_the_compute(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- resize: {server: vm1, flavor: large}\n'
                         "- fault: {placement: 'PUT /allocations/*', "
                         'times: 10}\n'
                         '- confirm: vm1\n'
                         '  error: did not reach its resting state\n'
                         '  expect: {allocations: {vm1: {dst: large}}}')
        start = body.index('# 4. confirm vm1')
        # No status to wait for: the source compute's confirm_resize
        # event, in error.
        self.assertEqual(
            ['self.api.post_server_action(',
             "self.servers['vm1']['id'], {'confirmResize': None})",
             'self._wait_for_instance_action_event(',
             "self.servers['vm1'], 'confirmResize', "
             "'compute_confirm_resize', 'Error')",
             'self.assertAllocations({'], body[start + 1:start + 6])

    def test_a_live_migration_that_ends_short_of_its_resting_state(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- live_migrate: {server: vm1, host: dst}\n'
                         '  error: did not reach its resting state\n'
                         '  expect:\n'
                         '    servers: {vm1: {status: ERROR, host: src}}\n'
                         '    migrations: {vm1: error}')
        start = body.index('# 2. live migrate vm1 to dst')
        # Nova records no instance fault for it: not waited for.
        self.assertEqual(
            ['self.api.post_server_action(',
             "self.servers['vm1']['id'], {'os-migrateLive': "
             "{'host': 'dst', 'block_migration': 'auto'}})",
             "self._wait_for_migration_status(self.servers['vm1'], "
             "['error'])",
             "self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None},",
             'wait_for_fault_key=False)'], body[start + 1:start + 7])

    def test_a_move_that_ends_in_a_final_migration_status(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- live_migrate: {server: vm1, host: dst}\n'
                         '  error: did not reach its resting state\n'
                         '  expect: {migrations: {vm1: cancelled}}')
        start = body.index('# 2. live migrate vm1 to dst')
        # No status expected: the migration's, set as Nova's rollback
        # ends.
        self.assertEqual(
            ["self._wait_for_migration_status(self.servers['vm1'], "
             "['cancelled'])",
             "self.assertLatestMigration('vm1', 'cancelled')"],
            body[start + 3:start + 5])

    def test_a_move_whose_driver_method_fails_by_name(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- fault: {host: dst, method: finish_migration}\n'
                         '- migrate: {server: vm1, host: dst}\n'
                         '  error: finish_migration\n'
                         '  expect: {servers: {vm1: {status: ERROR, '
                         'host: dst}}}')
        start = body.index('# 3. migrate vm1 to dst')
        # The method's name in the ERROR server's fault, as the harness
        # finds it in its report of the server.
        self.assertEqual(
            ["self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None})",
             "self.assertIn('finish_migration', "
             "self.servers['vm1']['fault']['message'])"],
            body[start + 3:start + 6])

    def test_a_driver_method_named_without_an_error_status(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- fault: {host: dst, method: finish_migration}\n'
                           '- migrate: {server: vm1, host: dst}\n'
                           '  error: finish_migration\n'
                           '  expect: {servers: {vm1: {status: ACTIVE}}}',
                           'step 3 (migrate)', "error 'finish_migration'")

    def test_a_boot_that_ends_short_of_its_resting_state(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '  error: did not reach its resting state\n'
                         '  expect: {servers: {vm1: ERROR}}')
        self.assertEqual(
            ['# 1. boot vm1 (small) on src',
             "self.servers['vm1'] = self._create_server(",
             "name='vm1', flavor_id=self.flavors['small'],",
             "host='src', networks='none', expected_state='ERROR')",
             "self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None})"], body[:6])

    def test_a_boot_no_host_fits(self):
        # Nova's conductor leaves it in ERROR, the scheduler's answer its
        # fault, whether or not the step's expectations say ERROR.
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '  error: No valid host\n'
                         '  expect: {allocations: {}}')
        self.assertEqual(
            ["host='src', networks='none', expected_state='ERROR')",
             "self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None})",
             "self.assertIn('No valid host', "
             "self.servers['vm1']['fault']['message'])",
             'self.assertAllocations({', '})'], body[3:])

    def test_a_move_that_ends_short_of_its_resting_state(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- resize: {server: vm1, flavor: large}\n'
                         '  error: did not reach its resting state\n'
                         '  expect:\n'
                         '    servers: {vm1: {status: ERROR, host: src}}\n'
                         '    migrations: {vm1: error}')
        self.assertEqual(
            ['self.api.post_server_action(',
             "self.servers['vm1']['id'], "
             "{'resize': {'flavorRef': self.flavors['large']}})",
             "self._wait_for_migration_status(self.servers['vm1'], "
             "['error'])",
             "self.servers['vm1'] = self._wait_for_server_parameter(",
             "self.servers['vm1'], {'status': 'ERROR', "
             "'OS-EXT-STS:task_state': None})"], body[5:10])

    def test_shelve_and_unshelve(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- shelve: vm1\n'
                         '- unshelve: {server: vm1, host: dst}')
        self.assertEqual(
            ['# 2. shelve vm1',
             "self.servers['vm1'] = self._shelve_server(",
             "self.servers['vm1'], expected_state='SHELVED_OFFLOADED')",
             '# 3. unshelve vm1 to dst',
             'self.api.post_server_action(',
             "self.servers['vm1']['id'], {'unshelve': {'host': 'dst'}})",
             "self.servers['vm1'] = self._wait_for_state_change(",
             "self.servers['vm1'], 'ACTIVE')"], body[4:])

    def test_a_host_whose_driver_fails(self):
        head = HEAD.replace('src: {driver: fake}',
                            'src: {driver: fake, fail: confirm_migration}')
        source = self.export('- boot: {server: vm1, flavor: small, '
                             'host: src}\n'
                             '- resize: {server: vm1, flavor: large}\n'
                             '- confirm: vm1\n'
                             "  error: 'injected hypervisor fault: "
                             "confirm_migration failed on src'\n"
                             '  expect: {servers: {vm1: ERROR}}',
                             head=head)
        self.assertIn("compute_driver = 'fake.MediumFakeDriver'", source)
        # Every call fails, from the start.
        self.assertIn("            self._schedule(host)\n"
                      "        self._fault('src', 'confirm_migration', "
                      "None)\n", source)
        self.assertIn("        self.api.post_server_action(\n"
                      "            self.servers['vm1']['id'], "
                      "{'confirmResize': None})\n", source)
        self.assertIn("        self.assertIn('injected hypervisor fault: "
                      "confirm_migration failed on src', "
                      "self.servers['vm1']['fault']['message'])\n", source)

    def test_advance_clock(self):
        body = self.body('- advance_clock: 61')
        self.assertEqual(['# 1. advance clock 61s',
                          'self._advance_clock(61)'], body)

    def test_evacuate(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- stop_compute: src\n'
                         '- advance_clock: 61\n'
                         '- evacuate: {server: vm1, host: dst}')
        self.assertEqual(
            ["self.servers['vm1'] = self._evacuate_server(",
             "self.servers['vm1'], extra_post_args={'host': 'dst'},",
             "expected_host='dst', expected_state='SHUTOFF')"], body[-3:])

    def test_the_clock_helpers_are_defined(self):
        source = self.export('- advance_clock: 61')
        for helper in ('_schedule', '_unschedule', '_advance_clock'):
            self.assertIn('    def %s(self' % helper, source)
        self.assertIn('from oslo_utils import timeutils', source)


class ExpectTranslationTest(ExportTestCase):

    def test_allocations(self):
        body = self.body(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '  expect: {allocations: {vm1: {dst: large}, '
            'migration(vm1): {src: small}}}')
        at = body.index('self.assertAllocations({')
        self.assertEqual([
            "'migration(vm1)': {", "'src': %s," % SMALL, '},',
            "'vm1': {",
            "'dst': {'DISK_GB': 1, 'MEMORY_MB': 1024, 'VCPU': 2},",
            '},', '})'], body[at + 1:at + 8])

    def test_allocations_of_every_consumer(self):
        # Migrations read from the cell database, a deleted server's
        # too; any other consumer of a host's provider holds nothing, as
        # the harness reads every consumer.
        source = self.export('- boot: {server: vm1, flavor: small}\n'
                             '  expect: {allocations: {}}')
        self.assertIn("context_deleted = context.get_admin_context("
                      "read_deleted='yes')\n"
                      "        migrations = objects.MigrationList."
                      "get_by_filters(\n"
                      "            context_deleted, {'instance_uuid': "
                      "self.servers[name]['id']})", source)
        self.assertIn("'/resource_providers/%s/allocations' % rp)", source)
        self.assertIn('for consumer in sorted(set(consumers) - known):\n'
                      '                self.assertEqual({}, self._held('
                      'consumer),', source)

    def test_no_allocations(self):
        body = self.body('- boot: {server: vm1, flavor: small}\n'
                         '- delete: vm1\n'
                         '  expect: {allocations: {}}')
        self.assertEqual(['self.assertAllocations({', '})'], body[-2:])

    def test_usages(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '  expect: {usages: {src: [small, small]}}')
        self.assertEqual(['self.assertUsages({',
                          "'src': {'DISK_GB': 2, 'MEMORY_MB': 1024, "
                          "'VCPU': 2},", '})'], body[-3:])

    def test_tracker(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '  expect: {tracker: {src: small}}')
        self.assertEqual(['self.assertTrackers({', "'src': {",
                          "'local_gb_used': 1,", "'memory_mb_used': 512,",
                          "'vcpus_used': 1,", '},', '})'], body[-7:])

    def test_servers(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '  expect: {servers: {vm1: {status: ACTIVE, '
                         'host: src}}}')
        self.assertEqual("self.assertServer('vm1', host='src', "
                         "status='ACTIVE')", body[-1])

    def test_migrations(self):
        body = self.body('- boot: {server: vm1, flavor: small, host: src}\n'
                         '- migrate: {server: vm1, host: dst}\n'
                         '  expect: {migrations: {vm1: finished}}')
        self.assertEqual("self.assertLatestMigration('vm1', 'finished')",
                         body[-1])

    def test_the_helpers_the_units_call_are_defined(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        for helper in ('assertAllocations', 'assertUsages',
                       'assertTrackers', 'assertServer',
                       'assertLatestMigration', 'assertProviders',
                       'assertProviderTraits'):
            self.assertIn('    def %s(self' % helper, source)
        # device_providers, devices, pci and pinned_cpus: profiled hosts
        # only (test_export_libvirt).
        self.assertEqual(('action_events', 'allocations', 'compute_nodes',
                          'device_providers', 'devices', 'fault',
                          'hypervisors', 'logs', 'mdevs', 'migrations', 'pci',
                          'pinned_cpus', 'provider_traits', 'providers',
                          'servers', 'tracker', 'usages'),
                         expect_units.names())

    def test_compute_nodes(self):
        # The records of the cell database, deleted ones too, read as
        # Nova's test of LP#2085135 reads them.
        source = self.export(
            '- stop_compute: src\n'
            '- delete_service: src\n'
            '  expect: {compute_nodes: {src: {deleted: true, mapped: false, '
            'records: 1}, dst: {uuid: provider, vcpus_used: 0}}}')
        self.assertIn(
            "        self.assertComputeNode('dst', {'uuid': 'provider', "
            "'vcpus_used': 0})\n"
            "        self.assertComputeNode('src', {\n"
            "            'deleted': True,\n"
            "            'mapped': False,\n"
            "            'records': 1,\n"
            "        })\n", source)
        self.assertIn('    def assertComputeNode(self, node, expected):',
                      source)
        self.assertIn("context.get_admin_context(read_deleted='yes')",
                      source)

    def test_action_events(self):
        # Each entry one event of the server's actions, as an admin sees
        # them; details a shell pattern.
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '  expect:\n'
            '    action_events:\n'
            '      vm1: [{action: create, event: compute_build_and_run_'
            'instance, result: Success, host: src},\n'
            '            {details: "No valid*"}]')
        self.assertIn(
            "        self.assertActionEvent('vm1', action='create', "
            "event='compute_build_and_run_instance', host='src', "
            "result='Success')\n"
            "        self.assertActionEvent('vm1', details='No valid*')\n",
            source)
        self.assertIn('    def assertActionEvent(self, name, **want):',
                      source)
        self.assertIn('\nimport fnmatch\n', source)
        self.assertIn("fnmatch.fnmatchcase(\n                    "
                      "event.get('details') or '', want['details'])", source)

    def test_no_compute_node_record(self):
        body = self.body('- stop_compute: src\n'
                         '  expect: {compute_nodes: {src: null}}')
        self.assertEqual("self.assertComputeNode('src', None)", body[-1])

    def test_providers(self):
        body = self.body('- stop_compute: src\n'
                         '- delete_service: src\n'
                         '  expect: {providers: [dst]}')
        self.assertEqual("self.assertProviders(['dst'])", body[-1])

    def test_provider_traits(self):
        body = self.body('- disable_compute: src\n'
                         '  expect: {provider_traits: {src: {has: '
                         '[COMPUTE_STATUS_DISABLED]}, dst: {lacks: '
                         '[COMPUTE_STATUS_DISABLED]}}}')
        self.assertEqual(
            ["self.assertProviderTraits('dst', "
             "lacks=['COMPUTE_STATUS_DISABLED'])",
             "self.assertProviderTraits('src', "
             "has=['COMPUTE_STATUS_DISABLED'])"], body[-2:])


class WeightsTest(ExportTestCase):

    def test_weights_go_before_the_services_start(self):
        source = self.export('- boot: {server: vm1, flavor: small}',
                             head=HEAD.replace(
                                 '    steps:', '    weights: {src: 100, '
                                 'dst: 50}\n    steps:'))
        self.assertIn(
            '        self.useFixture(nova_fixtures.HostNameWeigherFixture(\n'
            "            {'dst': 50, 'src': 100}))\n"
            '        super().setUp()\n', source)
        self.assertIn('from nova.tests import fixtures as nova_fixtures\n',
                      source)


class RefusalTest(ExportTestCase):

    def test_a_step_kind_without_translation(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '- pause: vm1',
                           "step 2 (pause)", "step kind 'pause'")

    def test_compute_node_stats(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '  expect: {compute_nodes: {src: {stats: '
                           '{num_instances: 1}}}}',
                           'step 1 (boot): expect: compute_nodes',
                           'src: stats')

    def test_a_compute_started_with_a_changed_config(self):
        self.assertRefused('- stop_compute: src\n'
                           '- start_compute: {host: src, config: '
                           '{DEFAULT: {cpu_allocation_ratio: 2.0}}}',
                           'step 2 (start_compute)', "field 'config'")

    def test_an_injection_without_a_compute_method(self):
        # The conductor's RPC endpoint keeps a method once dispatched.
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: conductor.migrate_server, '
                           'run: update_available_resource, on: src}\n'
                           '- resize: {server: vm1, flavor: large}',
                           'step 2 (inject)', "point 'conductor."
                           "migrate_server' (no single compute method")

    def test_a_compute_dying_at_a_record_change_of_a_called_method(self):
        # 'confirmed' is saved in confirm_resize, a cast, but also in the
        # cross cell confirm's confirm_snapshot_based_resize_at_source, a
        # call: not known to be cast-only.
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- resize: {server: vm1, flavor: large}\n'
                           '- inject: {after: migration.status=confirmed, '
                           'stop: src}\n'
                           '- confirm: vm1\n'
                           '  error: did not reach its resting state',
                           'step 3 (inject)',
                           "stop at 'migration.status=confirmed' (a "
                           "compute's death at a record change not known "
                           'to be made only in a method cast to it)')

    def test_a_compute_dying_while_the_conductor_runs_a_task(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {after: conductor.MigrationTask, '
                           'stop: src}\n'
                           '- migrate: vm1\n'
                           '  error: did not reach its resting state',
                           'step 2 (inject)',
                           "stop at 'conductor.MigrationTask' (a compute's "
                           'death while the conductor runs a task)')

    def test_a_check_of_a_key_without_translation(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- resize: {server: vm1, flavor: large}\n'
                           '- inject: {before: tracker.drop_move_claim_at_'
                           'dest, check: {tracker: {src: {vcpus_used: '
                           '1}}}}\n'
                           '- revert: vm1',
                           'step 3 (inject): check: tracker',
                           "the record's fields")

    def test_a_request_other_than_a_delete_at_a_record_change(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {after: migration.status=preparing, '
                           'do: {abort_live_migration: vm1}}\n'
                           '- live_migrate: {server: vm1, host: dst}',
                           'step 2 (inject)',
                           "do 'abort_live_migration' at a record's change")

    def test_a_compute_dying_at_a_method_called_on_it(self):
        # Its caller would wait rpc_response_timeout in Nova's tests; the
        # harness's gets MessagingTimeout at once.
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: pre_live_migration, '
                           'stop: dst}\n'
                           '- live_migrate: {server: vm1, host: dst}\n'
                           '  error: did not reach its resting state',
                           'step 2 (inject)', "stop at 'pre_live_migration'")

    def test_a_dying_step_with_another_error(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: finish_resize, stop: dst}\n'
                           '- resize: {server: vm1, flavor: large}\n'
                           '  error: is gone',
                           'step 3 (resize)', "error 'is gone'")

    def test_a_request_at_a_point_other_than_delete_or_abort(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: pre_live_migration, '
                           'do: {force_complete_live_migration: vm1}}\n'
                           '- live_migrate: {server: vm1, host: dst}',
                           'step 2 (inject)',
                           "do 'force_complete_live_migration'")

    def test_a_request_at_a_conductor_task(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: conductor.MigrationTask, '
                           'do: {delete: vm1}}\n'
                           '- migrate: vm1',
                           'step 2 (inject)', "point 'conductor."
                           "MigrationTask' (no single compute or scheduler "
                           'method to wrap)')

    def test_a_request_at_a_conductor_method(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: conductor.migrate_server, '
                           'do: {delete: vm1}}\n'
                           '- migrate: vm1',
                           'step 2 (inject)', "point 'conductor."
                           "migrate_server'")

    def test_a_live_migration_whose_driver_fails(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- fault: {host: src, method: live_migration}\n'
                           '- live_migrate: {server: vm1, host: dst}\n'
                           "  error: 'injected hypervisor fault: "
                           "live_migration failed on src'\n"
                           '  expect: {servers: {vm1: ERROR}}',
                           'step 3 (live_migrate)', 'no instance fault')

    def test_an_injection_other_than_a_periodic(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- inject: {before: resize_instance, '
                           'restart: src}\n'
                           '- resize: {server: vm1, flavor: large}\n'
                           '  error: did not reach its resting state',
                           'step 2 (inject)', "field 'restart'")

    def test_a_forced_evacuation(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '- stop_compute: src\n'
                           '- advance_clock: 61\n'
                           '- evacuate: {server: vm1, host: dst, force: '
                           'true}', 'step 4 (evacuate)', "field 'force'")

    def test_a_step_expected_to_fail(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '- shelve: vm1\n'
                           '  error: No valid host',
                           'step 2 (shelve): error',
                           'expected to fail')

    def test_an_error_of_the_api(self):
        # A boot the API refuses is translated (test_a_boot_over_a_
        # unified_limit); a move's refusal is not.
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '- migrate: vm1\n'
                           '  error: Quota exceeded',
                           'step 2 (migrate)', "error 'Quota exceeded' (not "
                           "an operation that ended short of its resting "
                           "state)")

    def test_an_unrested_step_without_the_status_to_wait_for(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '  error: did not reach its resting state',
                           'step 1 (boot)', 'no status expected for vm1')

    def test_a_failing_driver_started_again(self):
        head = HEAD.replace('src: {driver: fake}',
                            'src: {driver: fake, fail: confirm_migration}')
        self.assertRefused('- stop_compute: src\n- start_compute: src',
                           "host 'src'", 'a failing driver (fail:) started '
                           'again', head=head)

    def test_a_shelve_offloaded_later(self):
        head = HEAD.replace('    hosts:\n', '    config:\n      DEFAULT: '
                            '{shelved_offload_time: -1}\n    hosts:\n')
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '- shelve: vm1', 'config', 'shelved_offload_time'
                           ' -1', head=head)

    def test_a_fault_armed_at_a_conductor_method(self):
        self.assertRefused("- fault: {placement: 'PUT /allocations/*', "
                           'status: 500, at: {before: '
                           'conductor.build_instances}}\n'
                           '- boot: {server: vm1, flavor: small}',
                           'step 1 (fault)',
                           "point 'conductor.build_instances'")

    def test_a_port_on_a_boot_not_waited_for(self):
        # The build's network thread is made synchronous while the boot
        # is waited for (steps._port_built): not for a build a compute
        # dies in.
        self.assertRefused(
            '- inject: {before: build_and_run_instance, stop: src}\n'
            '- boot: {server: vm1, flavor: small, host: src, port: true}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: {status: BUILD, host: null}}}',
            'step 2 (boot)', "port True (a boot not waited for)")

    def test_an_expectation_key_without_translation(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '  expect: {guest_cpus: {vm1: {0: 2}}}',
                           'step 1 (boot): expect: guest_cpus',
                           "expectation key 'guest_cpus'")

    def test_a_server_node(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '  expect: {servers: {vm1: {node: src}}}',
                           'expect: servers', 'vm1: node')

    def test_a_tracker_given_by_its_fields(self):
        self.assertRefused('- boot: {server: vm1, flavor: small, host: src}\n'
                           '  expect: {tracker: {src: {vcpus_used: 1}}}',
                           'expect: tracker', "the record's fields")

    def test_a_profiled_host(self):
        # A profile the harness ships (harness/bugs/lp1633120.yaml's).
        head = HEAD.replace('src: {driver: fake}',
                            'src: {profile: dev-1s-8c-smt2}')
        self.assertRefused('- boot: {server: vm1, flavor: small}',
                           "host 'src'", 'profiled host', head=head)

    def test_flavor_extra_specs(self):
        head = HEAD.replace('small: {vcpus: 1, ram: 512, disk: 1}',
                            'small: {vcpus: 1, ram: 512, disk: 1, '
                            'extra_specs: {"hw:mem_page_size": large}}')
        self.assertRefused('- boot: {server: vm1, flavor: small}',
                           "flavor 'small'", 'extra specs', head=head)

    def test_with_harness_without_a_bug_puts_none_back(self):
        # --with-harness lets the test import the harness where it needs
        # it: without a bug there is nothing to put back, and these hosts
        # need no options of their own: no harness import.
        path = self.path('- boot: {server: vm1, flavor: small}',
                         head=HEAD.replace(
                             'bug: {id: 1, title: a test bug, fix: abc, '
                             'story: s}\n', ''))
        source = nova_test.export(path, with_harness=True)
        self.assertNotIn('harness', source.split('"""')[2])
        self.assertNotIn('HARNESS_REINTRODUCE', source)


class WithHarnessTest(ExportTestCase):

    def test_default_mode_imports_no_harness(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        self.assertNotIn('harness import', source)
        self.assertNotIn('HARNESS_REINTRODUCE', source)

    def test_with_harness_puts_the_bug_back_on_request(self):
        source = self.export('- boot: {server: vm1, flavor: small}',
                             with_harness=True)
        self.assertIn('from harness import bugs', source)
        self.assertIn("        if os.environ.get('HARNESS_REINTRODUCE'):\n"
                      "            self.useFixture(bugs.get('1')."
                      "reintroduce())", source)

    def test_with_harness_puts_back_no_bug_whose_fix_cannot_be(self):
        # A bug file that says why its fix cannot be put back (as
        # harness/bugs/lp1983753.yaml does): Bug.reintroduce() raises for
        # it, so the test gets no lines that could only call it.
        head = HEAD.replace(
            'bug: {id: 1, title: a test bug, fix: abc, story: s}',
            'bug: {id: 1, title: a test bug, fix: abc, story: s, '
            'no_reintroduction: the fix is in a library}')
        source = self.export('- boot: {server: vm1, flavor: small}',
                             with_harness=True, head=head)
        self.assertNotIn('HARNESS_REINTRODUCE', source)
        self.assertNotIn('from harness import bugs', source)


class CliTest(ExportTestCase):

    def run_cli(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        return cli.main(list(argv), out=out), out.getvalue(), err.getvalue()

    def test_writes_the_test(self):
        path = self.path('- boot: {server: vm1, flavor: small}')
        target = os.path.join(self.tmp, 'test_bug_1.py')
        code, out, err = self.run_cli('export', 'nova-test', path,
                                      '-o', target)
        self.assertEqual((0, '', ''), (code, out, err))
        with open(target) as f:
            self.assertEqual(nova_test.export(path), f.read())

    def test_to_stdout_with_another_bug(self):
        path = self.path('- boot: {server: vm1, flavor: small}')
        code, out, err = self.run_cli('export', 'nova-test', path,
                                      '--bug', '7')
        self.assertEqual(0, code)
        self.assertIn('class TestBug7(', out)

    def test_a_refusal_is_bad_input(self):
        path = self.path('- boot: {server: vm1, flavor: small}\n'
                         '- pause: vm1')
        code, out, err = self.run_cli('export', 'nova-test', path)
        self.assertEqual((2, ''), (code, out))
        self.assertIn("step 2 (pause): no faithful Nova translation", err)
