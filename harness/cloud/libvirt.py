"""Profiled hosts: Nova's real libvirt driver over a fake libvirt.

Each profiled host gets its own fake libvirt connection (Nova's
``fakelibvirt``) whose capabilities carry the profile's NUMA topology,
composed from Nova's production ``vconfig`` classes, so the host can have
any number of CPUs, Linux-style sibling numbering and its own page pools
per cell. Above that connection everything is Nova's: ``LibvirtDriver``
builds the host topology and inventory, the resource tracker claims and
pins, the scheduler's ``NUMATopologyFilter`` fits. The fakes stop at the
hypervisor boundary: the libvirt connection, the filesystem
(``get_fs_info``, the node identity file, image and disk helpers) and the
two calls that would copy a guest to another machine.
"""

import contextlib
import dataclasses
import io
import re
import urllib.parse
import uuid
from xml.etree import ElementTree as etree

import fixtures
from oslo_utils import versionutils

import nova.conf
from nova import exception
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.virt.libvirt import config as vconfig
from nova.virt.libvirt import utils as libvirt_utils
import nova.virt.node

from harness.cloud import perhost
from harness.core import errors
from harness.core import profile_devices
from harness.core import profiles

CONF = nova.conf.CONF
GiB = 1024 ** 3
# Stable node identities: the same host keeps its compute node across
# restarts, as a real host keeps its compute_id file.
NODE_NAMESPACE = uuid.UUID('8f1b3c0e-6a55-4c52-9a4e-2f0d4f5b7a11')


def numa_topology(profile):
    """The profile's cells as libvirt's capabilities describe them."""
    topology = vconfig.LibvirtConfigCapsNUMATopology()
    for cell_spec in profile.cells:
        cell = vconfig.LibvirtConfigCapsNUMACell()
        cell.id = cell_spec.id
        cell.memory = cell_spec.memory_mb * 1024  # KiB, as libvirt says
        cores = sorted(cell_spec.siblings, key=min)
        for core_id, core in enumerate(cores):
            for cpu_id in sorted(core):
                cpu = vconfig.LibvirtConfigCapsNUMACPU()
                cpu.id = cpu_id
                cpu.socket_id = cell_spec.socket
                cpu.core_id = core_id
                cpu.siblings = set(core)
                cell.cpus.append(cpu)
        cell.cpus.sort(key=lambda c: c.id)
        for size_kb, count in sorted(cell_spec.pages.items()):
            pages = vconfig.LibvirtConfigCapsNUMAPages()
            pages.size = size_kb
            pages.total = count
            cell.mempages.append(pages)
        topology.cells.append(cell)
    return topology


def host_info(profile):
    """A ``fakelibvirt.HostInfo`` shaped like the profile's machine."""
    # The constructor builds a topology of its own; a 1-CPU one is cheap
    # and is replaced below.
    info = fakelibvirt.HostInfo(cpu_nodes=1, cpu_sockets=1, cpu_cores=1,
                                cpu_threads=1)
    threads = profile.threads_per_core
    info.cpus = len(profile.cpus)
    info.cpu_nodes = len(profile.cells)
    info.cpu_sockets = profile.sockets
    info.cpu_threads = threads
    info.cpu_cores = info.cpus // threads // profile.sockets
    # libvirt-python's getInfo() gives memory in MiB (Nova reads it so in
    # Host.get_memory_mb_total); fakelibvirt passes this field through.
    info.kB_mem = profile.memory_mb
    info.numa_topology = numa_topology(profile)
    return info


def devices_info(profile):
    """``(pci_info, vdpa_info)``: the profile's devices for the fake.

    Each device is added with Nova's ``HostPCIDevicesInfo.add_device``;
    the fake shows a VF's PF at slot ``slot - (vf_ratio + 1) // 8``,
    function 0, so each VF gets the ratio that names its own PF (the
    profile puts VFs on their PF's bus, at or after its slot). A vDPA VF
    gets a vhost-vdpa device of its own (``HostVDPADevicesInfo``, named
    and numbered in address order as the kernel names them,
    ``vdpa_vdpa<n>``), as Nova's ``VDPAServersTest`` builds them.
    """
    info = fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0)
    vdpa = fakelibvirt.HostVDPADevicesInfo()
    vfs_of = profile_devices.vf_counts(profile.devices)
    by_address = {device.address: device for device in profile.devices}
    for group, device in enumerate(profile.devices):
        bus, slot, function = device.bus_slot_function
        kwargs = {}
        if device.kind == 'pf':
            kwargs['vf_ratio'] = vfs_of.get(device.address, 0)
        elif device.kind == 'vf':
            pf_bus, pf_slot, pf_function = by_address[
                device.pf].bus_slot_function
            kwargs['vf_ratio'] = 8 * (slot - pf_slot)
            kwargs['parent'] = (pf_bus, pf_slot, pf_function)
        elif device.kind == 'mdev_gpu':
            kwargs['multiple_gpu_types'] = len(device.mdev_types) > 1
        if device.vdpa or device.serial:
            # Nova's vDPA devices and DPU functions are mlx5 ones (as in
            # its VDPAServersTest and RemoteManagedServersTest).
            kwargs['driver_name'] = 'mlx5_core'
        if device.serial:
            # The card's VPD, as libvirt shows it (<capability
            # type='vpd'>); Nova reads its serial for remote-managed ports.
            kwargs['vpd_fields'] = {
                'name': device.name or 'PCI device %s' % device.address,
                'readonly': {'serial_number': device.serial}}
        added = info.add_device(
            dev_type=DEV_TYPES[device.kind], bus=bus, slot=slot,
            function=function, iommu_group=40 + group,
            numa_node=device.cell, vend_id=device.vendor,
            prod_id=device.product, prod_name=device.name or None,
            **kwargs)
        if device.vdpa and device.kind == 'vf':
            number = len(vdpa.devices)
            vdpa.add_device('vdpa_vdpa%d' % number, number, added)
    return info, vdpa


def is_pf_with_vfs(profile, address):
    """What sysfs says of ``address`` on ``profile``'s host: a PF with VFs.

    Nova's ``pci.utils.is_physical_function`` asks it of a ``[pci]
    device_spec`` naming one address (the spec then matches the PF's VFs
    too).
    """
    return any(device.address == address.lower() and device.kind == 'pf'
               and any(vf.pf == device.address for vf in profile.devices)
               for device in profile.devices)


def vf_number(profile, address):
    """The VF at ``address``'s number on its PF (sysfs' ``virtfn<N>``).

    The kernel numbers a PF's VFs from 0 in the order of their addresses;
    None for a device that is no VF of the profile.
    """
    address = address.lower()
    vf = next((device for device in profile.devices
               if device.address == address and device.kind == 'vf'), None)
    if vf is None:
        return None
    siblings = sorted(device.address for device in profile.devices
                      if device.kind == 'vf' and device.pf == vf.pf)
    return siblings.index(address)


# Profile device kinds -> the fake's dev_type.
DEV_TYPES = {'pci': 'PCI', 'pf': 'PF', 'vf': 'VF', 'mdev_gpu': 'MDEV_TYPES'}


def versions(profile):
    """The libvirt and QEMU versions ``profile``'s host reports, as ints.

    As libvirt encodes them (``versionutils.convert_version_to_int``);
    what the profile does not say is what Nova's fake libvirt reports:
    the oldest versions the Nova under test supports.
    """
    said = {name: versionutils.convert_version_to_int(version)
            for name, version in profile.hypervisor.items()}
    return (said.get('libvirt', fakelibvirt.FAKE_LIBVIRT_VERSION),
            said.get('qemu', fakelibvirt.FAKE_QEMU_VERSION))


def connection(host, profile):
    """A fresh fake libvirt connection for ``host`` running ``profile``."""
    libvirt_version, qemu_version = versions(profile)
    pci, vdpa = devices_info(profile)
    return fakelibvirt.Connection(
        'qemu:///system', version=libvirt_version,
        hv_version=qemu_version,
        host_info=host_info(profile), hostname=host,
        pci_info=pci, vdpa_info=vdpa,
        mdev_info=fakelibvirt.HostMdevDevicesInfo(devices={}))


_new_uuid = uuid.uuid4


def _create_mdev(driver, dev_name, mdev_type, uuid=None):
    """Create a mediated device on ``driver``'s host; return its UUID."""
    mdev_uuid = uuid or str(_new_uuid())
    name = libvirt_utils.mdev_uuid2name(mdev_uuid)
    conn = driver._host.get_connection()
    conn.mdev_info.devices[name] = fakelibvirt.FakeMdevDevice(
        dev_name=name, type_id=mdev_type, parent=dev_name)
    _count_available(conn, dev_name, mdev_type)
    return mdev_uuid


def _count_available(conn, parent, mdev_type):
    """Lower the GPU's ``availableInstances`` of ``mdev_type``.

    As the GPU's driver does in sysfs: Nova's fake libvirt lists each type
    with a fixed count, so Nova would see the created vGPUs on top of an
    unchanged count (the GPU's VGPU inventory growing with each guest).
    """
    used = sum(1 for mdev in conn.mdev_info.devices.values()
               if "<parent>%s</parent>" % parent in mdev.xml
               and "<type id='%s'/>" % mdev_type in mdev.xml)
    gpu = conn.pci_info.devices[parent]
    pattern = re.compile(
        r"(<type id='%s'>.*?<availableInstances>)\d+(</availableInstances>)"
        % re.escape(mdev_type), re.S)
    gpu.pci_device = pattern.sub(
        r'\g<1>%d\g<2>' % max(
            profile_devices.MDEV_INSTANCES[mdev_type] - used, 0),
        gpu.pci_device)


def _drop_mdev_groups(before):
    """Unregister the ``[mdev_<type>]`` groups a compute's start added.

    The driver registers one per ``[devices] enabled_mdev_types`` entry
    (``nova.conf.devices.register_dynamic_opts``) and reads it only while
    it starts; left registered, the process's config would outlive the
    cloud. oslo.config cannot drop a group once it has parsed its
    arguments, so its table is edited, as the leak check edits it.
    """
    dropped = [name for name in set(CONF._groups) - before
               if name.startswith('mdev_')]
    for name in dropped:
        del CONF._groups[name]
    if dropped:
        # oslo.config caches values; its own setters clear it this way.
        getattr(CONF, '_ConfigOpts__cache', {}).clear()


def _with_memory_backing(shown, defined):
    """``shown`` with the ``<memoryBacking>`` of ``defined``, if it has one."""
    if defined is None or '<memoryBacking' in shown:
        return shown
    found = etree.fromstring(defined).find('./memoryBacking')
    if found is None:
        return shown
    element = etree.tostring(found, encoding='unicode').strip()
    return shown.replace('</currentMemory>',
                         '</currentMemory>\n  %s' % element, 1)


def _editing(real, edit):
    """``real`` (a fake Domain's method), then ``edit`` on its document."""
    def method(domain, xml):
        done = real(domain, xml)
        if done and getattr(domain, 'harness_xml', None) is not None:
            domain.harness_xml = edit(domain.harness_xml, xml)
        return done
    return method


def _device_key(element):
    """What names a device in a domain: its host address, UUID or MAC."""
    address = element.find('./source/address')
    if address is not None:
        return (element.tag,) + tuple(
            int(address.get(key), 16) if address.get(key) else None
            for key in ('domain', 'bus', 'slot', 'function')) + (
            address.get('uuid'),)
    mac = element.find('./mac')
    return (element.tag, mac.get('address').lower() if mac is not None
            else etree.tostring(element))


def _attached(domain_xml, device_xml):
    tree = etree.fromstring(domain_xml)
    tree.find('./devices').append(etree.fromstring(device_xml))
    return etree.tostring(tree, encoding='unicode')


def _detached(domain_xml, device_xml):
    tree = etree.fromstring(domain_xml)
    devices = tree.find('./devices')
    key = _device_key(etree.fromstring(device_xml))
    for element in list(devices):
        if _device_key(element) == key:
            devices.remove(element)
            break
    return etree.tostring(tree, encoding='unicode')


class LibvirtHosts(fixtures.Fixture):
    """Run computes on Nova's libvirt driver, each shaped by a profile.

    Installed once per cloud, before the first profiled compute starts: the
    libvirt test fixtures Nova's own functional tests use, a shared
    instances path and per-host config (``harness.perhost``). The cloud's
    scheduler runs ``NUMATopologyFilter`` from the start.
    """

    def _setUp(self):
        self._profiles = {}
        self._connections = {}
        self._starting = None
        self._node_uuids = {}
        self.useFixture(nova_fixtures.ConfPatcher(
            instances_path=self.useFixture(fixtures.TempDir()).path))
        self._image_backend = self.useFixture(
            nova_fixtures.LibvirtImageBackendFixture())
        self.useFixture(nova_fixtures.CGroupsFixture())
        self.useFixture(nova_fixtures.LibvirtFixture())
        self.useFixture(nova_fixtures.OSBrickFixture())
        self._filesystem()
        self._moves()
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.host.Host.get_connection',
            lambda libvirt_host: self._starting_connection()))
        # Shared with fake hosts started with their own config, if any.
        self.conf = (perhost.installed()
                     or self.useFixture(perhost.PerHostConf()))

    def _filesystem(self):
        # What Nova's ServersTestBase stubs of the host's filesystem, so
        # that no image is fetched and no disk is written.
        for target, value in (
                ('nova.virt.libvirt.LibvirtDriver._create_image',
                 (False, False)),
                ('nova.virt.libvirt.driver.libvirt_utils.is_valid_hostname',
                 True),
                ('nova.privsep.utils.supports_direct_io', True),
                # Every update_available_resource ran the real `uptime`
                # in a subprocess; the fake host answers for itself.
                ('nova.virt.libvirt.driver.LibvirtDriver.get_host_uptime',
                 ' 00:00:00 up 1 day,  0 users,  load average: 0.00\n')):
            self.useFixture(fixtures.MockPatch(target, return_value=value))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.libvirt_utils.file_open',
            side_effect=lambda *a, **k: io.BytesIO(b'')))
        # The instances filesystem (statvfs) and the node identity file:
        # each host has its own.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.utils.get_fs_info', self._get_fs_info))
        # A [pci] device_spec naming an address asks sysfs whether a PF
        # sits there; the host's profile answers.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.utils.is_physical_function',
            self._is_physical_function))
        # A remote-managed port's binding names its VF's number on the
        # PF (sysfs' virtfn<N>); the profile knows it. Installed after
        # LibvirtFixture, whose stand-in answers 1 for every VF.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.utils.get_vf_num_by_pci_address', self._vf_number))
        real_node_uuid = nova.virt.node.get_local_node_uuid
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.node.get_local_node_uuid',
            lambda: self._node_uuid(real_node_uuid)))

    def _moves(self):
        # The equivalents of the mocks Nova's NUMA tests put around each
        # resize and live migration (test_numa_servers.py,
        # LibvirtMigrationMixin), set once: a cold move copies no disk (the
        # instances path is shared), and libvirt's migration of a running
        # guest defines it on the destination's connection from the XML
        # Nova wrote for that host, then reports the job complete.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            'migrate_disk_and_power_off', return_value='{}'))

        def migrate_to_uri3(domain, dconnuri, params, flags):
            dest = urllib.parse.urlparse(dconnuri).hostname
            self.connection(dest).createXML(params['destination_xml'], 0)
            domain.complete_job()

        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            migrate_to_uri3))

        # A vGPU is a mediated device the host's GPU driver creates in
        # sysfs; the host's fake libvirt lists it from then on (as Nova's
        # vGPU tests do).
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.driver.LibvirtDriver._create_mdev',
            _create_mdev))

        # A libvirt host keeps the XML a domain was defined with; Nova's
        # fake keeps only the parts it parses (no <memoryBacking>, so no
        # huge pages): each domain keeps the document too, for the
        # snapshot to read (``domains``).
        real_init = fakelibvirt.Domain.__init__

        def domain_init(domain, connection, xml, running=False,
                        transient=False):
            real_init(domain, connection, xml, running=running,
                      transient=transient)
            domain.harness_xml = xml

        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.__init__', domain_init))

        # Libvirt edits that document as devices come and go (suspend and
        # resume detach and attach a guest's PCI devices); so does the
        # harness, where the fake edits its parsed parts.
        for name, edit in (('attachDevice', _attached),
                           ('detachDevice', _detached)):
            self.useFixture(fixtures.MonkeyPatch(
                'nova.tests.fixtures.libvirt.Domain.%s' % name,
                _editing(getattr(fakelibvirt.Domain, name), edit)))

        # And its XMLDesc, which Nova's live migration edits into the
        # destination's XML, dropped the <memoryBacking> the domain was
        # defined with: a guest backed by huge pages arrived without them.
        # Libvirt shows the element; so does the fake now.
        real_xml_desc = fakelibvirt.Domain.XMLDesc
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.XMLDesc',
            lambda domain, flags: _with_memory_backing(
                real_xml_desc(domain, flags),
                getattr(domain, 'harness_xml', None))))

        # Nova's fake Domain.undefineFlags calls managedSaveRemove()
        # without its flags: deleting a suspended (managed-saved) guest
        # raised TypeError in the test double, not in Nova.
        real_remove = fakelibvirt.Domain.managedSaveRemove
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.managedSaveRemove',
            lambda domain, flags=0: real_remove(domain, flags)))

    # -- the hypervisor boundary, per host ------------------------------

    def _starting_connection(self):
        # Only a starting service's driver gets here: ``started`` pins each
        # driver to its own connection.
        if self._starting is None:
            raise errors.HarnessError(
                'a libvirt driver asked for a connection outside of a '
                'compute start')
        return self._starting

    def _get_fs_info(self, path):
        host = perhost.current_host()
        if host not in self._profiles:
            raise errors.HarnessError(
                'filesystem info of %s asked for outside of a profiled '
                'compute (host %r)' % (path, host))
        total = self._profiles[host].disk_gb * GiB
        return {'total': total, 'free': total, 'used': 0}

    def _is_physical_function(self, domain, bus, slot, function):
        profile = self._profiles.get(perhost.current_host())
        if profile is None:
            return False
        return is_pf_with_vfs(profile, '%s:%s:%s.%s' % (
            domain, bus, slot, function))

    def _vf_number(self, pci_addr):
        profile = self._profiles.get(perhost.current_host())
        number = vf_number(profile, pci_addr) if profile else None
        if number is None:
            raise exception.PciDeviceNotFoundById(id=pci_addr)
        return number

    def _node_uuid(self, real):
        host = perhost.current_host()
        if host not in self._profiles:
            return real()
        return self._node_uuids.setdefault(
            host, str(uuid.uuid5(NODE_NAMESPACE, host)))

    # -- the interface cloud.py uses -------------------------------------

    def has(self, host):
        """Whether ``host`` was started from a profile."""
        return host in self._profiles

    def profile(self, host):
        """The ``HostProfile`` that ``host`` runs."""
        return self._profiles[host]

    def connection(self, host):
        """The fake libvirt connection of ``host`` (its hypervisor)."""
        try:
            return self._connections[host]
        except KeyError:
            raise errors.UnknownName(
                'no profiled host %r; profiled: %s'
                % (host, ', '.join(sorted(self._connections)) or 'none'))

    def hosts(self):
        """The profiled hosts that have a hypervisor, in name order."""
        return sorted(self._connections)

    def vdpa_devices(self, host):
        """``host``'s vDPA character devices -> the VF address of each.

        What a guest's ``<interface type='vdpa'>`` names (``<source
        dev='/dev/vhost-vdpa-N'/>``), as the host's libvirt lists them.
        """
        info = self.connection(host).vdpa_info
        return {'/dev/vhost-vdpa-%d' % device.idx: device.parent.address
                for device in info.devices.values()}

    def domains(self, host):
        """``(uuid, domain XML)`` of each guest ``host``'s hypervisor has.

        The XML is the document Nova defined the domain with (see
        ``_moves``); reading it changes nothing.
        """
        conn = self.connection(host)
        # A domain without the document (defined before the fake was
        # patched) shows as the fake renders it.
        return sorted((dom.UUIDString(), getattr(dom, 'harness_xml', None)
                       or dom.XMLDesc(0))
                      for dom in list(conn._vms.values()))

    @contextlib.contextmanager
    def starting(self, host, profile):
        """Start ``host`` from ``profile`` (name, path or ``HostProfile``).

        The profile is loaded and checked before anything starts.
        """
        profile = profiles.load_profile(profile)
        self._profiles[host] = profile
        self.conf.set_host(host, profile.conf_overrides())
        with self._start(host, connection(host, profile)):
            yield

    def started(self, host, service):
        """Pin the new service's driver to its host's connection."""
        conn = self._connections[host]
        service.manager.driver._host.get_connection = lambda: conn

    def empty_hypervisor(self, host, service):
        """Give the running ``host`` a freshly booted machine.

        A new fake libvirt connection from the host's profile (no guests,
        domain ids from 1), and the driver's own records of guests,
        migrations and jobs emptied; its caches of the host's capabilities
        stay, as the machine is the same.
        """
        from nova.virt.libvirt import driver as libvirt_driver
        from nova.virt.libvirt import instancejobtracker
        driver = service.manager.driver
        self._connections[host] = connection(host, self._profiles[host])
        self.started(host, service)
        driver.job_tracker = instancejobtracker.InstanceJobTracker()
        driver.active_migrations = {}
        driver.instance_claimed_mdevs = {}
        driver._device_event_handler = (
            libvirt_driver.AsyncDeviceEventsHandler())
        # Nova's image-backend stand-in keeps each guest's disks; shared
        # by the hosts, and every host is emptied together.
        self._image_backend.disks.clear()

    def reconfigure(self, host, config):
        """Change ``host``'s own config, for its next start and after.

        ``config`` is ``{section: {option: value}}`` as a profile's
        ``nova:`` (checked by the loader; ``None`` removes an option); the
        host's profile becomes its profile with these values, as its
        ``nova.conf`` file would.
        """
        profile = self._profiles[host]
        nova = {section: dict(options)
                for section, options in profile.nova.items()}
        for section, options in config.items():
            for name, value in options.items():
                if value is None:
                    # The option's line removed from the file.
                    nova.get(section, {}).pop(name, None)
                else:
                    nova.setdefault(section, {})[name] = value
        self._profiles[host] = dataclasses.replace(profile, nova=nova)
        self.conf.set_host(host, self._profiles[host].conf_overrides())

    @contextlib.contextmanager
    def restarting(self, host, old_service, keep_hypervisor_state):
        """Start ``host`` again from its profile.

        With ``keep_hypervisor_state`` the new service gets the old
        connection, guests and all; otherwise a freshly booted machine.
        """
        if keep_hypervisor_state:
            # The host's latest machine: the old service's, unless a start
            # Nova refused since booted it afresh (guests gone).
            conn = self._connections.get(
                host, old_service.manager.driver._host.get_connection())
        else:
            conn = connection(host, self._profiles[host])
        with self._start(host, conn):
            yield

    @contextlib.contextmanager
    def _start(self, host, conn):
        self._connections[host] = conn
        self._starting = conn
        groups = set(CONF._groups)
        try:
            with nova_fixtures.ConfPatcher(
                    compute_driver='libvirt.LibvirtDriver'):
                yield
        finally:
            self._starting = None
            _drop_mdev_groups(groups)
