"""Compute nodes of a multi-node compute (Ironic-like): ``remove_node``,
``add_node`` and ``rebalance_node``; and ``destroy_compute_node``, of
any compute.

A fake host may manage several compute nodes, ``{driver: fake, nodes:
[n1, n2]}`` (or ``nodes: 3``: ``<host>-n1`` to ``<host>-n3``; ``nodes:
[]``: a service that manages none yet). Each node is its own compute node
record, resource provider (named by the node) and tracker, as with Nova's
Ironic driver; the fake driver behind it (``harness.cloud.nodes``) lists
the nodes the scenario gives its service, with the Ironic driver's rule
that a node holding an instance stays listed by the service of the
instance's host (``nova.virt.ironic.driver._refresh_cache``).

- ``remove_node: {host, node}``: the node is deleted from the bare-metal
  service: it leaves the host's list and its driver says it is deleted
  (``is_node_deleted``), so the host's next ``update_available_resource``
  deletes its compute node and resource provider (Nova's orphan clean-up).
  Ironic refuses to delete a node that holds an instance; so does the run.
- ``add_node: {host, node, at?}``: a removed node is enrolled again (back
  from maintenance), with the same UUID; the host's next periodic brings
  its compute node (undeleting the record) and provider back. With ``at:
  {before | after: point, host?}`` it is enrolled at that race point of a
  later step instead (on ``host`` only, if given), as ``inject`` arms a
  periodic: the point must be one a later step can pass.
- ``rebalance_node: {node, to}``: the hash ring gives the node to another
  service that shares the nodes (``to``, a multi-node host): the old one
  stops listing it (without deleting it), the new one lists it, and at the
  new host's next periodic Nova moves the compute node record to it
  (``_init_compute_node``). A node holding an instance stays with the
  instance's host until the instance is gone.

- ``destroy_compute_node: {node, provider?}``: the node's compute node
  record is deleted under its owner, as ``objects.ComputeNode.destroy()``
  deletes it (soft: kept with its UUID), and nothing else: the owner's
  tracker still caches it and its provider stays, unless ``provider:
  true`` deletes that too (with its allocations, as
  ``SchedulerReportClient.delete_resource_provider(cascade=True)`` does
  for another service's orphan clean-up, from a report client of its
  own: another process's). What another service's orphan clean-up did
  to a node it no longer owned before LP#1853009's fix. The owner's next
  ``update_available_resource`` makes the record again (Nova undeletes
  it by the node's UUID) and its provider if it went. Any node: a
  multi-node host's, or a host's own (named by the host).

A multi-node host passes the race point ``is_node_deleted`` (before and
after) in ``update_available_resource`` when it asks its driver whether a
node it no longer lists was deleted: the moment between Nova's read of the
host's compute nodes and its delete of an orphan (LP#1853009).

Until the periodic of the host concerned runs, Placement has not caught up:
the step's node is *pending* (``pending``), and ``periodics_idempotent``
does not count the provider the periodic creates, deletes or updates for
it as a change (``harness.core.invariants``).
"""

import re

from harness.core import errors
from harness.core.steps import base

#: The module the multi-node driver classes are found in under
#: ``nova.virt``: Nova treats a driver whose name says ``ironic`` as one
#: whose nodes move between services (no local node identity, no host
#: rename check at start: ``ComputeManager._check_for_host_rename``).
DRIVER_MODULE = 'harness_ironic'
DRIVER_PREFIX = 'Nodes:'
NODE_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$')
#: The most nodes one host may be given by count.
MAX_NODES = 100


def driver_name(nodes):
    """The ``compute_driver`` of a fake host that manages ``nodes``."""
    return '%s.%s%s' % (DRIVER_MODULE, DRIVER_PREFIX, ','.join(nodes))


def counted_nodes(host, count):
    """The nodes of ``nodes: <count>``: ``<host>-n1`` ... ."""
    return ['%s-n%d' % (host, number) for number in range(1, count + 1)]


def check_nodes(check, host, value, field):
    """The node names a host entry's ``nodes`` gives (a list or a count)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return counted_nodes(host, check.integer(value, field, minimum=1,
                                                 maximum=MAX_NODES))
    names = check.sequence(value, field)
    for name in names:
        check.string(name, field)
        if not NODE_NAME.match(name):
            check.fail(field, '%r is not a node name (letters, digits, _ '
                       'and -)' % name)
    if len(set(names)) != len(names):
        check.fail(field, 'a node is named twice')
    return list(names)


def _node_host(check, state, node, doing):
    if node not in state.all_nodes:
        check.fail('node', 'unknown node %r; the scenario\'s nodes: %s'
                   % (node, ', '.join(sorted(state.all_nodes)) or 'none'))
    if node in state.nodes_removed:
        check.fail('node', 'cannot %s %s: it was removed' % (doing, node))
    return state.node_hosts[node]


def _multi_node_host(check, scenario, state, host, field):
    check.known(host, scenario.hosts, field)
    if scenario.hosts[host].nodes is None:
        check.fail(field, 'host %s manages one node of its own; only a host '
                   'given "nodes:" has nodes that come and go' % host)
    if host in state.service_deleted:
        check.fail(field, 'the compute service of %r was deleted' % host)
    return host


class _NodeStep(base.StepKind):

    def read_fields(self, check, value):
        check.mapping(value, 'the step')
        check.keys(value, self.keys, required=self.keys)
        return dict(value)

    def pending(self, args):
        """Node -> the host whose next periodic brings Placement up to it."""
        return {args['node']: args.get('host') or args['to']}

    def reconciles(self, args, running):
        return set()


class RemoveNode(_NodeStep):
    name = 'remove_node'
    summary = ('Delete a compute node from the bare-metal service: its '
               'host\'s next periodic deletes its compute node and '
               'provider.')
    fields = {
        'host': ('host name', 'the multi-node host that has the node'),
        'node': ('node name', 'a node of that host that holds no instance'),
    }
    example = '''\
- remove_node: {host: bm, node: n2}
- run_periodic: {task: update_available_resource, host: bm}
  expect: {providers: [src, dst, n1, n3]}
'''
    keys = ('host', 'node')

    def parse(self, check, value, scenario, state, error):
        args = self.read_fields(check, value)
        host = _multi_node_host(check, scenario, state, args['host'], 'host')
        check.string(args['node'], 'node')
        owner = _node_host(check, state, args['node'], 'remove')
        if owner != host:
            check.fail('node', 'node %s is on %s, not %s'
                       % (args['node'], owner, host))
        state.nodes_removed.add(args['node'])
        return args

    def label(self, args):
        return 'remove node %s from %s' % (args['node'], args['host'])

    def run(self, cloud, args):
        cloud.nodes.remove(args['host'], args['node'])


class AddNode(_NodeStep):
    name = 'add_node'
    summary = ('Enrol a removed node again (back from maintenance): its '
               'host\'s next periodic brings its compute node back.')
    fields = {
        'host': ('host name', 'the multi-node host to give it to'),
        'node': ('node name', 'a node the scenario removed'),
        'at': ('{before | after: race point, host?}', 'enrol it at that '
               'race point of a later step (on ``host`` only, if given) '
               'instead of now'),
    }
    example = '''\
- remove_node: {host: bm, node: n2}
- run_periodic: {task: update_available_resource, host: bm}
- add_node: {host: bm, node: n2}
- run_periodic: {task: update_available_resource, host: bm}
  expect: {providers: [src, dst, n1, n2, n3]}
'''
    keys = ('host', 'node')

    def read_fields(self, check, value):
        check.mapping(value, 'the step')
        check.keys(value, self.keys + ('at',), required=self.keys)
        args = dict(value)
        if 'at' in args:
            args['at'] = base.race_point_at(check, args['at'])
        return args

    def parse(self, check, value, scenario, state, error):
        args = self.read_fields(check, value)
        if args.get('at') and args['at'].get('host') is not None:
            check.known(args['at']['host'], scenario.hosts, 'at.host')
        host = _multi_node_host(check, scenario, state, args['host'], 'host')
        node = check.string(args['node'], 'node')
        if node not in state.all_nodes:
            check.fail('node', 'unknown node %r; a node that comes back is '
                       'one of the scenario\'s nodes: %s'
                       % (node, ', '.join(sorted(state.all_nodes))))
        if node not in state.nodes_removed:
            check.fail('node', 'node %s is on %s already (remove it first)'
                       % (node, state.node_hosts[node]))
        state.nodes_removed.discard(node)
        state.node_hosts[node] = host
        return args

    def label(self, args):
        at = args.get('at')
        return 'add node %s to %s%s' % (
            args['node'], args['host'],
            ' %s %s' % (at['when'], at['point']) if at else '')

    def run(self, cloud, args):
        at = args.get('at')
        if not at:
            cloud.nodes.add(args['host'], args['node'])
            return None
        # Armed: what the runner keeps to say if it never fired.
        return cloud.race.at(at['point'], when=at['when'],
                             host=at.get('host')).call(
            lambda passage: cloud.nodes.add(args['host'], args['node']),
            'add node %s to %s' % (args['node'], args['host']))


class RebalanceNode(_NodeStep):
    name = 'rebalance_node'
    summary = ('Give a node to another service that shares the nodes, as '
               'the hash ring does; the new host\'s next periodic moves '
               'its compute node record.')
    fields = {
        'node': ('node name', 'a node holding no instance'),
        'to': ('host name', 'the multi-node host that takes it over'),
    }
    example = '''\
- rebalance_node: {node: n2, to: bm2}
- run_periodic: {task: update_available_resource, host: bm2}
  expect: {providers: [src, dst, n1, n2, n3]}
'''
    keys = ('node', 'to')

    def parse(self, check, value, scenario, state, error):
        args = self.read_fields(check, value)
        check.string(args['node'], 'node')
        owner = _node_host(check, state, args['node'], 'rebalance')
        to = _multi_node_host(check, scenario, state, args['to'], 'to')
        if owner == to:
            check.fail('to', 'node %s is on %s already' % (args['node'], to))
        state.node_hosts[args['node']] = to
        return dict(args, **{'from': owner})

    def label(self, args):
        return 'rebalance node %s from %s to %s' % (
            args['node'], args['from'], args['to'])

    def run(self, cloud, args):
        cloud.nodes.rebalance(args['node'], args['to'])


class DestroyComputeNode(_NodeStep):
    name = 'destroy_compute_node'
    summary = ('Delete one compute node record under its owner (and, if '
               'told, its provider): the owner\'s next periodic makes '
               'them again.')
    fields = {
        'node': ('node name', 'a node of a multi-node host, or a host (its '
                 'own node)'),
        'provider': ('true or false', 'delete its resource provider too, '
                     'with its allocations (default false)'),
    }
    example = '''\
- destroy_compute_node: {node: n2}
- run_periodic: {task: update_available_resource, host: bm}
  expect: {compute_nodes: {n2: {deleted: false, uuid: provider}}}
'''

    def read_fields(self, check, value):
        check.mapping(value, 'the step')
        check.keys(value, tuple(self.fields), required=('node',))
        return dict(value)

    def parse(self, check, value, scenario, state, error):
        args = self.read_fields(check, value)
        node = check.string(args['node'], 'node')
        if node in state.all_nodes:
            host = _node_host(check, state, node, 'destroy the record of')
        elif node in scenario.hosts and scenario.hosts[node].nodes is None:
            host = node
        else:
            known = set(state.all_nodes) | {
                name for name, entry in scenario.hosts.items()
                if entry.nodes is None}
            check.fail('node', 'unknown node %r; a host\'s own node is named '
                       'by the host, a multi-node host\'s by its node: %s'
                       % (node, ', '.join(sorted(known))))
        if host in state.service_deleted:
            check.fail('node', 'the compute service of %r was deleted, '
                       'and its records with it' % host)
        provider = args.get('provider', False)
        if not isinstance(provider, bool):
            check.fail('provider', 'expected true or false, got %s'
                       % errors.show(provider))
        return {'node': node, 'provider': provider, 'host': host}

    def label(self, args):
        return 'destroy compute node %s%s' % (
            args['node'], ' and its provider' if args['provider'] else '')

    def run(self, cloud, args):
        cloud.nodes.destroy_record(args['node'], provider=args['provider'])


def check_points(check, steps, kinds):
    """Refuse a step armed ``at`` a point no later step passes.

    ``add_node`` here, ``fault`` too (``base.check_points_at``).
    """
    base.check_points_at(check, steps, kinds)


KINDS = (RemoveNode(), AddNode(), RebalanceNode(), DestroyComputeNode())
