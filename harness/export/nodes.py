"""Hosts of several compute nodes as Nova's fake driver with several nodes.

A scenario host ``{driver: fake, nodes: [n1, n2]}`` runs, in the harness,
``harness.cloud.nodes.MultiNodeDriver``: Nova's ``fake.MediumFakeDriver``
listing the nodes the bare-metal service gives its service, as Ironic's
computes do. Nova's own regression tests of Ironic's bugs (LP#1839560,
LP#1853009) run the same fake driver with several nodes, set with its
``_set_nodes``; the exported class does the same, with what the harness's
driver adds to it and a test can say as well:

- its nodes from its start (``FakeDriver.init_host`` lists the host's
  own name otherwise) and across a start;
- ``is_node_deleted`` true for the nodes deleted from the bare-metal
  service while the host listed them (Nova's tests mock it true for
  all), and a point there where the harness fires its race point
  ``is_node_deleted``;
- no remote-managed ports, as Nova's Ironic driver (a trait less on its
  nodes' providers);
- every node's record flagged mapped at its start, as the harness maps
  them (Nova's ``start_service`` flags the first);
- ``remove_node``, ``add_node`` (now or at that point),
  ``rebalance_node`` and ``destroy_compute_node``, one unit each;
- the expectations by node: a host of several nodes named in
  ``tracker`` sums its nodes' records.

Refused by name, where the two differ: a host that manages no node
(Nova's test service needs a compute node record to start), a restart of
a host of several nodes (Nova keys its node identity and host-rename
checks on the driver's name, which says ``ironic`` in the harness only),
and a node rebalanced while a server lives (the harness's driver keeps
listing a node that holds an instance of its host, as Ironic's does, and
Nova's fake driver lists what it is given).
"""

from harness.core.checks import reading
from harness.export import registry
from harness.export import steps as step_units

Unsupported = registry.Unsupported

#: The harness's race point where a host asks its driver whether a node
#: it no longer lists was deleted (``harness.cloud.nodes``).
NODE_CHECK = 'is_node_deleted'

INDENT = ' ' * 8

# The setUp lines of a class with hosts of several nodes.
SETUP = '''\
        # Host -> the compute nodes the bare-metal service gives its
        # service (a host of several nodes, as Ironic's computes have);
        # and the nodes deleted from it while the host listed them.
        self.listed = {}
        self.removed = {}
        # What runs as a host asks whether a node was deleted.
        self._node_checks = []
        self._multi_node_driver()'''

# The helpers of a class with hosts of several nodes; its
# ``assertTrackers`` replaces the class's own.
HELPERS = '''
    def _multi_node_driver(self):
        """Nova's fake driver as a host of several nodes runs it.

        The nodes the test gives a host (``self.listed``) are its
        driver's from its start on, as ``_set_nodes`` sets them in
        Nova's tests of Ironic's bugs; with no remote-managed ports, as
        Nova's Ironic driver. It says a node was deleted if it was
        deleted from the bare-metal service while the host listed it
        (``_remove_node``).
        """
        real_init_host = fake_driver.FakeDriver.init_host

        def init_host(driver, host):
            real_init_host(driver, host)
            if host in self.listed:
                driver._set_nodes(list(self.listed[host]))
                driver.capabilities = dict(
                    driver.capabilities,
                    supports_remote_managed_ports=False)

        def is_node_deleted(driver, nodename):
            # Nova has read the host's compute nodes and deletes this one
            # as an orphan if the driver says it was deleted.
            self._fire_node_checks('before', driver._host)
            deleted = nodename in self.removed.get(driver._host, ())
            self._fire_node_checks('after', driver._host)
            return deleted

        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.init_host', init_host))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.is_node_deleted', is_node_deleted))

    def _set_nodes(self, host, nodes):
        """The compute nodes ``host``'s service manages from now on."""
        self.listed[host] = sorted(nodes)
        if host in self.computes:
            self.computes[host].manager.driver._set_nodes(
                list(self.listed[host]))

    def _remove_node(self, host, node):
        """``node`` is deleted from the bare-metal service.

        ``host`` listed it: its driver lists it no more and says it was
        deleted, so its next periodic deletes its record and provider.
        """
        self._set_nodes(host, set(self.listed[host]) - {node})
        self.removed.setdefault(host, set()).add(node)

    def _add_node(self, host, node):
        """``node`` is enrolled again (its UUID kept), for ``host``."""
        for deleted in self.removed.values():
            deleted.discard(node)
        self._set_nodes(host, self.listed[host] + [node])

    def _rebalance_node(self, node, owner, to):
        """The hash ring gives ``node`` from ``owner`` to ``to``."""
        self._set_nodes(owner, set(self.listed[owner]) - {node})
        self._set_nodes(to, self.listed[to] + [node])

    def _destroy_compute_node(self, node, provider=False):
        """``node``'s compute node record is deleted under its owner.

        As ``ComputeNode.destroy()`` deletes it (soft: its UUID kept),
        and nothing else: its owner's caches keep it. ``provider``: its
        resource provider too, with its allocations, from a report
        client of its own, as another service's orphan clean-up did
        before LP#1853009's fix.
        """
        found = [record for record in objects.ComputeNodeList.get_all(
            self.context) if record.hypervisor_hostname == node]
        self.assertEqual(1, len(found), 'live records of node %s' % node)
        found[0].destroy()
        if provider:
            report_client.SchedulerReportClient().delete_resource_provider(
                self.context, found[0], cascade=True)

    def _at_node_check(self, when, host, action):
        """Call ``action()`` once, as a host asks if a node was deleted.

        The next time ``host`` (any host, if None) asks its driver
        whether a node it no longer lists was deleted, just ``before``
        or ``after`` it asks; the actions armed there in arming order.
        """
        self._node_checks.append((when, host, action))

    def assertNodeChecksFired(self):
        """Every action armed where a host asks about a node fired.

        One that nothing passed is a step that silently did nothing.
        """
        self.assertEqual([], ['%s is_node_deleted on %s' % (
            when, host or 'any host') for when, host, _ in self._node_checks],
            'armed where a host asks about a node, never fired')

    def _fire_node_checks(self, when, host):
        due = [check for check in self._node_checks
               if check[0] == when and check[1] in (None, host)]
        for check in due:
            self._node_checks.remove(check)
        for _, _, action in due:
            action()

    def _reserved(self, record):
        """What the node's provider reserves, as its record counts it."""
        provider = self._providers().get(record.hypervisor_hostname)
        inventory = (self._get_provider_inventory(provider)
                     if provider else {})
        return {key: inventory.get(rc, {}).get('reserved', 0)
                for key, rc in (('vcpus_used', 'VCPU'),
                                ('memory_mb_used', 'MEMORY_MB'),
                                ('local_gb_used', 'DISK_GB'))}

    def assertTrackers(self, expected, skip=()):
        """What each node's compute node record counts.

        Its guests plus what its provider reserves. A host of several
        nodes may be named: its nodes' records summed (which node holds
        which guest being the scheduler's choice), its nodes then not
        checked one by one. A node not named counts no guest; one of
        them with no record (removed, or not come yet) is left out.
        """
        records = {record.hypervisor_hostname: record for record in
                   objects.ComputeNodeList.get_all(self.context)}
        summed = {host: nodes for host, nodes in self.host_nodes.items()
                  if host in expected}
        multi = {node for nodes in self.host_nodes.values()
                 for node in nodes}
        for node in sorted(set(self.node_names) - set(skip)):
            # Counted with its host's, or a node with no record.
            left_out = (any(node in nodes for nodes in summed.values()) or
                        node not in records and node in multi)
            if node not in expected and left_out:
                continue
            if node not in records:
                self.fail('the resource tracker of %s: no compute node '
                          'record' % node)
            guests = expected.get(node, {})
            reserved = self._reserved(records[node])
            self.assertEqual(
                {key: guests.get(key, 0) + extra
                 for key, extra in reserved.items()},
                {key: getattr(records[node], key) for key in reserved},
                'the resource tracker of %s' % node)
        for host, nodes in sorted(summed.items()):
            counted = [records[node] for node in nodes if node in records]
            want = {key: expected[host].get(key, 0) for key in (
                'vcpus_used', 'memory_mb_used', 'local_gb_used')}
            for record in counted:
                for key, extra in self._reserved(record).items():
                    want[key] += extra
            self.assertEqual(
                want, {key: sum(getattr(record, key) for record in counted)
                       for key in want},
                'the resource trackers of %s\\'s nodes, summed' % host)
'''

#: The helpers of the plain class that ``HELPERS`` replaces.
REPLACED = ('assertTrackers',)

#: What the plain class's ``_providers`` and ``assertUsages`` read by
#: host, read by node: the names the expectations give compute nodes
#: (a host's own, or each node of a host of several).
BY_NODE = (
    ("if rp['name'] in self.computes}", "if rp['name'] in self.node_names}"),
    ('for host in sorted(self.computes):\n            usages',
     'for host in sorted(self.node_names):\n            usages'),
)


def by_node(helpers):
    """The class's ``helpers`` source, reading nodes where it read hosts."""
    for old, new in BY_NODE:
        if helpers.count(old) != 1:
            raise AssertionError('the helpers read hosts elsewhere: %r'
                                 % old)
        helpers = helpers.replace(old, new)
    return helpers


#: The steps of the bare-metal service and of a node's record: their
#: helpers are this module's.
STEPS = ('remove_node', 'add_node', 'rebalance_node',
         'destroy_compute_node')


def multi_node(scenarios):
    """Whether ``scenarios`` need the helpers here, by node.

    A host of several compute nodes, or a step of the bare-metal service
    or on a node's record (a host's own record too).
    """
    return any(host.nodes is not None for scenario in scenarios
               for host in scenario.hosts.values()) or any(
        step.kind in STEPS for scenario in scenarios
        for step in scenario.steps)


def check_host(host):
    """Refuse a host of several nodes Nova's fake driver cannot be."""
    if host.nodes is not None and not host.nodes:
        raise Unsupported('a host that manages no node (Nova\'s test '
                          'service needs a compute node record to start)')


def check_steps(scenario):
    """Refuse the steps whose meaning differs on Nova's fake driver.

    Raises ``Unsupported(what, reason)``: the step (its number and
    kind) and why.
    """
    multi = {name for name, host in scenario.hosts.items()
             if host.nodes is not None}
    alive = set()
    for step in scenario.steps:
        what = 'step %d (%s)' % (step.index, step.kind)
        if step.kind == 'boot':
            # Failed or not: a server in ERROR may hold its node.
            alive.add(step.args['server'])
        elif step.kind == 'delete':
            alive.discard(step.args['server'])
        elif (step.kind in ('start_compute', 'stop_compute')
              and step.args.get('host') in multi):
            raise Unsupported(what, 'a restart of a host of several nodes '
                              '(Nova keys its node identity and '
                              'host-rename checks on the driver\'s name, '
                              'which says ironic in the harness only)')
        elif step.kind == 'rebalance_node' and alive:
            raise Unsupported(what, 'a node rebalanced while server %s '
                              'lives (the harness\'s driver keeps listing '
                              'a node that holds an instance of its host, '
                              'as Ironic\'s does; Nova\'s fake driver '
                              'lists what it is given)' % min(alive))


def world_lines(scenario):
    """The start of a scenario's hosts, those of several nodes too."""
    node_names = sorted(reading.providers(scenario))
    host_nodes = {name: list(nodes) for name, nodes in sorted(
        reading.multi_node_hosts(scenario).items())}
    lines = [
        INDENT + '# The compute nodes the expectations name: a host\'s '
        'own, or',
        INDENT + '# the nodes of a host that manages several.',
        INDENT + 'self.node_names = %r' % node_names,
        INDENT + 'self.host_nodes = %r' % host_nodes]
    for host, nodes in sorted(host_nodes.items()):
        lines.append(INDENT + 'self._set_nodes(%r, %r)' % (host, nodes))
    lines += [INDENT + 'for host in %r:' % sorted(scenario.hosts),
              INDENT + '    self.computes[host] = '
              'self._start_compute(host)',
              INDENT + '    self._schedule(host)']
    for host in sorted(host_nodes):
        # Nova's start_service flags its first record only.
        lines.append(INDENT + 'self._flag_mapped(%r)' % host)
    return lines


# The steps of the bare-metal service: one unit each.

def _only(args, allowed):
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise Unsupported('field %r' % extra[0])


@step_units.translates('remove_node')
def remove_node(args):
    _only(args, ('host', 'node'))
    return ['self._remove_node(%r, %r)' % (args['host'], args['node'])]


@step_units.translates('add_node')
def add_node(args):
    _only(args, ('host', 'node', 'at'))
    call = 'self._add_node(%r, %r)' % (args['host'], args['node'])
    at = args.get('at')
    if not at:
        return [call]
    if at['point'] != NODE_CHECK:
        raise Unsupported('at %r (a point other than is_node_deleted)'
                          % at['point'])
    return ['self._at_node_check(',
            '    %r, %r,' % (at['when'], at.get('host')),
            '    lambda: %s)' % call]


@step_units.translates('rebalance_node')
def rebalance_node(args):
    _only(args, ('node', 'to', 'from'))
    return ['self._rebalance_node(%r, %r, %r)'
            % (args['node'], args['from'], args['to'])]


@step_units.translates('destroy_compute_node')
def destroy_compute_node(args):
    _only(args, ('node', 'provider', 'host'))
    return ['self._destroy_compute_node(%r%s)' % (
        args['node'], ', provider=True' if args['provider'] else '')]


def arms_node_check(step):
    """Whether ``step`` arms an action where a host asks about a node."""
    at = step.args.get('at') or {}
    return (step.kind == 'inject' and step.args.get('point') == NODE_CHECK
            or step.kind == 'add_node' and at.get('point') == NODE_CHECK)


def inject_at_node_check(args):
    """An injection where a host asks whether a node was deleted.

    A periodic run on a host named (a move's roles mean nothing there).
    """
    for key in ('check', 'restart', 'refused', 'server', 'do', 'stop'):
        if args.get(key) is not None:
            raise Unsupported('field %r' % key)
    if args.get('times') != 1:
        raise Unsupported('times %r' % args.get('times'))
    if args['on'] in ('source', 'dest', 'server_host'):
        raise Unsupported('on %r (no move in flight at is_node_deleted)'
                          % args['on'])
    if not args['run'].isidentifier():
        raise Unsupported('task %r' % args['run'])
    return ['self._at_node_check(',
            '    %r, %r,' % (args['when'], args.get('at_host')),
            '    lambda: self.computes[%r].manager.%s(self.context))'
            % (args['on'], args['run'])]
