"""Multi-node hosts and their node steps: what the loader takes and refuses.

Hosts given ``nodes:``, ``remove_node``, ``add_node``, ``rebalance_node``
and ``destroy_compute_node`` (``harness.core.steps.nodes``), expectations
naming nodes, and the invariants' view of a host with several nodes. No
Nova service runs here.
"""

from harness.core import errors
from harness.core import expect
from harness.core import invariants
from harness.core.problems import Problem
from harness.core import scenario
from harness.core import snapshot
from harness.core import steps
from harness.core.steps import nodes as nodes_step
from harness import testing

from tests.unit import refusals

PATH = 'nodes.yaml'
HEAD = """\
name: nodes
hosts:
  bm1: {driver: fake, nodes: [n1, n2]}
  bm2: {driver: fake, nodes: []}
  plain: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
"""


def _load(body, head=HEAD):
    return scenario.load_file(PATH, head + body)[1][0]


def _hosts(hosts):
    return ('name: nodes\nhosts:\n%s\nflavors:\n  small: {vcpus: 1, ram: '
            '512, disk: 1}\nsteps:\n  - run_periodic: '
            'update_available_resource\n' % hosts)


class TestHostsWithNodes(testing.TestCase):

    def refused(self, text, field, *fragments):
        exc = self.assertRaises(errors.ScenarioError, scenario.load_file,
                                PATH, text)
        message = str(exc)
        self.assertIn('field "%s"' % field, message)
        for fragment in fragments:
            self.assertIn(fragment, message)

    def test_nodes_by_name_and_by_count(self):
        loaded = _load('  - run_periodic: update_available_resource\n',
                       head=_hosts('  bm: {driver: fake, nodes: [a, b]}\n'
                                   '  rack: {driver: fake, nodes: 2}\n'
                                   '  one: {driver: fake}'))
        self.assertEqual(('a', 'b'), loaded.hosts['bm'].nodes)
        self.assertEqual(('rack-n1', 'rack-n2'), loaded.hosts['rack'].nodes)
        self.assertIsNone(loaded.hosts['one'].nodes)
        self.assertEqual('harness_ironic.Nodes:a,b',
                         loaded.hosts['bm'].driver)
        self.assertEqual({'a', 'b', 'rack-n1', 'rack-n2', 'one'},
                         loaded.providers())

    def test_counted_hosts_get_counted_nodes(self):
        loaded = scenario.load_file(PATH, _hosts(
            '  r: {driver: fake, count: 2, nodes: 2}'))[1][0]
        self.assertEqual(('r1-n1', 'r1-n2'), loaded.hosts['r1'].nodes)
        self.assertEqual(('r2-n1', 'r2-n2'), loaded.hosts['r2'].nodes)

    def test_no_nodes_is_a_service_managing_none(self):
        loaded = scenario.load_file(PATH, _hosts(
            '  bm: {driver: fake, nodes: []}'))[1][0]
        self.assertEqual((), loaded.hosts['bm'].nodes)
        self.assertEqual(set(), loaded.providers())

    def test_a_profiled_host_has_one_node(self):
        self.refused(_hosts('  h: {profile: dev-1s-8c-smt2, nodes: [a]}'),
                     'hosts.h.nodes', 'libvirt driver, which manages one')

    def test_nodes_need_the_fake_driver(self):
        self.refused(_hosts('  h: {nodes: [a]}'), 'hosts.h.nodes',
                     'only a host with "driver: fake"')

    def test_nodes_and_a_fault_do_not_mix(self):
        self.refused(_hosts('  h: {driver: fake, fail: confirm_migration, '
                            'nodes: [a]}'), 'hosts.h.nodes',
                     'hypervisor fault')

    def test_a_node_on_two_hosts_is_refused(self):
        self.refused(_hosts('  h1: {driver: fake, nodes: [a]}\n'
                            '  h2: {driver: fake, nodes: [a]}'),
                     'hosts.h2.nodes', 'node a is on h1 already')

    def test_a_node_named_like_a_host_is_refused(self):
        self.refused(_hosts('  h1: {driver: fake, nodes: [h2]}\n'
                            '  h2: {driver: fake}'),
                     'hosts.h1.nodes', 'named like a host')

    def test_bad_node_names_and_counts(self):
        self.refused(_hosts('  h: {driver: fake, nodes: [a.b]}'),
                     'hosts.h.nodes', 'not a node name')
        self.refused(_hosts('  h: {driver: fake, nodes: [a, a]}'),
                     'hosts.h.nodes', 'named twice')
        self.refused(_hosts('  h: {driver: fake, nodes: 0}'),
                     'hosts.h.nodes', 'at least 1')
        self.refused(_hosts('  h: {driver: fake, nodes: {a: 1}}'),
                     'hosts.h.nodes', 'expected a list')
        self.refused(_hosts('  h: {driver: fake, count: 2, nodes: [a]}'),
                     'hosts.h.nodes', 'give them a number of nodes')


class TestNodeSteps(testing.TestCase):

    def refused(self, body, field, *fragments):
        return refusals.refused(self, PATH, field, fragments, _load,
                                body)

    def test_a_node_leaves_comes_back_and_moves(self):
        loaded = _load(
            '  - remove_node: {host: bm1, node: n2}\n'
            '  - add_node: {host: bm2, node: n2}\n'
            '  - rebalance_node: {node: n1, to: bm2}\n'
            '  - rebalance_node: {node: n1, to: bm1}\n')
        self.assertEqual(
            ['remove node n2 from bm1', 'add node n2 to bm2',
             'rebalance node n1 from bm1 to bm2',
             'rebalance node n1 from bm2 to bm1'],
            [step.label for step in loaded.steps])
        self.assertEqual(
            [{'n2': 'bm1'}, {'n2': 'bm2'}, {'n1': 'bm2'}, {'n1': 'bm1'}],
            [step.unit.pending(step.args) for step in loaded.steps])
        self.assertFalse(any(steps.get(kind).operation for kind in
                             ('remove_node', 'add_node', 'rebalance_node')))

    def test_remove_refusals(self):
        self.refused('  - remove_node: {host: bm1, node: n9}\n',
                     'remove_node.node', "unknown node 'n9'")
        self.refused('  - remove_node: {host: bm2, node: n1}\n',
                     'remove_node.node', 'node n1 is on bm1, not bm2')
        self.refused('  - remove_node: {host: plain, node: n1}\n',
                     'remove_node.host', 'manages one node of its own')
        self.refused('  - remove_node: {host: bm1}\n',
                     'remove_node.node', 'missing')
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - remove_node: {host: bm1, node: n1}\n',
                     'remove_node.node', 'it was removed')

    def test_add_refusals(self):
        self.refused('  - add_node: {host: bm1, node: n1}\n',
                     'add_node.node', 'on bm1 already')
        self.refused('  - add_node: {host: bm1, node: n7}\n',
                     'add_node.node', "unknown node 'n7'")
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - stop_compute: bm2\n'
                     '  - delete_service: bm2\n'
                     '  - add_node: {host: bm2, node: n1}\n',
                     'add_node.host', 'was deleted')

    def test_rebalance_refusals(self):
        self.refused('  - rebalance_node: {node: n1, to: bm1}\n',
                     'rebalance_node.to', 'on bm1 already')
        self.refused('  - rebalance_node: {node: n1, to: plain}\n',
                     'rebalance_node.to', 'manages one node')
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - rebalance_node: {node: n1, to: bm2}\n',
                     'rebalance_node.node', 'it was removed')
        self.refused('  - rebalance_node: {node: n1, to: bm2, host: bm1}\n',
                     'rebalance_node.host', 'unknown field')

    def test_an_add_armed_at_a_race_point(self):
        loaded = _load(
            '  - remove_node: {host: bm1, node: n1}\n'
            '  - add_node: {host: bm2, node: n1, at: {after: '
            'is_node_deleted, host: bm1}}\n'
            '  - run_periodic: {task: update_available_resource, '
            'host: bm1}\n')
        self.assertEqual({'when': 'after', 'point': 'is_node_deleted',
                          'host': 'bm1'}, loaded.steps[1].args['at'])
        self.assertEqual('add node n1 to bm2 after is_node_deleted',
                         loaded.steps[1].label)

    def test_an_armed_add_needs_a_later_step_at_its_point(self):
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - add_node: {host: bm2, node: n1, at: {after: '
                     'is_node_deleted}}\n'
                     '  - boot: {server: vm1, flavor: small}\n',
                     'add_node.at', 'no later step passes race point')
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - add_node: {host: bm2, node: n1, at: {when: x}}\n',
                     'add_node.at.when', 'unknown field')
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - add_node: {host: bm2, node: n1, at: {after: '
                     'x, host: nowhere}}\n',
                     'add_node.at.host', 'unknown host')

    def test_a_compute_node_record_destroyed(self):
        loaded = _load('  - destroy_compute_node: {node: n2}\n'
                       '  - destroy_compute_node: {node: plain, provider: '
                       'true}\n')
        self.assertEqual(
            [{'node': 'n2', 'provider': False, 'host': 'bm1'},
             {'node': 'plain', 'provider': True, 'host': 'plain'}],
            [step.args for step in loaded.steps])
        self.assertEqual(['destroy compute node n2',
                          'destroy compute node plain and its provider'],
                         [step.label for step in loaded.steps])
        # Until its owner's next periodic Placement has not caught up.
        kind = steps.get('destroy_compute_node')
        self.assertEqual({'n2': 'bm1'}, kind.pending(loaded.steps[0].args))
        self.assertFalse(kind.arms)

    def test_a_destroyed_record_must_be_a_known_live_node(self):
        self.refused('  - destroy_compute_node: {node: n9}\n',
                     'destroy_compute_node.node', "unknown node 'n9'",
                     'n1, n2, plain')
        # A multi-node host is no node of its own.
        self.refused('  - destroy_compute_node: {node: bm1}\n',
                     'destroy_compute_node.node', "unknown node 'bm1'")
        self.refused('  - remove_node: {host: bm1, node: n1}\n'
                     '  - destroy_compute_node: {node: n1}\n',
                     'destroy_compute_node.node', 'it was removed')
        self.refused('  - stop_compute: plain\n'
                     '  - delete_service: plain\n'
                     '  - destroy_compute_node: {node: plain}\n',
                     'destroy_compute_node.node', 'was deleted')
        self.refused('  - destroy_compute_node: {node: n1, provider: 1}\n',
                     'destroy_compute_node.provider', 'true or false')
        self.refused('  - destroy_compute_node: {node: n1, host: bm1}\n',
                     'destroy_compute_node.host', 'unknown field')
        self.refused('  - destroy_compute_node: n1\n',
                     'destroy_compute_node', 'expected a mapping')

    def test_driver_names(self):
        self.assertEqual('harness_ironic.Nodes:a,b',
                         nodes_step.driver_name(('a', 'b')))
        self.assertEqual('harness_ironic.Nodes:',
                         nodes_step.driver_name(()))


class TestExpectNamesNodes(testing.TestCase):

    def refused(self, body, field, *fragments):
        exc = self.assertRaises(errors.ScenarioError, _load, body)
        self.assertIn('field "%s"' % field, str(exc))
        for fragment in fragments:
            self.assertIn(fragment, str(exc))

    def test_nodes_not_their_host(self):
        loaded = _load(
            '  - boot: {server: vm1, flavor: small, host: bm1}\n'
            '    expect:\n'
            '      allocations: {vm1: {n1: small}}\n'
            '      usages: {n1: small, plain: {}}\n'
            '      tracker: {n1: small}\n'
            '      providers: [n1, n2, plain]\n'
            '      servers: {vm1: {host: bm1, node: n1}}\n')
        want = loaded.steps[0].expect
        self.assertEqual({'vm1': {'n1': {'VCPU': 1, 'MEMORY_MB': 512,
                                         'DISK_GB': 1}}},
                         want['allocations'])
        self.assertEqual(['n1', 'n2', 'plain'], want['providers'])
        self.refused('  - boot: {server: vm1, flavor: small, host: bm1}\n'
                     '    expect: {usages: {bm1: small}}\n',
                     'expect.usages.host', "unknown host 'bm1'")
        self.refused('  - boot: {server: vm1, flavor: small, host: bm1}\n'
                     '    expect: {servers: {vm1: {node: bm1}}}\n',
                     'expect.servers.vm1.node', 'unknown node')

    def test_a_node_without_a_record_counts_nothing_unless_named(self):
        loaded = _load('  - remove_node: {host: bm1, node: n2}\n')
        snap = snapshot.Snapshot(
            providers={}, allocations={},
            trackers={name: snapshot.Tracker(host, name, 10, 0, 8192, 0,
                                             1028, 0)
                      for host, name in (('bm1', 'n1'), ('plain', 'plain'))})
        self.assertEqual([], expect.check({'tracker': {}}, snap, loaded))
        named = expect.check({'tracker': {'n2': {'guests': {
            'vcpus_used': 0, 'memory_mb_used': 0, 'local_gb_used': 0}}}},
            snap, loaded)
        self.assertEqual(['tracker n2'], [p.check + ' ' + p.subject
                                          for p in named])

    def test_a_host_with_nodes_counted_whole(self):
        loaded = _load('  - boot: {server: vm1, flavor: small, host: bm1}\n'
                       '    expect: {tracker: {bm1: small}}\n')
        want = loaded.steps[0].expect

        def tracker(host, node, vcpus):
            return snapshot.Tracker(host, node, 10, vcpus, 8192, 512 * vcpus,
                                    1028, vcpus)
        snap = snapshot.Snapshot(providers={}, allocations={}, trackers={
            'n1': tracker('bm1', 'n1', 0), 'n2': tracker('bm1', 'n2', 1),
            'plain': tracker('plain', 'plain', 0)})
        self.assertEqual([], expect.check(want, snap, loaded))
        snap.trackers['n1'] = tracker('bm1', 'n1', 1)
        self.assertEqual(['tracker bm1'], [p.check + ' ' + p.subject for p
                                           in expect.check(want, snap,
                                                           loaded)])
        self.refused('  - boot: {server: vm1, flavor: small, host: bm1}\n'
                     '    expect: {usages: {bm1: small}}\n',
                     'expect.usages.host', "unknown host 'bm1'")


def _provider(name):
    return snapshot.Provider(name=name, uuid=name, generation=1,
                             parent=None, root=name, inventories={},
                             usages={})


class TestInvariantsOnNodes(testing.TestCase):

    def _snap(self, node):
        trackers = {n: snapshot.Tracker('bm', n, 10, 0, 8192, 0, 1028, 0)
                    for n in ('n1', 'n2')}
        servers = {'vm1': snapshot.Server('vm1', 'u1', 'ACTIVE', 'bm', None,
                                          node=node)}
        return snapshot.Snapshot(
            providers={'n1': _provider('n1'), 'n2': _provider('n2')},
            allocations={'vm1': {'n1': {'VCPU': 1}}}, trackers=trackers,
            servers=servers)

    def test_a_server_holds_its_own_node_only(self):
        self.assertEqual(
            [], invariants.allocations_where_server_is(self._snap('n1')))
        found = invariants.allocations_where_server_is(self._snap('n2'))
        self.assertEqual(['vm1 on n1'], [p.subject for p in found])

    def test_pending_nodes_are_left_out_of_periodic_changes(self):
        for subject in ('provider n2', 'provider n2, VCPU',
                        'provider n2 generation', 'vm1 on n2'):
            self.assertTrue(invariants.about_providers(
                Problem('periodics_idempotent', subject), {'n2': 'bm'}))
        self.assertFalse(invariants.about_providers(
            Problem('periodics_idempotent', 'provider n1'), {'n2': 'bm'}))
