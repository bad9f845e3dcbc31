"""``harness export nova-test``: hosts of several compute nodes (no Nova).

A host ``{driver: fake, nodes: [...]}`` is Nova's fake driver with
several nodes (``harness.export.nodes``), as Nova's tests of LP#1839560
and LP#1853009 run it; the steps of the bare-metal service and the
expectations by node each have a unit. Whether the exported tests pass
on Nova (and fail with the bug put back, or at the finding's step) is
proved by ``tests/export/test_nova_proofs.py``.
"""

import ast

import testtools

from tests.unit import test_export

HEAD = '''\
bug: {id: 1, title: a test bug, fix: abc, story: s}
scenarios:
  - name: the scenario
    hosts:
      bm1: {driver: fake, nodes: [n1, n2]}
      bm2: {driver: fake, nodes: [n3]}
    flavors:
      full: {vcpus: 2, ram: 7680, disk: 10}
    steps:
'''


class NodesExportTest(test_export.ExportTestCase):

    def export(self, steps, head=HEAD, **kwargs):
        return super().export(steps, head=head, **kwargs)

    def assertRefused(self, steps, *words, head=HEAD):
        return super().assertRefused(steps, *words, head=head)

    def body(self, steps):
        """The test method's lines after the hosts and flavors."""
        source = self.export(steps)
        method = source[source.index('    def test_the_scenario'):]
        lines = [line.strip() for line in method.splitlines()
                 if line.strip()]
        first = [line for line in lines if line.startswith('# 1. ')][0]
        return lines[lines.index(first):]

    def helper(self, source, name):
        """The source of the exported class's method ``name``, once."""
        found = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.FunctionDef) and node.name == name]
        self.assertEqual(1, len(found), name)
        return ast.unparse(found[0])

    def test_a_host_of_several_nodes_is_nova_s_fake_driver(self):
        # Before: "driver 'harness_ironic.Nodes:n1,n2' is not one of
        # Nova's fake drivers". The harness's driver is MediumFakeDriver
        # listing the scenario's nodes: so is the test's, its nodes set
        # before it starts (FakeDriver.init_host would list the host's
        # own name), every record flagged mapped as the harness maps them.
        source = self.export('- run_periodic: update_available_resource')
        self.assertIn("compute_driver = 'fake.MediumFakeDriver'", source)
        self.assertIn(
            "        self.node_names = ['n1', 'n2', 'n3']\n"
            "        self.host_nodes = {'bm1': ['n1', 'n2'], "
            "'bm2': ['n3']}\n"
            "        self._set_nodes('bm1', ['n1', 'n2'])\n"
            "        self._set_nodes('bm2', ['n3'])\n"
            "        for host in ['bm1', 'bm2']:\n"
            "            self.computes[host] = self._start_compute(host)\n"
            "            self._schedule(host)\n"
            "        self._flag_mapped('bm1')\n"
            "        self._flag_mapped('bm2')\n", source)
        self.assertIn('        self._multi_node_driver()\n', source)
        self.assertIn('from nova.virt import fake as fake_driver', source)
        driver = self.helper(source, '_multi_node_driver')
        self.assertIn("'nova.virt.fake.FakeDriver.init_host', init_host",
                      driver)
        self.assertIn("'nova.virt.fake.FakeDriver.is_node_deleted', "
                      "is_node_deleted", driver)
        # As Nova's Ironic driver (and the harness's): no remote-managed
        # ports, a trait less on the nodes' providers.
        self.assertIn('supports_remote_managed_ports=False', driver)
        self.helper(source, '_flag_mapped')

    def test_the_expectations_read_by_node(self):
        # The class's provider and usage helpers read the nodes the
        # scenario names; its tracker helper is replaced by its by-node
        # version, not defined twice.
        source = self.export('- boot: {server: vm1, flavor: full, '
                             'host: bm1}\n'
                             '  expect: {usages: {n1: full}, '
                             'providers: [n1, n2, n3], '
                             'allocations: {vm1: {n1: full}}}')
        self.assertIn("if rp['name'] in self.node_names}",
                      self.helper(source, '_providers'))
        self.assertIn('for host in sorted(self.node_names):',
                      self.helper(source, 'assertUsages'))
        self.helper(source, 'assertTrackers')
        self.assertIn("        self.assertUsages({\n"
                      "            'n1': {'DISK_GB': 10, 'MEMORY_MB': 7680, "
                      "'VCPU': 2},\n        })", source)
        self.assertIn("        self.assertProviders(['n1', 'n2', 'n3'])",
                      source)

    def test_a_host_s_nodes_summed_in_tracker(self):
        # Which node holds which guest is the scheduler's choice: the
        # harness sums a host's nodes' trackers when the host is named.
        source = self.export('- boot: {server: vm1, flavor: full, '
                             'host: bm1}\n'
                             '  expect: {tracker: {bm1: full}}')
        self.assertIn("        self.assertTrackers({\n"
                      "            'bm1': {\n"
                      "                'local_gb_used': 10,\n"
                      "                'memory_mb_used': 7680,\n"
                      "                'vcpus_used': 2,\n"
                      "            },\n        })", source)
        trackers = self.helper(source, 'assertTrackers')
        self.assertIn('self.host_nodes.items()', trackers)
        self.assertIn("summed", trackers)

    def test_remove_and_add_a_node(self):
        self.assertEqual(
            ['# 1. remove node n2 from bm1',
             "self._remove_node('bm1', 'n2')",
             '# 2. run update_available_resource on bm1',
             "for host in ['bm1']:",
             'self.computes[host].manager.update_available_resource(',
             'self.context)',
             '# 3. add node n2 to bm1',
             "self._add_node('bm1', 'n2')"],
            self.body('- remove_node: {host: bm1, node: n2}\n'
                      '- run_periodic: {task: update_available_resource, '
                      'host: bm1}\n'
                      '- add_node: {host: bm1, node: n2}'))

    def test_a_node_added_and_a_periodic_run_as_a_host_asks(self):
        # LP#1853009's race: as bm1 has asked its driver whether n1 was
        # deleted, n1 is enrolled for bm2 and bm2's periodic takes it
        # over. Before: "point 'is_node_deleted' (no single compute
        # method to wrap)".
        body = self.body(
            '- remove_node: {host: bm1, node: n1}\n'
            '- add_node: {host: bm2, node: n1, at: {after: '
            'is_node_deleted, host: bm1}}\n'
            '- inject: {after: is_node_deleted, at_host: bm1, '
            'run: update_available_resource, on: bm2}\n'
            '- run_periodic: {task: update_available_resource, '
            'host: bm1}')
        self.assertEqual(
            ['# 2. add node n1 to bm2 after is_node_deleted',
             'self._at_node_check(',
             "'after', 'bm1',",
             "lambda: self._add_node('bm2', 'n1'))",
             '# 3. inject after is_node_deleted: '
             'update_available_resource on bm2',
             'self._at_node_check(',
             "'after', 'bm1',",
             "lambda: self.computes['bm2'].manager."
             "update_available_resource(self.context))"], body[2:10])
        source = self.export(
            '- remove_node: {host: bm1, node: n1}\n'
            '- inject: {after: is_node_deleted, '
            'run: update_available_resource, on: bm2}\n'
            '- run_periodic: update_available_resource')
        # Fired by the patched is_node_deleted, not by a wrapped compute
        # method: the compute injection helpers are not needed.
        self.assertIn("self._at_node_check(\n            'after', None,",
                      source)
        self.assertNotIn('def _arm(', source)
        self.assertIn("self._fire_node_checks('after', driver._host)",
                      self.helper(source, '_multi_node_driver'))

    def test_an_injection_where_a_host_asks_needs_a_host(self):
        self.assertRefused(
            '- boot: {server: vm1, flavor: full, host: bm1}\n'
            '- remove_node: {host: bm1, node: n2}\n'
            '- inject: {after: is_node_deleted, '
            'run: update_available_resource, on: server_host, '
            'server: vm1}\n'
            '- run_periodic: update_available_resource',
            "step 3 (inject)", "field 'server'", head=HEAD)

    def test_rebalance_a_node(self):
        self.assertEqual(
            ['# 1. rebalance node n2 from bm1 to bm2',
             "self._rebalance_node('n2', 'bm1', 'bm2')"],
            self.body('- rebalance_node: {node: n2, to: bm2}'))

    def test_destroy_a_compute_node_record(self):
        self.assertEqual(
            ['# 1. destroy compute node n1',
             "self._destroy_compute_node('n1')",
             '# 2. destroy compute node n3 and its provider',
             "self._destroy_compute_node('n3', provider=True)"],
            self.body('- destroy_compute_node: {node: n1}\n'
                      '- destroy_compute_node: {node: n3, provider: true}'))
        # A host's own record, on hosts of one node each: the helpers
        # by node all the same.
        source = super().export('- destroy_compute_node: {node: src}')
        self.assertIn("self._destroy_compute_node('src')", source)
        self.assertIn("self.node_names = ['dst', 'src']", source)
        self.assertIn('report_client.SchedulerReportClient()'
                      '.delete_resource_provider(',
                      self.helper(source, '_destroy_compute_node'))

    def test_archive_deleted_rows(self):
        # As Nova's test of LP#1839560 archives, on the cell's database.
        self.assertEqual(
            ['# 1. archive deleted rows',
             'with context.target_cell(',
             "self.context, self.cell_mappings['cell1']) as cctxt:",
             'archived = db_api.archive_deleted_rows(',
             'cctxt, max_rows=1000)[0]',
             "self.assertEqual(0, archived.get('compute_nodes', 0), "
             "'rows archived from compute_nodes')"],
            self.body('- archive_deleted_rows: '
                      '{archives: {compute_nodes: 0}}'))
        self.assertIn('from nova.db.main import api as db_api',
                      self.export('- archive_deleted_rows: {}'))

    def test_hypervisors(self):
        source = self.export('- run_periodic: update_available_resource\n'
                             '  expect: {hypervisors: {n1: {}, n2: '
                             '{state: up, status: enabled}, n3: {}}}')
        self.assertIn("        self.assertHypervisors({\n"
                      "            'n1': {},\n"
                      "            'n2': {'state': 'up', 'status': "
                      "'enabled'},\n"
                      "            'n3': {},\n        })", source)
        self.assertIn("'/os-hypervisors/detail'",
                      self.helper(source, 'assertHypervisors'))

    def test_a_host_with_no_node_is_refused(self):
        self.assertRefused(
            '- run_periodic: update_available_resource',
            "host 'bm2'", 'a host that manages no node',
            head=HEAD.replace('nodes: [n3]', 'nodes: []'))

    def test_a_restart_of_a_host_of_several_nodes_is_refused(self):
        # Nova keys its node identity and host-rename checks on the
        # driver's name, which says ironic in the harness only.
        self.assertRefused('- stop_compute: bm1\n'
                           '- start_compute: bm1',
                           'step 1 (stop_compute)',
                           'a restart of a host of several nodes')

    def test_a_node_rebalanced_while_a_server_lives_is_refused(self):
        # The harness's driver keeps listing a node holding an instance
        # of its host; Nova's fake driver lists what it is given.
        self.assertRefused('- boot: {server: vm1, flavor: full, '
                           'host: bm1}\n'
                           '- rebalance_node: {node: n2, to: bm2}',
                           'step 2 (rebalance_node)', 'server vm1 lives')
        # Once the server is gone, it is translated.
        self.assertIn("self._rebalance_node('n2', 'bm1', 'bm2')",
                      self.export('- boot: {server: vm1, flavor: full, '
                                  'host: bm1}\n'
                                  '- delete: vm1\n'
                                  '- rebalance_node: {node: n2, to: bm2}'))

    def test_a_plain_class_keeps_its_own_helpers(self):
        # Hosts of one node each, no node step: the class as before.
        source = super().export('- boot: {server: vm1, flavor: small}')
        self.assertNotIn('_multi_node_driver', source)
        self.assertNotIn('node_names', source)
        self.assertIn("if rp['name'] in self.computes}",
                      self.helper(source, '_providers'))

    def test_what_is_armed_where_a_host_asks_fires_once_there(self):
        # The exported helpers run: an action fires at the next ask of
        # its host only, once, in arming order; one never fired fails
        # the test after its last step, as the harness fails the run.
        source = self.export(
            '- remove_node: {host: bm1, node: n1}\n'
            '- add_node: {host: bm2, node: n1, at: {after: '
            'is_node_deleted, host: bm1}}\n'
            '- run_periodic: {task: update_available_resource, '
            'host: bm1}')
        method = source[source.index('    def test_the_scenario'):]
        self.assertTrue(method.rstrip().endswith(
            '\n\n        self.assertNodeChecksFired()'), method)
        helpers = {}
        for name in ('_at_node_check', '_fire_node_checks',
                     'assertNodeChecksFired'):
            exec(compile(ast.parse(self.helper(source, name)),
                         '<exported>', 'exec'), helpers)

        class Exported(testtools.TestCase):
            _at_node_check = helpers['_at_node_check']
            _fire_node_checks = helpers['_fire_node_checks']
            assertNodeChecksFired = helpers['assertNodeChecksFired']

            def test(self):
                pass

        case = Exported('test')
        case._node_checks = []
        ran = []
        case._at_node_check('after', 'bm1', lambda: ran.append('add'))
        case._at_node_check('after', None, lambda: ran.append('run'))
        error = self.assertRaises(AssertionError,
                                  case.assertNodeChecksFired)
        self.assertIn('after is_node_deleted on bm1', str(error))
        # Another host's ask, or before: the first one stays armed.
        case._fire_node_checks('after', 'bm2')
        case._fire_node_checks('before', 'bm1')
        self.assertEqual(['run'], ran)
        case._fire_node_checks('after', 'bm1')
        case._fire_node_checks('after', 'bm1')
        self.assertEqual(['run', 'add'], ran)
        case.assertNodeChecksFired()
