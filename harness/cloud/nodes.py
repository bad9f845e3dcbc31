"""Computes that manage several compute nodes, as Ironic computes do.

A scenario host ``{driver: fake, nodes: [n1, n2]}`` runs
``MultiNodeDriver``: Nova's ``fake.MediumFakeDriver`` (each node 10 vCPUs,
8192 MB, 1028 GB) whose node list is the scenario's, not the host's own
name. What stands in for the bare-metal service and its hash ring:

- ``ring``: the nodes the hash ring gives this service now;
- ``deleted``: the nodes deleted from the bare-metal service while this
  service listed them (``is_node_deleted``: Nova then deletes their compute
  node records and providers, as it does for Ironic);
- a node holding an instance is listed by the service of the instance's
  host, and by no other, whatever the ring says, as the Ironic driver's
  ``_refresh_cache`` does (read from Nova's database: Ironic's
  ``instance_uuid`` of the node).

Nova loads a driver by a name under ``nova.virt``; this module is
importable as ``nova.virt.harness_ironic`` and makes a driver class for
each initial node list on demand: ``harness_ironic.Nodes:n1,n2`` (see
``harness.core.steps.nodes.driver_name``). The name says ``ironic``, so
Nova treats the compute as one whose nodes move between services: no local
node identity file, no host-rename check at start (both keyed on the
driver's name in ``ComputeManager``). The initial nodes are in the class,
so scenarios with different nodes never share a kept cloud, and a kept
cloud's settling (which runs the driver's ``__init__`` again) puts the
nodes back where the scenario starts them.
"""

import sys

from nova import context as nova_context
from nova import objects
from nova.scheduler.client import report
from nova.virt import fake

from harness.core import errors
from harness.core.steps import nodes as nodes_step

ALIAS = 'nova.virt.%s' % nodes_step.DRIVER_MODULE
IS_NODE_DELETED = 'is_node_deleted'


class MultiNodeDriver(fake.MediumFakeDriver):
    """A fake compute driver managing the nodes the scenario gives it."""

    #: The nodes the service starts with (set per class, by its name).
    initial = ()
    # As Nova's Ironic driver: no remote-managed (smartNIC) ports. Nova
    # reads this PCI capability while it takes over a node from another
    # service, before it has set up the PCI tracker of a service that had
    # no node yet; the Ironic driver's False never gets that far.
    capabilities = dict(fake.MediumFakeDriver.capabilities,
                        supports_remote_managed_ports=False)

    def __init__(self, virtapi, read_only=False):
        # A kept cloud's settling runs __init__ again on a started driver:
        # the nodes go back to where the scenario starts them; the race
        # points it was wired to (Cloud._running) stay.
        points = vars(self).get('race_points')
        super().__init__(virtapi, read_only)
        self.ring = list(self.initial)
        self.deleted = set()
        self.race_points = points

    # FakeDriver keeps its node list in _nodes; here it is worked out.
    @property
    def _nodes(self):
        return self.get_available_nodes()

    @_nodes.setter
    def _nodes(self, value):
        if value is not None:
            self.ring = list(value)

    def init_host(self, host):
        self._host = host

    def get_available_nodes(self, refresh=False):
        held = _held_nodes()
        mine = {node for node, host in held.items()
                if host == self._host and node not in self.deleted}
        listed = {node for node in self.ring if node not in held}
        return sorted(listed | mine)

    def is_node_deleted(self, nodename):
        # A race point: Nova read the host's compute nodes and is about to
        # delete this one as an orphan if it says so (LP#1853009).
        points = getattr(self, 'race_points', None)
        if points is not None:
            points.fire(IS_NODE_DELETED, 'before', self._host)
        deleted = nodename in self.deleted
        if points is not None:
            points.fire(IS_NODE_DELETED, 'after', self._host)
        return deleted


def _held_nodes():
    """Node -> the host of the instance on it, for every held node."""
    ctxt = nova_context.get_admin_context()
    instances = objects.InstanceList.get_by_filters(
        ctxt, {'deleted': False}, expected_attrs=[])
    return {inst.node: inst.host for inst in instances
            if inst.node and inst.host}


def driver_class(name):
    """The driver class whose name is ``Nodes:<node>,<node>...``."""
    if not name.startswith(nodes_step.DRIVER_PREFIX):
        raise AttributeError(name)
    found = _CLASSES.get(name)
    if found is None:
        listed = name[len(nodes_step.DRIVER_PREFIX):]
        nodes = tuple(listed.split(',')) if listed else ()
        found = _CLASSES[name] = type(
            'MultiNodeDriver', (MultiNodeDriver,),
            {'initial': nodes, '__doc__': 'Manages %s.' % (
                ', '.join(nodes) or 'no node')})
    return found


_CLASSES = {}


def __getattr__(name):
    return driver_class(name)


sys.modules.setdefault(ALIAS, sys.modules[__name__])


def is_multi_node(driver):
    return isinstance(driver, MultiNodeDriver)


def loaded_name(driver):
    """The ``compute_driver`` a multi-node driver was loaded by."""
    return nodes_step.driver_name(type(driver).initial)


def fresh_like(driver):
    """A new driver for a restart with no guests, keeping the nodes.

    The nodes are the bare-metal service's, not the hypervisor's: a new
    nova-compute finds them where the old one left them.
    """
    new = type(driver)(driver.virtapi)
    new.ring = list(driver.ring)
    new.deleted = set(driver.deleted)
    return new


class NodeOps(object):
    """What the bare-metal service does to a cloud's multi-node computes.

    Each operation changes what the drivers list; Nova notices at each
    host's next ``update_available_resource`` (nothing here calls Nova).
    """

    def __init__(self, cloud):
        self._cloud = cloud

    def driver(self, host):
        service = (self._cloud.computes.get(host)
                   or self._cloud._stopped.get(host))
        if service is None:
            raise errors.UnknownName('no compute %r was started' % host)
        driver = service.manager.driver
        if not is_multi_node(driver):
            raise errors.HarnessError(
                'compute %s does not manage several nodes (a host given '
                '"nodes:" does)' % host)
        return driver

    def owner(self, node):
        """The host whose ring holds ``node`` now (None if none)."""
        for host in sorted(set(self._cloud.computes)
                           | set(self._cloud._stopped)):
            driver = self._driver_or_none(host)
            if driver is not None and node in driver.ring:
                return host
        return None

    def _driver_or_none(self, host):
        service = (self._cloud.computes.get(host)
                   or self._cloud._stopped.get(host))
        driver = service.manager.driver if service else None
        return driver if is_multi_node(driver) else None

    def remove(self, host, node):
        """Delete ``node`` from the bare-metal service (it was ``host``'s).

        Refused, as Ironic refuses to delete a node associated with an
        instance, while an instance is on it.
        """
        driver = self.driver(host)
        if node not in driver.ring:
            raise errors.HarnessError('node %s is not %s\'s' % (node, host))
        holder = _held_nodes().get(node)
        if holder is not None:
            raise errors.OperationFailed(
                'remove node %s: the bare-metal service refuses to delete a '
                'node that holds an instance (on %s)' % (node, holder))
        driver.ring.remove(node)
        driver.deleted.add(node)

    def add(self, host, node):
        """Enrol ``node`` again (its old UUID), for ``host``'s service."""
        owner = self.owner(node)
        if owner is not None:
            raise errors.HarnessError('node %s is on %s already'
                                      % (node, owner))
        driver = self.driver(host)
        for other in sorted(set(self._cloud.computes)
                            | set(self._cloud._stopped)):
            found = self._driver_or_none(other)
            if found is not None:
                found.deleted.discard(node)
        driver.ring.append(node)

    def rebalance(self, node, to):
        """The hash ring gives ``node`` to ``to``'s service."""
        owner = self.owner(node)
        if owner is None:
            raise errors.HarnessError('node %s is on no host' % node)
        target = self.driver(to)
        self.driver(owner).ring.remove(node)
        target.ring.append(node)

    def destroy_record(self, node, provider=False):
        """Delete ``node``'s compute node record, and nothing else.

        As ``objects.ComputeNode.destroy()`` does (a soft delete, the
        record kept with its UUID); with ``provider`` its resource provider
        goes too, with its allocations, through a report client of its own
        (``delete_resource_provider(cascade=True)``, as an orphan clean-up
        of another service does): the owner's caches are left as they are.
        """
        ctxt = nova_context.get_admin_context()
        found = [record for record in objects.ComputeNodeList.get_all(ctxt)
                 if record.hypervisor_hostname == node]
        if len(found) != 1:
            raise errors.HarnessError('node %s has %d live compute node '
                                      'records, not one' % (node, len(found)))
        record = found[0]
        record.destroy()
        if provider:
            report.SchedulerReportClient().delete_resource_provider(
                ctxt, record, cascade=True)
