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
- ``faults`` and ``actions``: why Nova failed an operation, per server:
  its latest instance fault and its instance actions with their events,
  as the API shows them to an admin (``failure_reasons``);
- ``logs``: Nova's log records of the step the snapshot ends, when the
  run captured them (``LogRecord``; ``None`` when it did not);
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

from harness.core import records

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


def provider_traits(get, providers):
    """Provider UUID -> its traits (sorted), from Placement's API.

    :param providers: the ``resource_providers`` of ``placement_records``
    """
    traits = {}
    for rp in providers:
        names = get('/resource_providers/%s/traits' % rp['uuid'])['traits']
        if names:
            traits[rp['uuid']] = sorted(names)
    return traits


def nova_records(get):
    """Raw server and migration records from Nova's API, via ``get``."""
    return {
        'servers': [{key: srv.get(key) for key in SERVER_KEYS}
                    for srv in get(SERVERS_URL)['servers']],
        'migrations': [{key: mig.get(key) for key in MIGRATION_KEYS}
                       for mig in get(MIGRATIONS_URL)['migrations']],
    }


#: Server statuses the API shows a fault in (``views.servers``).
FAULT_STATUSES = ('ERROR', 'DELETED')


def failure_records(get, server_ids):
    """Faults and instance actions as Nova's API shows them to an admin.

    What ``SnapshotReader.read_failure_records`` reads from the
    databases, through ``get(url) -> response body`` (at microversion
    2.84 or later, for the events' details), for the servers
    ``server_ids``. The API shows a fault only while the server is in
    ERROR: the database read gives every server's latest one.
    """
    faults, actions = [], []
    for uuid in server_ids:
        server = get('/servers/%s' % uuid)['server']
        fault = server.get('fault')
        if fault is not None and server['status'] in FAULT_STATUSES:
            faults.append({'instance_uuid': uuid, 'code': fault['code'],
                           'message': fault['message'], 'host': None,
                           'exception': exception_class(
                               fault.get('details'))})
        listed = get('/servers/%s/os-instance-actions' % uuid)[
            'instanceActions']
        # The API lists the newest first; the snapshot, oldest first.
        for action in reversed(listed):
            shown = get('/servers/%s/os-instance-actions/%s' % (
                uuid, action['request_id']))['instanceAction']
            actions.append({
                'instance_uuid': uuid, 'action': shown['action'],
                'message': shown['message'],
                'events': [{key: event.get(key) for key in
                            ('event', 'result', 'details', 'host')}
                           for event in reversed(shown.get('events', []))]})
    return faults, actions


@dataclasses.dataclass
class Provider(object):
    name: str
    uuid: str
    generation: int
    parent: typing.Optional[str]
    root: str
    inventories: dict
    usages: dict
    # Its traits, sorted: what the scheduler filters on, not accounting
    # (a snapshot's equality leaves them out).
    traits: tuple = dataclasses.field(default=(), compare=False)


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


@dataclasses.dataclass(frozen=True)
class Fault(object):
    """A server's latest instance fault (the API's ``server.fault``).

    ``exception``: the exception's class, module included, as the last
    line of the fault's traceback names it (Nova keeps the traceback of a
    fault with code 500 only: ``compute.utils._get_fault_details``); None
    without one.
    """
    message: str
    code: int
    exception: typing.Optional[str] = None
    host: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class ActionEvent(object):
    """One event of an instance action (``os-instance-actions``, 2.84).

    ``details``: for an event that failed, the exception's message, or
    its class name for an exception that is not Nova's
    (``compute.utils.exception_to_dict``). The event's traceback holds
    frames only (``objects.base.serialize_args``), no exception class.
    """
    event: str
    result: typing.Optional[str]
    details: typing.Optional[str] = None
    host: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Action(object):
    """One instance action (``create``, ``resize``...) and its events."""
    action: str
    events: tuple = ()
    message: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class LogRecord(object):
    """One of Nova's log records, by the service that logged it."""
    service: str
    level: int
    logger: str
    message: str


# The last line of a formatted traceback: ``module.Class: message``.
_EXCEPTION_LINE = re.compile(r'^([A-Za-z_][\w.]*)(?::|$)')


def exception_class(traceback_text):
    """The exception class a formatted traceback ends with, or None."""
    for line in reversed((traceback_text or '').splitlines()):
        if line.strip():
            if line[:1].isspace():
                return None
            match = _EXCEPTION_LINE.match(line)
            return match.group(1) if match else None
    return None


def failure_reasons(raw, server_names):
    """``(faults, actions)`` by server name, from raw records.

    ``raw['faults']``: each server's latest fault; ``raw['actions']``:
    its actions, oldest first, each with its events, oldest first (see
    ``SnapshotReader.read_failure_records``). A server nobody named
    keeps its UUID.
    """
    faults = {
        server_names.get(f['instance_uuid'], f['instance_uuid']): Fault(
            message=f['message'], code=f['code'],
            exception=f.get('exception'), host=f.get('host'))
        for f in raw.get('faults', ())}
    actions = {}
    for a in raw.get('actions', ()):
        server = server_names.get(a['instance_uuid'], a['instance_uuid'])
        actions.setdefault(server, []).append(Action(
            action=a['action'], message=a.get('message'),
            events=tuple(ActionEvent(
                event=e['event'], result=e.get('result'),
                details=e.get('details'), host=e.get('host'))
                for e in a.get('events', ()))))
    return faults, {server: tuple(done) for server, done in actions.items()}


class Snapshot(object):
    """The accounting at one moment; equal when the accounting is equal.

    Equality compares allocations, inventories, usages and tracker usage;
    it ignores UUIDs, provider generations and server statuses, which
    change without the accounting changing.
    """

    # Why operations failed (``failure_reasons``), and the step's log
    # records (``None``: not captured); set after building.
    faults = {}
    actions = {}
    logs = None

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
                        raw['usages'].get(uuid, {}).items() if n},
                traits=tuple(raw.get('provider_traits', {}).get(uuid, ())))

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
        snap.faults, snap.actions = failure_reasons(raw, server_names)
        records.fill(snap, raw, server_names)
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


def is_pci_address(text):
    """Whether ``text`` is a PCI address (``0000:02:00.0``, any case)."""
    return _PCI_ADDRESS.match(text.upper()) is not None
