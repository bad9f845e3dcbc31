"""Profiled hosts as Nova's libvirt tests build them (fakelibvirt).

A scenario whose hosts have a ``profile`` is exported as a class on
``nova.tests.functional.libvirt.base.ServersTestBase``: each profile is
written inline as Nova's fake libvirt ``HostInfo`` (its cells edited to
the profile's CPU numbering, sockets, memory and page pools, as Nova's
NUMA tests edit theirs) and ``HostPCIDevicesInfo`` (its passthrough
devices, GPUs included), and the profiles' options as ``self.flags``.
Nova's config is one per process: the hosts of one class must start
with the same options (the harness gives each host its own), else the
exporter refuses, naming two hosts; a start may then change what a
compute reads only as it starts (``Options``). With ``per_host`` (the
exported test may import the harness: ``--with-harness``) the options
the hosts hold otherwise are each host's own, set with the harness's
``PerHostConfig`` as the harness's hosts have them. What Nova's fakes cannot
show the way the harness does is refused by name: vDPA and
remote-managed functions, cores of different thread counts.
"""

import dataclasses
import re
import textwrap

from oslo_utils import versionutils

from harness.core import profile_devices
from harness.core import profiles
from harness.export import registry

Unsupported = registry.Unsupported

#: The CPUs ``ServersTestBase`` says are online (its get_online_cpus
#: patch); its ``_get_connection`` refuses a host of that many or more.
BASE_ONLINE_CPUS = 16


def profiled(scenario):
    """Whether ``scenario``'s hosts are profiled (libvirt) ones.

    Refused: a scenario with profiled and other hosts (one class, one
    compute driver).
    """
    kinds = {host.name: bool(host.profile)
             for host in scenario.hosts.values()}
    if any(kinds.values()) and not all(kinds.values()):
        raise Unsupported(
            'a profiled host (libvirt) beside one of another driver: host '
            '%r is profiled, host %r is not (one test class has one '
            'compute driver)'
            % (min(name for name, p in kinds.items() if p),
               min(name for name, p in kinds.items() if not p)))
    return bool(kinds) and all(kinds.values())


def slug(name):
    return re.sub(r'[^a-z0-9]+', '_', name.lower()).strip('_')


class Hosts(object):
    """The profiled hosts of one exported class, checked.

    ``profiles``: profile name -> ``HostProfile``; ``options[scenario
    name]``: ``{(group, name): value}`` every host of the scenario needs
    (its profile's ``nova:``), set in its test method before its computes
    start, as Nova's NUMA tests set theirs; ``own[scenario name]``:
    host -> ``{(group, name): value}``, the options the hosts hold
    otherwise, each host's own (only with ``per_host``: else refused).
    """

    def __init__(self, scenarios, per_host=False):
        self.profiles = {}
        self.options = {}
        self.own = {}
        self.per_host = per_host
        for scenario in scenarios:
            self.options[scenario.name], self.own[scenario.name] = (
                self._scenario(scenario))
        disks = {profile.disk_gb for profile in self.profiles.values()}
        if len(disks) > 1:
            raise Unsupported('the profiles %s have disks of different '
                              'sizes' % ', '.join(sorted(self.profiles)))

    def _scenario(self, scenario):
        """``(options every host has, {host: its own others})``."""
        by_host = {}
        for host in sorted(scenario.hosts.values(),
                           key=lambda host: host.name):
            if host.nodes is not None:
                raise Unsupported('host %r has several compute nodes'
                                  % host.name)
            profile = profiles.load_profile(host.profile)
            self._check_profile(host.name, profile)
            self.profiles[profile.name] = profile
            by_host[host.name] = profile.conf_overrides()
        first = min(by_host, default=None)
        shared = dict(by_host.get(first, {}))
        for host, options in sorted(by_host.items()):
            differ = sorted(
                (key for key in set(options) | set(shared)
                 if options.get(key) != shared.get(key)),
                key=_option)
            if differ and not self.per_host:
                raise Unsupported(
                    'hosts %r and %r need different options (%s); '
                    'Nova\'s config is one per process, so the computes '
                    'of one test share it (--with-harness exports it, '
                    'each host its own with the harness\'s PerHostConfig)'
                    % (first, host, ', '.join(_option(key)
                                              for key in differ)))
            for key in differ:
                shared.pop(key, None)
        own = {host: {key: value for key, value in options.items()
                      if key not in shared}
               for host, options in by_host.items()}
        for section, values in scenario.config.items():
            group = None if section == 'DEFAULT' else section
            for name, value in values.items():
                key = (group, name)
                if any(key in options for options in own.values()) or (
                        key in shared and shared[key] != value):
                    raise Unsupported(
                        'config %s.%s is set by the scenario and otherwise '
                        'by its hosts\' profile' % (section, name))
        return shared, {host: options for host, options in own.items()
                        if options}

    @staticmethod
    def _check_profile(host, profile):
        for device in profile.devices:
            if device.vdpa or device.serial:
                raise Unsupported(
                    'host %r (profile %s): device %s: vDPA and '
                    'remote-managed functions are not translated yet'
                    % (host, profile.name, device.address))
        threads = {len(core) for cell in profile.cells
                   for core in cell.siblings}
        if len(threads) != 1:
            raise Unsupported('host %r (profile %s): cores of different '
                              'numbers of threads' % (host, profile.name))

    def sysfs(self):
        """What sysfs says of the hosts' SR-IOV functions, or None.

        ``(PF addresses with VFs, {VF address: its number on its PF})``,
        as the harness's profiles answer Nova's ``pci.utils`` (a device
        is the same on every host that has it).
        """
        pfs, numbers = set(), {}
        for profile in self.profiles.values():
            for device in profile.devices:
                if device.kind == 'vf':
                    pfs.add(device.pf)
                    # The kernel numbers a PF's VFs from 0 in the
                    # order of their addresses (sysfs' virtfn<N>).
                    numbers[device.address] = sorted(
                        other.address for other in profile.devices
                        if other.kind == 'vf' and other.pf == device.pf
                    ).index(device.address)
        return (sorted(pfs), numbers) if pfs else None

    def vgpus(self):
        """Whether a host makes vGPUs ([devices] enabled_mdev_types)."""
        return any(profile.option('enabled_mdev_types', 'devices')
                   for profile in self.profiles.values())

    @property
    def cpus(self):
        """Every CPU of every host (those Nova's tests say are online)."""
        return frozenset().union(*(profile.cpus
                                   for profile in self.profiles.values()))

    @property
    def disk_gb(self):
        return min(profile.disk_gb for profile in self.profiles.values())

    def widens_online_cpus(self):
        """Whether a host has more CPUs than ServersTestBase's 16."""
        return any(len(profile.cpus) >= BASE_ONLINE_CPUS
                   for profile in self.profiles.values())


#: Options a compute reads as it starts and never again while it runs:
#: ``[pci] device_spec`` makes its PCI tracker's filter (``PciDevTracker``,
#: built at the start-up pass; ``init_host`` and the libvirt driver check
#: it there too), which the Placement translator reads thereafter; the
#: scheduler's ``PciDeviceStats`` parses it but matches no device with
#: it. Nova's PCI tests set it with ``self.flags`` before each compute
#: (re)start: so may an exported test. Any other option a running
#: compute reads again (the CPU sets, reserved amounts, allocation
#: ratios at each resource pass): one value for every compute.
START_ONLY = frozenset([('pci', 'device_spec')])


class Options(object):
    """The options of a scenario's computes and of the test, step by step.

    A start with ``config`` changes its host's options (for this and
    later starts, as the harness's edited nova.conf); the test sets, by
    ``self.flags`` before each start, the options that start reads where
    they differ from what the test has set. An option a running compute
    reads again must stay one for all the computes: else refused, or,
    with ``own`` (``Hosts.own``: the exported test may import the
    harness), the host's own, set with the harness's ``PerHostConfig``;
    an option a host has its own stays its own.
    """

    def __init__(self, scenario, shared, own=None):
        self.test = dict(shared)
        self.per_host = own is not None
        self.own = {name: dict(values)
                    for name, values in (own or {}).items()}
        self._nova = {}
        self._profiles = {}
        self.hosts = {}
        for name, host in scenario.hosts.items():
            profile = profiles.load_profile(host.profile)
            self._profiles[name] = profile
            self._nova[name] = {section: dict(options)
                                for section, options in profile.nova.items()}
            self.hosts[name] = profile.conf_overrides()

    def start(self, host, config=None):
        """The lines that set what ``host``'s start reads (indented 8)."""
        for section, options in (config or {}).items():
            for name, value in options.items():
                if value is None:
                    # The option's line removed from the host's file.
                    self._nova[host].get(section, {}).pop(name, None)
                else:
                    self._nova[host].setdefault(section, {})[name] = value
        if config:
            self.hosts[host] = dataclasses.replace(
                self._profiles[host], nova=self._nova[host]).conf_overrides()
        lines, own = [], self.own.get(host, {})
        changed = False
        for key in sorted(set(self.hosts[host]) | set(self.test) | set(own),
                          key=str):
            value = self.hosts[host].get(key)
            if key in own:
                if own[key] != value:
                    self._removable(host, key, value)
                    own[key] = value
                    changed = True
                continue
            if value == self.test.get(key):
                continue
            if key not in START_ONLY and not self._shared(host, key):
                self._removable(host, key, value)
                own[key] = value
                changed = True
                continue
            self._removable(host, key, value)
            lines += flags_lines(key[0], key[1], value)
            self.test[key] = value
        if changed:
            self.own[host] = own
            lines = own_lines(host, own) + lines
        return lines

    @staticmethod
    def _removable(host, key, value):
        if value is None and key not in UNSET_IS_DEFAULT:
            raise Unsupported('option %s removed from host %r\'s '
                              'config' % (_option(key), host))

    def _shared(self, host, key):
        """Whether every host has ``host``'s value of ``key``.

        If not, refused unless each host may have its own.
        """
        for other in sorted(self.hosts):
            if self.hosts[other].get(key) == self.hosts[host].get(key):
                continue
            if self.per_host:
                return False
            raise Unsupported(
                'option %s: host %r starts with %r, host %r has %r; '
                'a running compute reads it again, and the computes '
                'of one test share one config (--with-harness exports it, '
                'each host its own with the harness\'s PerHostConfig)'
                % (_option(key), host, self.hosts[host].get(key),
                   other, self.hosts[other].get(key)))
        return True


def own_lines(host, values):
    """``host``'s own options, set with ``PerHostConfig`` (indented 8)."""
    groups = {}
    for (group, name), value in values.items():
        groups.setdefault(group or 'DEFAULT', {})[name] = value
    lines = ["        # The options %s has otherwise (its own nova.conf)."
             % host,
             '        self.host_config.set_host(%r, {' % host]
    for group, options in sorted(groups.items()):
        lines.append('            %r: {' % group)
        for name, value in sorted(options.items()):
            if isinstance(value, list):
                lines += (['                %r: [' % name]
                          + ['                    %r,' % item
                             for item in value]
                          + ['                ],'])
            else:
                lines.append('                %r: %r,' % (name, value))
        lines.append('            },')
    return lines + ['        })']


#: Options whose absence is their default, None (a removed CPU set).
UNSET_IS_DEFAULT = frozenset([('compute', 'cpu_dedicated_set'),
                              ('compute', 'cpu_shared_set')])


def _option(key):
    return '%s.%s' % (key[0] or 'DEFAULT', key[1])


def _cpu_set(cpus):
    cpus = sorted(cpus)
    if cpus == list(range(len(cpus))):
        return 'set(range(%d))' % len(cpus)
    return repr(set(cpus))


def option_lines(options):
    """The hosts' options as ``self.flags`` (indented 8)."""
    lines = []
    if options:
        lines.append("        # The hosts' own options (their profiles' "
                     "nova.conf), one for all.")
    for (group, name), value in sorted(options.items(),
                                       key=lambda item: str(item[0])):
        lines += flags_lines(group, name, value)
    return lines


def flags_lines(group, name, value):
    """``self.flags(name=value, group=group)``, within 79 columns."""
    items = ['%s=%r' % (name, value)]
    if group not in (None, 'DEFAULT'):
        items.append('group=%r' % group)
    line = '        self.flags(%s)' % ', '.join(items)
    if len(line) <= 79:
        return [line]
    if isinstance(value, list):
        return (['        self.flags(%s=[' % name]
                + ['            %r,' % item for item in value]
                + ['        ]%s)' % (', group=%r' % group
                                     if len(items) > 1 else '')])
    return ['        self.flags('] + _args(items, '            ', ')')


def setup_lines(hosts, live_migrates):
    """What the class's setUp adds for its profiled hosts (indented 8)."""
    lines = []
    sysfs = hosts.sysfs()
    if sysfs:
        pfs, numbers = sysfs
        lines += [
            "        # What sysfs says of the hosts' SR-IOV functions: "
            "which",
            "        # addresses are PFs with VFs, a VF's number on its PF.",
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.pci.utils.is_physical_function',",
            "            lambda *address: ('%s:%s:%s.%s' % address).lower()",
            '            in %r))' % (pfs,),
            '        vf_numbers = {']
        lines += ['            %r: %d,' % item
                  for item in sorted(numbers.items())]
        lines += [
            '        }',
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.pci.utils.get_vf_num_by_pci_address',",
            '            lambda address: vf_numbers[address.lower()]))']
    cpus = hosts.cpus
    if set(cpus) != set(range(BASE_ONLINE_CPUS)):
        lines += [
            "        # Every CPU of the hosts online (ServersTestBase's "
            "mock says 0-15).",
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.virt.libvirt.host.Host.get_online_cpus',",
            '            lambda host: %s))' % _cpu_set(cpus)]
    lines += [
        "        # The instances filesystem, as the profiles size it "
        "(ServersTestBase's",
        "        # mock says 128 GB).",
        '        self.useFixture(fixtures.MonkeyPatch(',
        "            'nova.virt.libvirt.LibvirtDriver._get_local_gb_info',",
        "            lambda driver: {'total': %d, 'used': 0, 'free': %d}))"
        % (hosts.disk_gb, hosts.disk_gb),
        "        # A cold move copies no disk (the instances path is "
        "shared), as",
        "        # Nova's NUMA tests mock it around a resize.",
        '        self.useFixture(fixtures.MockPatch(',
        "            'nova.virt.libvirt.driver.LibvirtDriver.'",
        "            'migrate_disk_and_power_off', return_value='{}'))"]
    if hosts.vgpus():
        lines += [
            '',
            '        def create_mdev(driver, dev_name, mdev_type, uuid=None):',
            "            # A vGPU, made by the GPU's driver in sysfs as the "
            "host's",
            "            # libvirt then lists it (as Nova's vGPU tests make "
            "them), and",
            "            # the type's availableInstances one lower "
            "(fakelibvirt's",
            '            # stays as it started: Nova would count the vGPU '
            'twice).',
            '            uuid = uuid or uuidutils.generate_uuid()',
            '            connection = driver._host.get_connection()',
            '            name = libvirt_utils.mdev_uuid2name(uuid)',
            '            connection.mdev_info.devices[name] = (',
            '                fakelibvirt.FakeMdevDevice(',
            '                    dev_name=name, type_id=mdev_type, '
            'parent=dev_name))',
            '            gpu = connection.pci_info.devices[dev_name]',
            '            gpu.pci_device = re.sub(',
            "                r\"(<type id='%s'>.*?<availableInstances>)"
            "(\\d+)<\" % (",
            '                    re.escape(mdev_type)),',
            "                lambda match: '%s%d<' % (",
            '                    match.group(1), max(int(match.group(2)) '
            '- 1, 0)),',
            '                gpu.pci_device, count=1, flags=re.S)',
            '            return uuid',
            '',
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.virt.libvirt.driver.LibvirtDriver."
            "_create_mdev',",
            '            create_mdev))']
    if live_migrates:
        lines += [
            '',
            '        def migrate_to_uri3(domain, dconnuri, params, flags):',
            "            # Libvirt's live migration, as "
            "LibvirtMigrationMixin's stub:",
            "            # the guest defined on the destination from "
            "the XML Nova",
            "            # wrote for it, the job complete.",
            '            dest = urllib.parse.urlparse(dconnuri).hostname',
            '            self.computes[dest].driver._host.get_connection('
            ').createXML(',
            "                params['destination_xml'], 0)",
            '            domain.complete_job()',
            '',
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',",
            '            migrate_to_uri3))']
    return lines


# A class whose hosts have 16 CPUs or more: ServersTestBase's
# _get_connection refuses them (its online CPUs are 0-15); setUp puts the
# hosts' CPUs online, as Nova's tests override _get_connection.
WIDE_CONNECTION = '''
    def _get_connection(
        self, host_info=None, pci_info=None, mdev_info=None, vdpa_info=None,
        libvirt_version=None, qemu_version=None, hostname=None,
    ):
        return fakelibvirt.Connection(
            'qemu:///system',
            version=libvirt_version or fakelibvirt.FAKE_LIBVIRT_VERSION,
            hv_version=qemu_version or fakelibvirt.FAKE_QEMU_VERSION,
            host_info=host_info, pci_info=pci_info, mdev_info=mdev_info,
            vdpa_info=vdpa_info, hostname=hostname)
'''

# The helpers of a class of profiled hosts.
HELPERS = '''
    def _shape_cells(self, host_info, cells):
        """Edit fakelibvirt's cells to the host's, as NUMA tests do.

        ``cells``: per cell, its socket, memory (MiB), cores (each its
        sibling CPUs) and pages ({size in KiB: count}, the 4K pool
        included). fakelibvirt numbers a core's threads next to each
        other, every cell on socket 0.
        """
        for cell, (socket, memory_mb, cores, pages) in zip(
                host_info.numa_topology.cells, cells):
            cell.memory = memory_mb * 1024
            cell.cpus = []
            for core_id, core in enumerate(cores):
                for cpu_id in core:
                    cpu = vconfig.LibvirtConfigCapsNUMACPU()
                    cpu.id = cpu_id
                    cpu.socket_id = socket
                    cpu.core_id = core_id
                    cpu.siblings = set(core)
                    cell.cpus.append(cpu)
            cell.cpus.sort(key=lambda cpu: cpu.id)
            cell.mempages = fakelibvirt.create_mempages(
                sorted(pages.items()))

    def _pinned(self, host):
        """Cell id -> the CPUs the host's compute node record pins."""
        node = self._node(host)
        if node is None or not node.numa_topology:
            return {}
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return {cell.id: sorted(cell.pinned_cpus)
                for cell in topology.cells}

    def assertPinnedCpus(self, expected):
        """Each host's pinned CPUs: how many, or which (a list).

        On the host, or cell by cell ({cell id: ...}; a cell not named
        pins none); a host not named pins none.
        """
        for host in sorted(self.computes):
            cells = self._pinned(host)
            want = expected.get(host, 0)
            if not isinstance(want, dict):
                want = {None: want}
                cells = {None: sorted(
                    cpu for cpus in cells.values() for cpu in cpus)}
            for cell in sorted(set(want) | set(cells), key=str):
                pinned = cells.get(cell, [])
                wanted = want.get(cell, 0)
                self.assertEqual(
                    wanted, len(pinned) if isinstance(wanted, int)
                    else pinned, 'pinned CPUs on %s%s' % (
                        host, '' if cell is None else ' cell %d' % cell))

    def _node(self, host):
        try:
            return objects.ComputeNode.get_by_host_and_nodename(
                self.context, host, host)
        except exception.ComputeHostNotFound:
            return None

    def assertPci(self, name, expected):
        """The PCI devices the server holds (claimed or allocated).

        By host: how many, which (addresses) or how many on each NUMA
        cell ({cell id: n}); none on a host not named.
        """
        held = {}
        for host in sorted(self.computes):
            node = self._node(host)
            if node is None:
                continue
            for device in objects.PciDeviceList.get_by_compute_node(
                    self.context, node.id):
                held_by_it = (
                    device.instance_uuid == self.servers[name]['id'] and
                    device.status in ('claimed', 'allocated'))
                if held_by_it:
                    held.setdefault(host, []).append(device)
        for host in sorted(set(expected) | set(held)):
            want = expected.get(host, 0)
            devices = held.get(host, [])
            if isinstance(want, int):
                got = len(devices)
            elif isinstance(want, list):
                got = sorted(device.address for device in devices)
            else:
                want = {cell: n for cell, n in want.items() if n}
                got = {}
                for device in devices:
                    got[device.numa_node] = got.get(device.numa_node, 0) + 1
            self.assertEqual(want, got, 'PCI devices of %s on %s'
                             % (name, host))

    def assertTrackerFields(self, host, expected):
        """The fields named of the host's compute node record.

        And its NUMA cells' usage ({'cells': {cell id: {field: n}}}).
        """
        node = self._node(host)
        self.assertIsNotNone(node, 'the resource tracker of %s: no compute '
                             'node record' % host)
        got = {key: getattr(node, key) for key in expected
               if key != 'cells'}
        if 'cells' in expected:
            topology = objects.NUMATopology.obj_from_db_obj(
                node.numa_topology)
            cells = {cell.id: cell for cell in topology.cells}
            got['cells'] = {
                cell: {key: getattr(cells[cell], key, None)
                       if cell in cells else None for key in fields}
                for cell, fields in expected['cells'].items()}
        self.assertEqual(expected, got, 'the resource tracker of %s' % host)

    def _gpu_providers(self, host):
        """The host's GPUs' providers of VGPU.

        Nova names them <host>_<libvirt name of the GPU>
        (<host>_pci_0000_af_00_0).
        """
        root = self._providers().get(host)
        return [
            provider['uuid'] for provider in (
                self._get_all_rps_in_a_tree(root) if root else [])
            if re.match(r'^%s_pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}_[0-7]$'
                        % re.escape(host), provider['name'])]

    def assertMdevs(self, name, expected):
        """The mediated devices each running host's driver gave the server.

        As Nova's driver reads them from its guests; exact: none on a
        host not named.
        """
        got = {}
        for host in sorted({host for host, _ in self._due}):
            assigned = self.computes[host].driver.\\
                _get_all_assigned_mediated_devices()
            count = list(assigned.values()).count(self.servers[name]['id'])
            if count:
                got[host] = count
        self.assertEqual({host: count for host, count in expected.items()
                          if count}, got, 'mediated devices of %s' % name)

    def assertDevices(self, host, expected):
        """The host's PCI devices by status (one not named: none).

        With 'placement': the usage of its PCI device providers (Nova
        names them <host>_<PCI address>), all classes summed; with
        'vgpus': the VGPU usage of its GPUs' providers.
        """
        got = {}
        node = self._node(host)
        if node is not None:
            for device in objects.PciDeviceList.get_by_compute_node(
                    self.context, node.id):
                got[device.status] = got.get(device.status, 0) + 1
        if 'vgpus' in expected:
            got['vgpus'] = sum(
                self._get_provider_usages(uuid).get('VGPU', 0)
                for uuid in self._gpu_providers(host))
        if 'placement' in expected:
            got['placement'] = 0
            root = self._providers().get(host)
            tree = self._get_all_rps_in_a_tree(root) if root else []
            for provider in tree:
                if re.match(r'^%s_[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}'
                            r'\\.[0-7]$' % re.escape(host), provider['name']):
                    got['placement'] += sum(self._get_provider_usages(
                        provider['uuid']).values())
        self.assertEqual(
            {key: count for key, count in expected.items() if count},
            {key: count for key, count in got.items() if count},
            'devices of %s' % host)
'''


def host_info_method(profile):
    """The method that builds ``profile``'s fake libvirt host."""
    threads = profile.threads_per_core
    per_cell = {len(cell.cpus) for cell in profile.cells}
    cores = max(per_cell) // threads
    name = '_host_info_%s' % slug(profile.name)
    first = profile.description.split('. ')[0].strip().rstrip('.')
    lines = ['', '    def %s(self):' % name,
             '        """Profile %s.' % profile.name, '']
    lines += ['        %s' % line for line in _wrap(first + '.', 64)]
    lines += ['        """',
              '        host_info = fakelibvirt.HostInfo(',
              '            cpu_nodes=%d, cpu_sockets=1, cpu_cores=%d, '
              'cpu_threads=%d,' % (len(profile.cells), cores, threads),
              "            # getInfo() passes it on as libvirt's MiB.",
              '            kB_mem=%d)' % profile.memory_mb,
              '        self._shape_cells(host_info, [']
    for cell in profile.cells:
        cores_of = [sorted(core) for core in sorted(cell.siblings, key=min)]
        lines.append('            # cell %d' % cell.id)
        lines.append('            (%d, %d, %s,' % (
            cell.socket, cell.memory_mb, _short(cores_of)))
        lines.append('             %r),' % dict(sorted(cell.pages.items())))
    lines += ['        ])', '        return host_info']
    if profile.devices:
        lines += _pci_info_method(profile)
    return lines


# Profile device kinds -> fakelibvirt's dev_type.
DEV_TYPES = {'pci': 'PCI', 'pf': 'PF', 'vf': 'VF', 'mdev_gpu': 'MDEV_TYPES'}


def _pci_info_method(profile):
    """The method that lists ``profile``'s devices, as the harness does.

    Each with ``HostPCIDevicesInfo.add_device``; the fake shows a VF's PF
    at slot ``slot - (vf_ratio + 1) // 8``, function 0, so each VF gets
    the ratio that names its own PF.
    """
    lines = ['', '    def _pci_info_%s(self):' % slug(profile.name),
             '        """Profile %s\'s devices."""' % profile.name,
             '        pci_info = fakelibvirt.HostPCIDevicesInfo(',
             '            num_pci=0, num_pfs=0, num_vfs=0)']
    vfs_of = profile_devices.vf_counts(profile.devices)
    by_address = {device.address: device for device in profile.devices}
    for group, device in enumerate(profile.devices):
        bus, slot, function = device.bus_slot_function
        extra = []
        if device.kind == 'pf':
            extra.append('vf_ratio=%d' % vfs_of.get(device.address, 0))
        elif device.kind == 'vf':
            pf = by_address[device.pf].bus_slot_function
            extra += ['vf_ratio=%d' % (8 * (slot - pf[1])),
                      'parent=%r' % (pf,)]
        elif device.kind == 'mdev_gpu':
            extra.append('multiple_gpu_types=%r'
                         % (len(device.mdev_types) > 1))
        extra += ['vend_id=%r' % device.vendor,
                  'prod_id=%r' % device.product,
                  'prod_name=%r' % (device.name or None,)]
        lines += ['        pci_info.add_device(',
                  "            dev_type=%r, bus=%d, slot=%d, function=%d,"
                  % (DEV_TYPES[device.kind], bus, slot, function),
                  '            iommu_group=%d, numa_node=%d,'
                  % (40 + group, device.cell)]
        lines += _args(extra, '            ', ')')
    lines.append('        return pci_info')
    return lines


def _args(items, indent, end, width=79):
    """``items`` joined by commas over lines of ``indent``, then ``end``."""
    lines, line = [], indent
    for number, item in enumerate(items):
        piece = item + (end if number == len(items) - 1 else ',')
        if line.strip() and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = indent
        line += (' ' if line.strip() else '') + piece
    return lines + [line]


def _short(value):
    text = repr(value)
    if len(text) <= 56:
        return text
    # Cores a line, to keep within 79 columns.
    return '[\n' + ''.join('                %r,\n' % core for core in value) \
        + '            ]'


def _wrap(text, width):
    return textwrap.wrap(text.replace('"""', "'''"), width)


def start_lines(host, profile, indent):
    """Start ``host``'s compute shaped like ``profile``."""
    items = ['hostname=%r' % host] + connection_items(profile)
    return [indent + 'self.start_compute('] + _args(
        items, indent + '    ', ')')


def connection_items(profile):
    """The arguments of ``start_compute`` that build ``profile``'s host.

    Its fake libvirt: the host info, its devices, its versions.
    """
    name = slug(profile.name)
    versions = []
    for field, key in (('libvirt_version', 'libvirt'),
                       ('qemu_version', 'qemu')):
        if key in profile.hypervisor:
            versions.append('%s=%d' % (
                field, versionutils.convert_version_to_int(
                    profile.hypervisor[key])))
    items = ['host_info=self._host_info_%s()' % name]
    if profile.devices:
        items.append('pci_info=self._pci_info_%s()' % name)
    return items + versions
