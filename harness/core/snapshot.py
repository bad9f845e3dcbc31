"""``Snapshot``: the accounting of a cloud at one moment.

A snapshot is built from raw records, as Placement's REST API and Nova's
API and database return them (see ``SnapshotReader``), and holds:

- ``providers``: resource providers by name, with parent, inventories,
  usages and generation;
- ``allocations``: consumer name -> provider name -> resource class ->
  amount, where consumers carry the names the test gave them (``vm1``,
  ``migration(vm1)``; a consumer nobody named keeps its UUID);
- ``trackers``: each compute node as its resource tracker last saved it,
  with NUMA cells where the driver reports them;
- ``servers`` and ``migrations``: where things are, for invariants;
- ``devices``: each host's PCI devices as its PCI tracker last saved them
  in the cell database (address, Nova's type, NUMA cell, status, the
  server holding it), and ``guests``: for each server holding a device,
  the host cells its NUMA topology uses and its PCI NUMA affinity policy;
- ``nodes``: each compute node record, deleted ones too, with the
  ``stats`` the resource tracker saved, and ``hypervisors``: the
  hypervisor list as Nova's API shows it;
- ``instances``: each server's record in the cell database (host, node,
  states, project, its NUMA cells and vCPU-to-host-CPU pinning);
- ``domains``: each guest's domain as the hypervisor (a profiled host's
  fake libvirt) holds it, from the domain XML Nova defined there.

This module imports nothing from Nova: checks and unit tests read
snapshots without a cloud.
"""

import dataclasses
import re
import typing
import xml.etree.ElementTree as etree

MIGRATION = 'migration(%s)'

# What a snapshot reads, by URL; the records keep only these keys.
PROVIDER_KEYS = ('uuid', 'name', 'generation', 'parent_provider_uuid',
                 'root_provider_uuid')
SERVER_KEYS = ('id', 'name', 'status', 'OS-EXT-SRV-ATTR:host',
               'OS-EXT-SRV-ATTR:hypervisor_hostname',
               'OS-EXT-STS:task_state', 'OS-EXT-STS:vm_state')
MIGRATION_KEYS = ('id', 'uuid', 'instance_uuid', 'status', 'source_compute',
                  'dest_compute', 'migration_type')
HYPERVISOR_KEYS = ('id', 'hypervisor_hostname', 'state', 'status')
SERVERS_URL = '/servers/detail?all_tenants=1'
HYPERVISORS_URL = '/os-hypervisors'
MIGRATIONS_URL = '/os-migrations'


def placement_records(get):
    """Raw Placement records, from ``get(url) -> response body``.

    One pass: the provider list, then each provider's inventories, usages
    and allocations (by provider, so that a consumer nobody knows about
    still shows).
    """
    rps = get('/resource_providers')['resource_providers']
    raw = {'resource_providers': [], 'inventories': {}, 'usages': {},
           'allocations': {}}
    for rp in sorted(rps, key=lambda r: r['name']):
        uuid = rp['uuid']
        raw['resource_providers'].append(
            {key: rp.get(key) for key in PROVIDER_KEYS})
        base = '/resource_providers/%s' % uuid
        raw['inventories'][uuid] = get(base + '/inventories')['inventories']
        raw['usages'][uuid] = get(base + '/usages')['usages']
        # Only what each consumer holds (not its generation).
        raw['allocations'][uuid] = {
            consumer: {'resources': alloc['resources']} for consumer, alloc
            in get(base + '/allocations')['allocations'].items()}
    return raw


def nova_records(get):
    """Raw server and migration records from Nova's API, via ``get``."""
    return {
        'servers': [{key: srv.get(key) for key in SERVER_KEYS}
                    for srv in get(SERVERS_URL)['servers']],
        'migrations': [{key: mig.get(key) for key in MIGRATION_KEYS}
                       for mig in get(MIGRATIONS_URL)['migrations']],
    }


@dataclasses.dataclass
class Provider(object):
    name: str
    uuid: str
    generation: int
    parent: typing.Optional[str]
    root: str
    inventories: dict
    usages: dict


@dataclasses.dataclass
class Cell(object):
    """One NUMA cell as the resource tracker counts it."""
    id: int
    cpus: tuple
    pcpus: tuple
    cpu_usage: int
    memory_mb: int
    memory_usage: int
    pinned_cpus: tuple
    # page size in KiB -> {'total': n, 'used': n, 'reserved': n}
    pages: dict


@dataclasses.dataclass
class Tracker(object):
    """One compute node as its resource tracker last saved it."""
    host: str
    node: str
    vcpus: int
    vcpus_used: int
    memory_mb: int
    memory_mb_used: int
    local_gb: int
    local_gb_used: int
    cells: tuple = ()

    @property
    def pinned_cpus(self):
        return tuple(sorted(c for cell in self.cells
                            for c in cell.pinned_cpus))

    def usage(self):
        view = {'vcpus_used': self.vcpus_used,
                'memory_mb_used': self.memory_mb_used,
                'local_gb_used': self.local_gb_used}
        if self.cells:
            view['cells'] = {
                cell.id: {'cpu_usage': cell.cpu_usage,
                          'memory_usage': cell.memory_usage,
                          'pinned_cpus': list(cell.pinned_cpus),
                          'pages_used': {size: page['used'] for size, page
                                         in sorted(cell.pages.items())}}
                for cell in self.cells}
        return view


@dataclasses.dataclass
class Device(object):
    """One PCI device of a host, as its PCI tracker last saved it."""
    host: str
    address: str
    type: str
    cell: typing.Optional[int]
    status: str
    # The server holding it (its name), or None.
    server: typing.Optional[str]
    parent: typing.Optional[str] = None
    vendor: str = ''
    product: str = ''

    @property
    def held(self):
        """Whether a guest holds it (claimed for, or allocated to)."""
        return self.status in HELD_STATUSES


# PCI device statuses (nova.objects.fields.PciDeviceStatus) in which a
# guest holds the device.
HELD_STATUSES = frozenset(('claimed', 'allocated'))


@dataclasses.dataclass
class Guest(object):
    """What a server holding devices asked for and where it runs."""
    # Host NUMA cells of the guest's NUMA topology (empty without one).
    cells: tuple
    # hw:pci_numa_affinity_policy of its PCI requests (None: legacy).
    policies: tuple


@dataclasses.dataclass
class Server(object):
    name: str
    uuid: str
    status: str
    host: typing.Optional[str]
    task_state: typing.Optional[str]
    # Its compute node (instance.node): a multi-node host has several.
    node: typing.Optional[str] = None


@dataclasses.dataclass
class Migration(object):
    consumer: str
    server: str
    uuid: str
    status: str
    source: str
    dest: str
    type: str


@dataclasses.dataclass
class NodeRecord(object):
    """A compute node record in the cell database (deleted or not)."""
    host: str
    node: str
    uuid: str
    deleted: bool
    vcpus: int
    vcpus_used: int
    memory_mb: int
    memory_mb_used: int
    local_gb: int
    local_gb_used: int
    # What the resource tracker saved (nova.compute.stats.Stats): counts
    # of instances, vm/task states, OS types and projects, io_workload.
    stats: dict
    running_vms: int = 0
    current_workload: int = 0


@dataclasses.dataclass
class Hypervisor(object):
    """One entry of Nova's hypervisor list (``GET /os-hypervisors``)."""
    name: str
    uuid: str
    state: str
    status: str


@dataclasses.dataclass
class GuestCell(object):
    """One NUMA cell of a guest (``InstanceNUMACell``)."""
    # The host cell it sits on.
    id: int
    # The guest's vCPUs in it, and vCPU -> host CPU where pinned.
    cpus: tuple
    pinning: dict
    # Host CPUs set aside for emulator threads (isolate policy).
    reserved: tuple
    memory_mb: int
    # Page size in KiB, None without hw:mem_page_size.
    pagesize: typing.Optional[int]


@dataclasses.dataclass
class Instance(object):
    """A server as the cell database records it."""
    uuid: str
    host: typing.Optional[str]
    node: typing.Optional[str]
    vm_state: str
    task_state: typing.Optional[str]
    os_type: typing.Optional[str]
    project_id: str
    cells: tuple = ()
    emulator_threads_policy: typing.Optional[str] = None

    @property
    def pinning(self):
        """vCPU -> host CPU, over all its cells ({} when not pinned)."""
        return {vcpu: pcpu for cell in self.cells
                for vcpu, pcpu in cell.pinning.items()}


@dataclasses.dataclass
class Domain(object):
    """A guest's domain as its hypervisor holds it (the domain XML)."""
    host: str
    uuid: str
    vcpus: int
    # vCPU -> host CPUs it may run on (<cputune><vcpupin>).
    vcpupin: dict
    emulatorpin: tuple
    iothreadpin: tuple
    # guest cell -> host NUMA nodes of its memory (<numatune><memnode>).
    memnodes: dict
    # page size in KiB -> guest cells backed by it (<memoryBacking>).
    hugepages: dict
    # PCI addresses of its host devices (<hostdev>, <interface
    # type='hostdev'>), lower case, and its mediated devices' UUIDs.
    hostdevs: tuple
    mdevs: tuple


class Snapshot(object):
    """The accounting at one moment; equal when the accounting is equal.

    Equality compares allocations, inventories, usages and tracker usage;
    it ignores UUIDs, provider generations and server statuses, which
    change without the accounting changing.
    """

    def __init__(self, providers, allocations, trackers, servers=None,
                 migrations=None, label='', devices=None, guests=None,
                 mdevs=None):
        self.providers = providers
        self.allocations = allocations
        self.trackers = trackers
        self.servers = servers or {}
        self.migrations = migrations or {}
        self.label = label
        # host -> address -> Device
        self.devices = devices or {}
        # server name -> Guest, for servers holding devices
        self.guests = guests or {}
        # server name -> host -> mediated devices its hypervisor assigned
        self.mdevs = mdevs or {}
        # node name -> NodeRecord; hypervisor name -> Hypervisor
        self.nodes = {}
        self.hypervisors = {}
        # server name -> Instance
        self.instances = {}
        # host -> server name -> Domain, for hosts with a libvirt hypervisor
        self.domains = {}

    # -- building ---------------------------------------------------------

    @classmethod
    def from_raw(cls, raw, server_names, label='', former_names=None):
        """Build a snapshot from raw records (see ``SnapshotReader``).

        ``server_names`` maps server UUIDs to the names the test gave;
        ``former_names`` maps consumers no longer on record (the migration
        of a deleted server) to the names earlier snapshots gave them, so
        that what they leak reads the same in every run.
        """
        rp_names = {rp['uuid']: rp['name']
                    for rp in raw['resource_providers']}
        providers = {}
        for rp in raw['resource_providers']:
            uuid = rp['uuid']
            providers[rp['name']] = Provider(
                name=rp['name'], uuid=uuid, generation=rp['generation'],
                parent=rp_names.get(rp.get('parent_provider_uuid')),
                root=rp_names.get(rp.get('root_provider_uuid'), rp['name']),
                inventories={
                    rc: dict(inv) for rc, inv in
                    raw['inventories'].get(uuid, {}).items()},
                usages={rc: n for rc, n in
                        raw['usages'].get(uuid, {}).items() if n})

        servers = {}
        for srv in raw.get('servers', []):
            name = server_names.get(srv['id'], srv['id'])
            servers[name] = Server(
                name=name, uuid=srv['id'], status=srv['status'],
                host=srv.get('OS-EXT-SRV-ATTR:host'),
                task_state=srv.get('OS-EXT-STS:task_state'),
                node=srv.get('OS-EXT-SRV-ATTR:hypervisor_hostname'))

        consumer_names = dict(former_names or {})
        consumer_names.update(server_names)
        migrations = {}
        count = {}
        for mig in sorted(raw.get('migrations', []), key=lambda m: m['id']):
            server = server_names.get(mig['instance_uuid'],
                                      mig['instance_uuid'])
            consumer = MIGRATION % server
            count[consumer] = count.get(consumer, 0) + 1
            if consumer in migrations:
                # An older migration of the same server: keep it apart,
                # numbered in order (a name that is the same every run).
                older = migrations.pop(consumer)
                older.consumer = '%s#%d' % (consumer, count[consumer] - 1)
                migrations[older.consumer] = older
                consumer_names[older.uuid] = older.consumer
            migrations[consumer] = Migration(
                consumer=consumer, server=server, uuid=mig['uuid'],
                status=mig['status'], source=mig['source_compute'],
                dest=mig['dest_compute'], type=mig['migration_type'])
            consumer_names[mig['uuid']] = consumer

        allocations = {}
        for rp_uuid, by_consumer in raw['allocations'].items():
            rp_name = rp_names.get(rp_uuid, rp_uuid)
            for consumer_uuid, alloc in by_consumer.items():
                consumer = consumer_names.get(consumer_uuid, consumer_uuid)
                resources = {rc: n for rc, n in alloc['resources'].items()
                             if n}
                if resources:
                    allocations.setdefault(consumer, {})[rp_name] = resources

        trackers = {}
        for node in raw.get('compute_nodes', []):
            cells = tuple(
                Cell(id=c['id'], cpus=tuple(c['cpus']),
                     pcpus=tuple(c['pcpus']), cpu_usage=c['cpu_usage'],
                     memory_mb=c['memory_mb'],
                     memory_usage=c['memory_usage'],
                     pinned_cpus=tuple(sorted(c['pinned_cpus'])),
                     pages={int(size): dict(page)
                            for size, page in c['pages'].items()})
                for c in node.get('cells', ()))
            trackers[node['node']] = Tracker(
                host=node['host'], node=node['node'], vcpus=node['vcpus'],
                vcpus_used=node['vcpus_used'], memory_mb=node['memory_mb'],
                memory_mb_used=node['memory_mb_used'],
                local_gb=node['local_gb'],
                local_gb_used=node['local_gb_used'], cells=cells)
        devices = {}
        for dev in raw.get('pci_devices', ()):
            server = dev['instance_uuid']
            devices.setdefault(dev['host'], {})[dev['address']] = Device(
                host=dev['host'], address=dev['address'],
                type=dev['dev_type'], cell=dev['numa_node'],
                status=dev['status'],
                server=server_names.get(server, server),
                parent=dev.get('parent_addr'),
                vendor=dev.get('vendor_id', ''),
                product=dev.get('product_id', ''))
        guests = {
            server_names.get(uuid, uuid): Guest(
                cells=tuple(guest['cells']),
                policies=tuple(guest['policies']))
            for uuid, guest in raw.get('pci_guests', {}).items()}
        mdevs = {}
        for mdev in raw.get('mdevs', ()):
            server = server_names.get(mdev['instance_uuid'],
                                      mdev['instance_uuid'])
            held = mdevs.setdefault(server, {})
            held[mdev['host']] = held.get(mdev['host'], 0) + 1
        snap = cls(providers, allocations, trackers, servers, migrations,
                   label, devices, guests, mdevs)
        snap.nodes = node_records(raw.get('node_records', ()))
        snap.hypervisors = {
            hyp['hypervisor_hostname']: Hypervisor(
                name=hyp['hypervisor_hostname'], uuid=hyp['id'],
                state=hyp['state'], status=hyp['status'])
            for hyp in raw.get('hypervisors', ())}
        snap.instances = {
            server_names.get(inst['uuid'], inst['uuid']): instance_record(
                inst) for inst in raw.get('instances', ())}
        for dom in raw.get('domains', ()):
            on_host = snap.domains.setdefault(dom['host'], {})
            if dom.get('uuid') is not None:
                on_host[server_names.get(dom['uuid'], dom['uuid'])] = (
                    parse_domain(dom['host'], dom['xml']))
        return snap

    # -- reading ----------------------------------------------------------

    def compute_nodes(self):
        """Names of the root providers that are compute nodes."""
        return sorted(name for name, rp in self.providers.items()
                      if rp.parent is None and name in self.trackers)

    def usage(self, provider, rc=None):
        usages = self.provider(provider).usages
        return usages.get(rc, 0) if rc else dict(usages)

    def provider(self, name):
        try:
            return self.providers[name]
        except KeyError:
            raise KeyError('no resource provider named %r; known: %s'
                           % (name, ', '.join(sorted(self.providers))))

    def allocations_of(self, consumer):
        """Provider -> resources held by ``consumer`` ({} if nothing)."""
        return self.allocations.get(consumer, {})

    def allocations_against(self, provider):
        """Consumer -> resources held against ``provider``."""
        return {consumer: by_rp[provider]
                for consumer, by_rp in self.allocations.items()
                if provider in by_rp}

    def accounting(self):
        """The part of the snapshot that equality compares, as plain data."""
        return {
            'allocations': self.allocations,
            'providers': {name: {'inventories': rp.inventories,
                                 'usages': rp.usages}
                          for name, rp in self.providers.items()},
            'trackers': {name: tracker.usage()
                         for name, tracker in self.trackers.items()},
            'devices': {host: {address: (dev.status, dev.server)
                               for address, dev in by_address.items()}
                        for host, by_address in self.devices.items()},
        }

    def __eq__(self, other):
        if not isinstance(other, Snapshot):
            return NotImplemented
        return self.accounting() == other.accounting()

    __hash__ = None

    def __repr__(self):
        return '<Snapshot %s>' % (self.label or hex(id(self)))

    # -- rendering --------------------------------------------------------

    def render(self):
        """A readable table: consumers by provider, then each tracker."""
        providers = sorted(self.providers)
        rows = [['consumer'] + providers]
        for consumer in sorted(self.allocations):
            held = self.allocations[consumer]
            rows.append([consumer] + [format_resources(held.get(rp, {}))
                                      for rp in providers])
        rows.append(['usage'] + [format_resources(self.providers[rp].usages)
                                 for rp in providers])
        lines = []
        if self.label:
            lines.append(self.label)
        lines.extend(format_table(rows))
        for name in sorted(self.trackers):
            tracker = self.trackers[name]
            lines.append(
                'tracker %s: vcpus %d/%d, memory_mb %d/%d, local_gb %d/%d'
                % (name, tracker.vcpus_used, tracker.vcpus,
                   tracker.memory_mb_used, tracker.memory_mb,
                   tracker.local_gb_used, tracker.local_gb))
            for cell in tracker.cells:
                pages = ', '.join(
                    '%dK %d/%d' % (size, page['used'], page['total'])
                    for size, page in sorted(cell.pages.items()))
                lines.append(
                    '  cell %d: cpus %d used, pinned [%s], memory_mb %d/%d'
                    '%s' % (cell.id, cell.cpu_usage,
                            format_cpus(cell.pinned_cpus),
                            cell.memory_usage, cell.memory_mb,
                            ', pages ' + pages if pages else ''))
        for host in sorted(self.devices):
            held = ['%s %s (cell %s)' % (dev.address, dev.server, dev.cell)
                    for _, dev in sorted(self.devices[host].items())
                    if dev.held]
            lines.append('devices %s: %s' % (host, ', '.join(
                '%d %s' % (n, status) for status, n in sorted(
                    device_counts(self, host).items())) or 'none'))
            if held:
                lines.append('  held: %s' % '; '.join(held))
        return '\n'.join(lines)

    __str__ = render


def format_resources(resources):
    if not resources:
        return '-'
    return ' '.join('%s=%s' % (rc, resources[rc]) for rc in sorted(resources))


def format_cpus(cpus):
    """CPU IDs as ranges: 0-3,8,10-11."""
    cpus = sorted(cpus)
    spans = []
    for cpu in cpus:
        if spans and cpu == spans[-1][1] + 1:
            spans[-1][1] = cpu
        else:
            spans.append([cpu, cpu])
    return ','.join('%d' % a if a == b else '%d-%d' % (a, b)
                    for a, b in spans)


def format_table(rows):
    widths = [max(len(str(row[i])) for row in rows)
              for i in range(len(rows[0]))]
    return ['  '.join(str(cell).ljust(width)
                      for cell, width in zip(row, widths)).rstrip()
            for row in rows]


# -- reading accounting out of a snapshot ------------------------------------

def root(snap, provider):
    """The root provider of ``provider``'s tree (itself if unknown)."""
    rp = snap.providers.get(provider)
    return rp.root if rp is not None else provider


def host_roots(snap):
    """Host name -> the compute node root providers on it."""
    roots = {}
    for node, tracker in snap.trackers.items():
        if node in snap.providers:
            roots.setdefault(tracker.host, set()).add(root(snap, node))
    return roots


def held_in(snap, consumer, roots):
    """What ``consumer`` holds in the trees of ``roots``, summed."""
    total = {}
    for provider, resources in snap.allocations_of(consumer).items():
        if root(snap, provider) in roots:
            for rc, amount in resources.items():
                total[rc] = total.get(rc, 0) + amount
    return total


def device_counts(snap, host):
    """Status -> number of ``host``'s PCI devices in it."""
    counts = {}
    for dev in snap.devices.get(host, {}).values():
        counts[dev.status] = counts.get(dev.status, 0) + 1
    return counts


def devices_of(snap, server):
    """The devices ``server`` holds, on every host."""
    return [dev for by_address in snap.devices.values()
            for dev in by_address.values()
            if dev.held and dev.server == server]


def device_providers(snap, host):
    """Names of the PCI device providers in ``host``'s tree.

    Nova names them ``<compute node>_<PCI address in upper case>``
    (``nova.compute.pci_placement_translator``).
    """
    return sorted(name for name, rp in snap.providers.items()
                  if rp.root == host and is_device_provider(rp))


def is_device_provider(rp):
    """Whether ``rp`` is a PCI device provider Nova made."""
    return (rp.parent is not None and rp.name.startswith(rp.root + '_')
            and _PCI_ADDRESS.match(rp.name[len(rp.root) + 1:]) is not None)


def is_gpu_provider(rp):
    """Whether ``rp`` is a GPU's provider of VGPU (mediated devices).

    Nova names it ``<compute node>_<libvirt name of the GPU>``
    (``pci_0000_af_00_0``).
    """
    return (rp.parent is not None and rp.name.startswith(rp.root + '_')
            and _GPU_NAME.match(rp.name[len(rp.root) + 1:]) is not None)


_PCI_ADDRESS = re.compile(r'^[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]$')
_GPU_NAME = re.compile(r'^pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}_[0-7]$')


# Migration statuses after which a move holds nothing any more.
FINAL_STATUSES = frozenset(('confirmed', 'reverted', 'completed', 'error',
                            'failed', 'cancelled', 'done'))


def migrations_of(snap, server):
    """The migrations of ``server`` in the snapshot."""
    return [m for m in snap.migrations.values() if m.server == server]


# -- compute node records, instances and domains (raw -> records) -----------

def node_records(raw_nodes):
    """Node name -> its ``NodeRecord``, from records in creation order.

    A node's live record where it has one, else its latest deleted one
    (a node deleted and made again keeps the newest).
    """
    nodes = {}
    for raw in raw_nodes:
        record = NodeRecord(
            host=raw['host'], node=raw['node'], uuid=raw['uuid'],
            deleted=bool(raw['deleted']), vcpus=raw['vcpus'],
            vcpus_used=raw['vcpus_used'], memory_mb=raw['memory_mb'],
            memory_mb_used=raw['memory_mb_used'], local_gb=raw['local_gb'],
            local_gb_used=raw['local_gb_used'],
            stats=dict(raw.get('stats') or {}),
            running_vms=raw.get('running_vms') or 0,
            current_workload=raw.get('current_workload') or 0)
        known = nodes.get(record.node)
        if known is None or known.deleted or not record.deleted:
            nodes[record.node] = record
    return nodes


def instance_record(raw):
    """An ``Instance`` from its raw record (see ``SnapshotReader``)."""
    return Instance(
        uuid=raw['uuid'], host=raw['host'], node=raw['node'],
        vm_state=raw['vm_state'], task_state=raw['task_state'],
        os_type=raw['os_type'], project_id=raw['project_id'],
        cells=tuple(GuestCell(
            id=cell['id'], cpus=tuple(cell['cpus']),
            pinning={int(vcpu): pcpu
                     for vcpu, pcpu in cell['pinning'].items()},
            reserved=tuple(cell['reserved']), memory_mb=cell['memory_mb'],
            pagesize=cell['pagesize']) for cell in raw['cells']),
        emulator_threads_policy=raw.get('emulator_threads_policy'))


def parse_cpuset(text):
    """Libvirt's cpuset syntax (``0-3,^2,8``) as a sorted tuple of ints."""
    if text is None or not text.strip():
        return ()
    cpus, excluded = set(), set()
    for part in text.split(','):
        part = part.strip()
        target = excluded if part.startswith('^') else cpus
        part = part.lstrip('^')
        if '-' in part:
            first, last = part.split('-', 1)
            target.update(range(int(first), int(last) + 1))
        else:
            target.add(int(part))
    return tuple(sorted(cpus - excluded))


# libvirt's memory units -> KiB
_UNITS_KIB = {'b': 1 / 1024, 'bytes': 1 / 1024, 'k': 1, 'kib': 1, 'kb': 1,
              'm': 1024, 'mib': 1024, 'mb': 1024, 'g': 1024 ** 2,
              'gib': 1024 ** 2, 'gb': 1024 ** 2}


def _pci_address(element):
    """``dddd:bb:ss.f`` from libvirt's ``<address domain= bus= ...>``."""
    if element is None or element.get('bus') is None:
        return None
    return '%04x:%02x:%02x.%x' % tuple(
        int(element.get(key, '0'), 16)
        for key in ('domain', 'bus', 'slot', 'function'))


def parse_domain(host, text):
    """A ``Domain`` from a libvirt domain XML document.

    What whitebox-tempest-plugin reads of a guest on a real host: vCPU
    and emulator/IO thread pinning, NUMA memory placement, huge page
    backing, host devices.
    """
    tree = etree.fromstring(text)
    vcpu = tree.find('./vcpu')
    tune = tree.find('./cputune')
    vcpupin, emulatorpin, iothreadpin = {}, (), ()
    if tune is not None:
        vcpupin = {int(pin.get('vcpu')): parse_cpuset(pin.get('cpuset'))
                   for pin in tune.findall('./vcpupin')}
        emulator = tune.find('./emulatorpin')
        if emulator is not None:
            emulatorpin = parse_cpuset(emulator.get('cpuset'))
        iothread = tune.find('./iothreadpin')
        if iothread is not None:
            iothreadpin = parse_cpuset(iothread.get('cpuset'))
    memnodes = {int(node.get('cellid')): parse_cpuset(node.get('nodeset'))
                for node in tree.findall('./numatune/memnode')}
    hugepages = {}
    for page in tree.findall('./memoryBacking/hugepages/page'):
        size_kb = int(int(page.get('size')) * _UNITS_KIB[
            page.get('unit', 'KiB').lower()])
        hugepages[size_kb] = parse_cpuset(page.get('nodeset'))
    hostdevs, mdevs = [], []
    for dev in tree.findall('./devices/hostdev'):
        if dev.get('type') == 'mdev':
            mdevs.append(dev.find('./source/address').get('uuid'))
        elif dev.get('type') == 'pci':
            hostdevs.append(_pci_address(dev.find('./source/address')))
    for nic in tree.findall("./devices/interface[@type='hostdev']"):
        hostdevs.append(_pci_address(nic.find('./source/address')))
    return Domain(
        host=host, uuid=tree.findtext('./uuid'),
        vcpus=int(vcpu.text) if vcpu is not None else 0,
        vcpupin=vcpupin, emulatorpin=emulatorpin, iothreadpin=iothreadpin,
        memnodes=memnodes, hugepages=hugepages,
        hostdevs=tuple(sorted(a for a in hostdevs if a)),
        mdevs=tuple(sorted(mdevs)))


def guest_domain(snap, server):
    """The ``Domain`` of ``server`` on its current host, or None."""
    instance = snap.instances.get(server)
    if instance is None or instance.host is None:
        return None
    return snap.domains.get(instance.host, {}).get(server)


def count_guests(instances, node):
    """``nova.compute.stats.Stats`` recounted for ``node`` from records.

    As ``ResourceTracker._update_usage_from_instances`` counts at the
    periodic: every instance whose ``node`` (and host) is the node's,
    except those whose resources may go (``vm_states.
    allow_resource_removal``: deleted, shelved-offloaded unless
    spawning). Keys as Nova stores them; ``io_workload`` as
    ``Stats.io_workload`` derives it; zero counts left out, as
    ``counted_stats`` leaves them out of what Nova saved.
    """
    stats = {}
    counted = 0
    for inst in instances:
        if inst.host != node.host or inst.node != node.node:
            continue
        if inst.vm_state == 'deleted' or (
                inst.vm_state == 'shelved_offloaded'
                and inst.task_state != 'spawning'):
            continue
        counted += 1
        for key in ('num_vm_%s' % inst.vm_state,
                    'num_task_%s' % inst.task_state,
                    'num_os_type_%s' % inst.os_type,
                    'num_proj_%s' % inst.project_id):
            stats[key] = stats.get(key, 0) + 1
    if counted:
        stats['num_instances'] = counted
    workload = io_workload(stats)
    if workload:
        stats['io_workload'] = workload
    return stats


# nova.compute.stats.Stats.io_workload: the states it counts
IO_WORKLOAD_KEYS = ('num_vm_building', 'num_task_resize_migrating',
                    'num_task_rebuilding', 'num_task_resize_prep',
                    'num_task_image_snapshot', 'num_task_image_backup',
                    'num_task_rescuing', 'num_task_unshelving')


def io_workload(stats):
    return sum(stats.get(key, 0) for key in IO_WORKLOAD_KEYS)


def counted_stats(stats):
    """The guest counts of a node's ``stats`` as ints, zeros left out.

    Nova stores ``stats`` as strings (``DictOfNullableStringsField``) and
    leaves a count at 0 where it decremented it: 0 and absent mean the
    same. Other keys (``failed_builds``, what a driver reports) are not
    counts of guests.
    """
    counts = {}
    for key, value in stats.items():
        if (key.startswith('num_') or key == 'io_workload') and \
                value not in (None, '', 'None') and int(value):
            counts[key] = int(value)
    return counts
