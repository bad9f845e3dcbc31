"""What Nova's cell database and each hypervisor hold of nodes and guests.

Plain records a ``Snapshot`` carries (``nodes``, ``hypervisors``,
``instances``, ``domains``), built from the raw records
``SnapshotReader`` reads, and what checks derive from them: a node's
stats recounted from its guests, a guest's domain on its host. Nothing
here imports Nova.
"""

import dataclasses
import typing
from xml.etree import ElementTree as etree


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
    # Its PCI device pools (``pci_device_pools``, what the scheduler's
    # PciPassthroughFilter reads): {vendor_id, product_id, numa_node,
    # count, tags} each.
    pci_pools: tuple = ()
    # How many records of this node the table holds, deleted ones
    # included: one while Nova brings a deleted record back (undeletes
    # it, the same row: id and UUID) rather than make another.
    records: int = 1
    # Whether ``nova-manage cell_v2 discover_hosts`` saw it (its host
    # mapped to the cell): the record's ``mapped`` flag.
    mapped: bool = False


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
    # PCI addresses (lower case) of the VFs behind its vDPA interfaces
    # (<interface type='vdpa'>, by the host's vhost-vdpa device).
    vdpa: tuple = ()


def fill(snap, raw, server_names):
    """Set ``snap``'s nodes, hypervisors, instances and domains from raw."""
    snap.nodes = node_records(raw.get('node_records', ()))
    snap.hypervisors = {
        hyp['hypervisor_hostname']: Hypervisor(
            name=hyp['hypervisor_hostname'], uuid=hyp['id'],
            state=hyp['state'], status=hyp['status'])
        for hyp in raw.get('hypervisors', ())}
    snap.instances = {server_names.get(inst['uuid'], inst['uuid']):
                      instance_record(inst)
                      for inst in raw.get('instances', ())}
    snap.domains = {}
    vdpa = {}
    for dom in raw.get('domains', ()):
        # An entry without a UUID marks a host with a hypervisor (and
        # lists its vDPA devices); it comes before the host's domains.
        on_host = snap.domains.setdefault(dom['host'], {})
        if dom.get('uuid') is None:
            vdpa[dom['host']] = dom.get('vdpa') or {}
        else:
            on_host[server_names.get(dom['uuid'], dom['uuid'])] = (
                parse_domain(dom['host'], dom['xml'],
                             vdpa.get(dom['host'])))


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
            current_workload=raw.get('current_workload') or 0,
            pci_pools=tuple(dict(pool) for pool in raw.get('pci_pools', ())),
            mapped=bool(raw.get('mapped')))
        known = nodes.get(record.node)
        if known is not None:
            record.records = known.records + 1
        if known is None or known.deleted or not record.deleted:
            nodes[record.node] = record
        else:
            known.records = record.records
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


def parse_domain(host, text, vdpa=None):
    """A ``Domain`` from a libvirt domain XML document.

    What whitebox-tempest-plugin reads of a guest on a real host: vCPU
    and emulator/IO thread pinning, NUMA memory placement, huge page
    backing, host devices. ``vdpa`` maps the host's vhost-vdpa devices to
    their VFs' addresses (a vDPA interface names only its device).
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
        # One <page> per guest cell: cells of one size together.
        cells = set(parse_cpuset(page.get('nodeset')))
        hugepages[size_kb] = tuple(sorted(
            cells | set(hugepages.get(size_kb, ()))))
    hostdevs, mdevs = [], []
    for dev in tree.findall('./devices/hostdev'):
        if dev.get('type') == 'mdev':
            mdevs.append(dev.find('./source/address').get('uuid'))
        elif dev.get('type') == 'pci':
            hostdevs.append(_pci_address(dev.find('./source/address')))
    for nic in tree.findall("./devices/interface[@type='hostdev']"):
        hostdevs.append(_pci_address(nic.find('./source/address')))
    vdpa_vfs = []
    for nic in tree.findall("./devices/interface[@type='vdpa']"):
        path = nic.find('./source').get('dev')
        # A device the host does not list is shown by its path.
        vdpa_vfs.append((vdpa or {}).get(path, path))
    return Domain(
        host=host, uuid=tree.findtext('./uuid'),
        vcpus=int(vcpu.text) if vcpu is not None else 0,
        vcpupin=vcpupin, emulatorpin=emulatorpin, iothreadpin=iothreadpin,
        memnodes=memnodes, hugepages=hugepages,
        hostdevs=tuple(sorted(a for a in hostdevs if a)),
        mdevs=tuple(sorted(mdevs)), vdpa=tuple(sorted(vdpa_vfs)))


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
