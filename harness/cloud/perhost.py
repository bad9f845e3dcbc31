"""Per-host values of Nova's host-local options, for computes in one process.

Nova reads ``cpu_dedicated_set``, reserved memory and pages and the
allocation ratios from the module-global ``nova.conf.CONF``, so two
nova-compute services in one process would share them. ``PerHostConf``
swaps the ``CONF`` global of the few modules that read those options on a
compute's behalf for a thin proxy. A read of any other option goes straight
to the real ``CONF`` (one dictionary look-up); a read of an option that
some host overrides walks the stack to the nearest frame whose ``self`` is a
``ComputeManager``, ``ResourceTracker`` or ``LibvirtDriver`` and answers
with that host's value. That also holds in driver-spawned threads (their
first frame is a bound method of the driver) and while one compute calls
another through RPC (the nearest service object is the callee), where a
swap of the global value around each call would leak between hosts.

Reads with no compute on the stack (API, conductor, scheduler, the test
itself) see the global value, as they would on a controller node.
"""

import sys

import fixtures

import nova.conf

from harness.core import frames

CONF = nova.conf.CONF

# Modules whose module-global CONF reads host-local options (found by
# grepping Nova for the options below): the driver's CPU sets, reserved
# memory and inventory; hardware's CPU sets and reserved pages; the
# tracker's ratios and reserved usage; the base driver's ratios; the host's
# file-backed memory checks; the fake driver's inventory (its reserved
# memory), for fake hosts started with their own config. For devices: the
# compute manager's and PCI tracker's device_spec, the PCI pools' filter,
# and report_in_placement where the tracker reports devices to Placement
# and checks a spec; the network API's device_spec is read when the
# compute builds it.
MODULES = (
    'nova.virt.fake',
    'nova.compute.manager',
    'nova.compute.pci_placement_translator',
    'nova.network.neutron',
    'nova.pci.devspec',
    'nova.pci.manager',
    'nova.pci.stats',
    'nova.virt.libvirt.driver',
    'nova.virt.libvirt.host',
    'nova.virt.hardware',
    'nova.virt.driver',
    'nova.compute.resource_tracker',
)

# The options a host may set for itself, by group (None is [DEFAULT]).
OPTIONS = {
    None: frozenset([
        'reserved_host_memory_mb', 'reserved_host_disk_mb',
        'reserved_huge_pages', 'cpu_allocation_ratio',
        'ram_allocation_ratio', 'disk_allocation_ratio',
        'initial_cpu_allocation_ratio', 'initial_ram_allocation_ratio',
        'initial_disk_allocation_ratio']),
    'compute': frozenset(['cpu_dedicated_set', 'cpu_shared_set']),
    'pci': frozenset(['device_spec', 'report_in_placement']),
    'devices': frozenset(['enabled_mdev_types']),
}

# Filled on first use (Nova's classes are imported late); a dict changed in
# place, so that the module's namespace stays as imported.
_HOST_CLASSES = {}


def _host_classes():
    classes = _HOST_CLASSES.get('classes')
    if classes is None:
        from nova.compute import manager
        from nova.compute import resource_tracker
        from nova.virt.libvirt import driver
        classes = _HOST_CLASSES['classes'] = (
            # Before its base class sets ``host`` (the network API it
            # builds first reads [pci] device_spec), a compute manager is
            # being made by its service's start, which patches CONF.host.
            (manager.ComputeManager,
             lambda obj: obj.host if 'host' in vars(obj) else CONF.host),
            (resource_tracker.ResourceTracker, lambda obj: obj.host),
            (driver.LibvirtDriver, lambda obj: obj.virtapi._compute.host),
        )
    return classes


def current_host(depth=1):
    """The compute host the caller works for, or ``None`` (a controller).

    A bare driver, not wired to its compute yet, names none.
    """
    return frames.nearest(sys._getframe(depth), _host_classes())


class _GroupView(object):
    """``CONF.<group>`` as seen through a ``_HostConf``."""

    __slots__ = ('_conf', '_group')

    def __init__(self, conf, group):
        self._conf = conf
        self._group = group

    def __getattr__(self, name):
        real = getattr(self._conf._real, self._group)
        return self._conf._lookup(self._group, name, real)

    def __getitem__(self, name):
        return self.__getattr__(name)


class _HostConf(object):
    """The proxy put in place of a module's ``CONF``."""

    def __init__(self, real, fixture):
        self._real = real
        self._fixture = fixture

    def _lookup(self, group, name, real):
        if name in self._fixture.overridden.get(group, ()):
            self._fixture.walks += 1
            values = self._fixture.overrides.get(current_host(3))
            if values is not None and (group, name) in values:
                return values[(group, name)]
        return getattr(real, name)

    def __getattr__(self, name):
        if name in self._fixture.overridden:
            return _GroupView(self, name)
        return self._lookup(None, name, self._real)

    def __getitem__(self, name):
        return self.__getattr__(name)


def installed():
    """The ``PerHostConf`` in place now, or ``None``.

    A cloud has one: the first of its fake hosts started with its own
    config or of its profiled hosts puts it in place, the others share it.
    """
    from nova.compute import resource_tracker
    proxy = resource_tracker.CONF
    return proxy._fixture if isinstance(proxy, _HostConf) else None


class PerHostConf(fixtures.Fixture):
    """Let each compute host have its own value of the ``OPTIONS``.

    ``walks`` counts the stack walks made, the cost of the mechanism.
    """

    def _setUp(self):
        # host -> {(group, name): value}
        self.overrides = {}
        # group -> names some host overrides; other reads do not walk
        self.overridden = {}
        self.walks = 0
        proxy = _HostConf(CONF, self)
        for module in MODULES:
            self.useFixture(fixtures.MonkeyPatch(module + '.CONF', proxy))

    def set_host(self, host, values):
        """Give ``host`` its own ``{(group, name): value}``.

        Replaces what the host had; options it does not name keep the
        global value.
        """
        for group, name in values:
            if name not in OPTIONS.get(group, ()):
                raise ValueError('[%s] %s is not a per-host option'
                                 % (group or 'DEFAULT', name))
        self.overrides[host] = dict(values)
        self._index()

    def update_host(self, host, values):
        """Change some of ``host``'s own values, keeping the others."""
        merged = dict(self.overrides.get(host, {}))
        merged.update(values)
        self.set_host(host, merged)

    def _index(self):
        self.overridden = {}
        for host_values in self.overrides.values():
            for group, name in host_values:
                self.overridden.setdefault(group, set()).add(name)
