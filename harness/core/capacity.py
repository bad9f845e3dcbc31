"""What Placement says still fits on a host, as requests Nova must take.

The capacity probe (``harness.core.checks.invariant.capacity_probe``)
asks each host's resource tracker, through Nova's own NUMA fitting,
whether it takes the requests this module derives from a snapshot. The
rules here decide which requests Placement allows and which refusals
would be Nova's correct ones, so that a refusal of a request from
``requests_for`` is never legitimate. Nothing here imports Nova.

Placement knows how much of each resource class a host has free, not in
which NUMA cell, nor which CPUs or pages its consumers hold. A request
derived from Placement alone could be refused for good reasons: a guest
with a NUMA topology must fit in one cell (``numa_fit_instance_to_host``),
the dedicated CPUs of a cell are its part of ``cpu_dedicated_set`` only,
huge pages are not in Placement at all, the host's reserved pages are
nobody's. So each rule takes the worst case Placement leaves open: every
unit Placement counts used on the host may sit in the very cell the
request goes to. What is left there is guaranteed free in a tracker that
agrees with Placement, whichever way the guests Placement counts are
spread over the cells. The rules, per resource (``cell`` a NUMA cell of
the tracker's host topology, whose shape is the host's configuration,
not its usage):

- **dedicated CPUs** (``hw:cpu_policy: dedicated``, one NUMA node, Nova's
  default for a pinned guest): ``k = min(PCPU free, |pcpus(cell)| -
  min(PCPU used, |pcpus(cell)|))`` in the cell where ``k`` is largest,
  with 1 MiB of memory (small pages: a pinned guest may not overcommit
  them, so that cell must have 1 MiB of small pages left after all the
  memory Placement counts used there, less the host's reserved pages).
- **shared vCPUs and memory** (a guest with one NUMA node, so that the
  cell limits apply: a guest with no NUMA topology is never refused by a
  tracker, Placement alone decides for it since Nova dropped the
  scheduler's RAM and core filters): ``n = min(VCPU free, |cpus(cell)|,
  floor(|cpus(cell)| * VCPU ratio) - VCPU used)`` vCPUs and ``m =
  min(MEMORY_MB free, small pages of the cell, floor(memory(cell) *
  MEMORY_MB ratio) - MEMORY_MB used)`` MiB: ``numa_fit_instance_to_host``
  with the scheduler's limits (``NUMATopologyFilter``: the node's CPU and
  RAM allocation ratios) checks ``cpu_usage + n`` and ``memory_usage +
  m`` against those bounds, and a guest may not overcommit a cell against
  itself.
- **huge pages** (``hw:mem_page_size: <size>``, one shared vCPU): Placement
  does not count pages; a guest Placement counts ``MEMORY_MB used`` for
  holds at most that much memory in pages, so ``pages = total - reserved -
  min(total - reserved, floor(MEMORY_MB used * 1024 / size))`` are free
  in the cell whatever the guests are; the request is that many pages (at
  most ``MEMORY_MB free`` and the cell's memory limit), in whole pages.

And one request Placement refuses (**phantom capacity**): where the
tracker shows a cell with more free dedicated CPUs than Placement has
PCPU free on the host, ``PCPU free + 1`` dedicated CPUs in that cell.
The tracker taking it means it counts CPUs free that Placement counts
used (``tracker_agrees`` reports the count; the probe reports the
request the tracker would let through).

**PCI devices** (``device_requests``), with ``[pci]
report_in_placement``: Nova makes each device Placement tracks, or the
VFs of one PF, a provider ``<node>_<address>`` of one resource class
(``nova.compute.pci_placement_translator``) and the compute's PCI stats
one pool per provider, tagged with its UUID
(``PciDeviceStats.populate_pools_metadata_from_assigned_devices``). For
each provider with a unit free (``total - reserved - used >= 1``), the
request is one device from that provider, as the flavor alias naming
the device's vendor, product and ``device_type`` produces it
(``nova.pci.request``; an alias may name a ``resource_class`` and
``traits`` instead, which the pools ignore: Placement matched them),
after the scheduler picked that provider: ``rp_uuids`` in its spec, the
form ``update_pci_request_with_placement_allocations`` gives the
compute's claim (``Claim._test_pci``: ``PciDeviceStats.support_requests``
with no provider mapping). The guest has no NUMA topology, so no PCI
NUMA affinity policy ties the device to a cell
(``_filter_pools_for_numa_cells`` keeps every pool without
``numa_cells``): a full cell is never Nova's reason to refuse it. What
else a host may refuse and why none applies here:

- a PF while one of its VFs is used, a VF while its PF is (the tracker
  makes them ``unavailable`` / ``unclaimable``): Placement never holds a
  PF and its VFs both (the translator refuses a device_spec that puts
  both in it), so a free unit of a provider is never blocked by another
  provider's device;
- a PF asked for without ``dev_type: type-PF``, a vDPA device without
  ``dev_type: vdpa`` (``_filter_pools_for_unrequested_pfs`` and
  ``_vdpa_devices``): the request names the device's own type;
- a device with a ``physical_network`` (Neutron's, asked for by a port
  of the spec's ``vnic_type`` only, ``remote_managed`` ones included):
  the translator leaves those out of Placement (``_add_dev``), so there
  is no provider to probe; a ``live_migratable`` tag filters only a
  request that names it, this one does not;
- a ``one_time_use`` device once used: Nova reserves its whole provider,
  so Placement shows no unit free.

And one request Placement refuses (**phantom capacity**): one device
from each provider with no unit free; the compute's PCI stats taking it
means a pool counts a device free that Placement counts used.

Two views of a host answer each device request, each as Nova asks it:
the compute's claim (its PCI tracker's live stats, as above), and the
scheduler's ``PciPassthroughFilter`` (the pools the compute node record
saved, ``HostState.pci_stats``, with the allocation candidate's mapping
of the request's group to the provider).

Not probed: CPU thread policies (``require``, ``isolate``: they depend
on which siblings are free, which Placement cannot say), guests of
several NUMA nodes, emulator threads, devices with a NUMA affinity
policy (whether the device's cell has room for the guest is the CPU
rules' question, asked of that cell alone), devices without
``report_in_placement`` (Placement has no view of them), mediated
devices (VGPU: Nova tracks them in the hypervisor, not in a tracker it
can be asked), and hosts without NUMA topology for the CPU and memory
rules (the fake driver: its tracker refuses nothing).
"""

import dataclasses
import math
import typing

from harness.core import snapshot as snapshot_mod

SMALL_PAGE_KB = 4


@dataclasses.dataclass(frozen=True)
class Request(object):
    """A flavor to ask a host's tracker about, and why it must fit.

    :param kind: ``dedicated``, ``shared``, ``hugepages`` or
        ``phantom_capacity`` (one Placement refuses).
    :param cell: the host cell the rule found room in.
    :param placement_allows: whether Placement has room for it (False
        only for ``phantom_capacity``).
    :param placement: Placement's view that the rule read, as text.
    """
    kind: str
    vcpus: int
    memory_mb: int
    extra_specs: typing.Tuple[typing.Tuple[str, str], ...]
    cell: int
    placement_allows: bool = True
    placement: str = ''

    @property
    def specs(self):
        return dict(self.extra_specs)

    def describe(self):
        specs = self.specs
        if specs.get('hw:cpu_policy') == 'dedicated':
            what = '%d dedicated CPU%s' % (self.vcpus,
                                           '' if self.vcpus == 1 else 's')
        else:
            what = '%d shared vCPU%s' % (self.vcpus,
                                         '' if self.vcpus == 1 else 's')
        what += ', %d MiB' % self.memory_mb
        if 'hw:mem_page_size' in specs:
            what += ' in %s KiB pages' % specs['hw:mem_page_size']
        return what + ', one NUMA node'


@dataclasses.dataclass(frozen=True)
class DeviceRequest(object):
    """One PCI device from one device provider, and why it must fit.

    :param kind: ``device`` or ``device_phantom_capacity`` (one
        Placement refuses: the provider is full).
    :param provider: the device provider's name (``<node>_<address>``).
    :param rp_uuid: its UUID, which the request's spec carries.
    :param dev_type: Nova's type of the provider's devices (``type-PCI``,
        ``type-PF``, ``type-VF``, ``vdpa``), as an alias's
        ``device_type`` names it.
    :param placement: Placement's view that the rule read, as text.
    :param tracker: the PCI tracker's last saved view of the provider's
        devices, as text.
    """
    kind: str
    provider: str
    rp_uuid: str
    resource_class: str
    vendor_id: str
    product_id: str
    dev_type: str
    placement_allows: bool = True
    placement: str = ''
    tracker: str = ''

    def describe(self):
        return ('one %s device (%s:%s, %s) of provider %s, no NUMA topology'
                % (self.resource_class, self.vendor_id, self.product_id,
                   self.dev_type, self.provider))


@dataclasses.dataclass(frozen=True)
class Free(object):
    """One resource class as Placement counts it on one provider."""
    total: int
    reserved: int
    ratio: float
    used: int
    max_unit: int

    @property
    def capacity(self):
        return int((self.total - self.reserved) * self.ratio)

    @property
    def free(self):
        """The most one request may take (Placement's capacity check)."""
        return max(0, min(self.capacity - self.used, self.max_unit))


def placement_free(provider):
    """Resource class -> ``Free`` of a snapshot's ``Provider``."""
    found = {}
    for rc, inv in provider.inventories.items():
        found[rc] = Free(
            total=inv['total'], reserved=inv.get('reserved', 0),
            ratio=float(inv.get('allocation_ratio', 1.0)),
            used=provider.usages.get(rc, 0),
            max_unit=inv.get('max_unit', inv['total']))
    return found


def _small_pages_mb(cell, use_free_of=0):
    """MiB of small pages in ``cell`` less reserved and ``use_free_of``.

    Without page pools the cell's memory stands for them.
    """
    pages = cell.pages.get(SMALL_PAGE_KB)
    if pages is None:
        return cell.memory_mb - use_free_of
    total = (pages['total'] - pages.get('reserved', 0)) * SMALL_PAGE_KB
    return total // 1024 - use_free_of


def _free_text(name, free):
    return '%s free %d (total %d, reserved %d, used %d%s)' % (
        name, free.free, free.total, free.reserved, free.used,
        '' if free.ratio == 1.0 else ', ratio %g' % free.ratio)


def dedicated(cells, free):
    """The largest one-node pinned guest Placement guarantees a cell for."""
    pcpu = free.get('PCPU')
    memory = free.get('MEMORY_MB')
    if pcpu is None or memory is None or memory.free < 1:
        return None
    best = None
    for cell in cells:
        room = len(cell.pcpus) - min(pcpu.used, len(cell.pcpus))
        k = min(room, pcpu.free)
        if k < 1 or _small_pages_mb(cell, memory.used) < 1:
            continue
        if best is None or k > best[0]:
            best = (k, cell.id)
    if best is None:
        return None
    return Request('dedicated', best[0], 1,
                   (('hw:cpu_policy', 'dedicated'),), best[1],
                   placement=_free_text('PCPU', pcpu))


def _shared_room(cell, vcpu, memory):
    """(vCPUs, MiB) a one-node shared guest is guaranteed in ``cell``."""
    n = min(vcpu.free, len(cell.cpus),
            math.floor(len(cell.cpus) * vcpu.ratio) - vcpu.used)
    m = min(memory.free,
            math.floor(cell.memory_mb * memory.ratio) - memory.used)
    return n, m


def shared(cells, free):
    """The largest one-node shared guest Placement guarantees a cell for."""
    vcpu = free.get('VCPU')
    memory = free.get('MEMORY_MB')
    if vcpu is None or memory is None:
        return None
    best = None
    for cell in cells:
        n, m = _shared_room(cell, vcpu, memory)
        # A guest may not overcommit the cell's small pages against itself.
        m = min(m, _small_pages_mb(cell))
        if n < 1 or m < 1:
            continue
        if best is None or (n, m) > best[:2]:
            best = (n, m, cell.id)
    if best is None:
        return None
    return Request('shared', best[0], best[1],
                   (('hw:numa_nodes', '1'),), best[2],
                   placement='%s; %s' % (_free_text('VCPU', vcpu),
                                         _free_text('MEMORY_MB', memory)))


def hugepages(cells, free):
    """Per page size, the largest guest of pages a cell is guaranteed."""
    vcpu = free.get('VCPU')
    memory = free.get('MEMORY_MB')
    if vcpu is None or memory is None:
        return []
    best = {}
    for cell in cells:
        n, limit = _shared_room(cell, vcpu, memory)
        if n < 1:
            continue
        for size, pages in cell.pages.items():
            if size <= SMALL_PAGE_KB:
                continue
            usable = pages['total'] - pages.get('reserved', 0)
            taken = min(usable, (memory.used * 1024) // size)
            count = min(usable - taken, (limit * 1024) // size)
            count = min(count, (memory.free * 1024) // size)
            if count < 1:
                continue
            if size not in best or count > best[size][0]:
                best[size] = (count, cell.id)
    return [Request('hugepages', 1, count * size // 1024,
                    (('hw:mem_page_size', str(size)),), cell,
                    placement='%s; huge pages are not in Placement' %
                    _free_text('MEMORY_MB', memory))
            for size, (count, cell) in sorted(best.items())]


def phantom_capacity(cells, free):
    """``PCPU free + 1`` pinned CPUs where the tracker shows them free."""
    pcpu = free.get('PCPU')
    memory = free.get('MEMORY_MB')
    if pcpu is None or memory is None or memory.free < 1:
        return None
    want = min(pcpu.capacity - pcpu.used, pcpu.max_unit) + 1
    for cell in sorted(cells, key=lambda c: (-_tracker_free(c), c.id)):
        if _tracker_free(cell) >= want:
            return Request('phantom_capacity', want, 1,
                           (('hw:cpu_policy', 'dedicated'),), cell.id,
                           placement_allows=False,
                           placement=_free_text('PCPU', pcpu))
    return None


def _tracker_free(cell):
    return len(set(cell.pcpus) - set(cell.pinned_cpus))


def requests_for(tracker, provider):
    """The requests to ask ``tracker`` (a snapshot's ``Tracker``) about.

    ``provider``: its compute node's provider in the snapshot. None for a
    tracker without NUMA cells: it refuses nothing Placement allows.
    """
    if not tracker.cells or provider is None:
        return []
    free = placement_free(provider)
    found = [dedicated(tracker.cells, free), shared(tracker.cells, free)]
    found += hugepages(tracker.cells, free)
    found.append(phantom_capacity(tracker.cells, free))
    return [request for request in found if request is not None]


def provider_devices(snap, host, provider):
    """The devices of ``host`` that device ``provider`` stands for.

    The device whose address it is named after (a PF, a ``type-PCI``
    device), or else that address's VFs (``parent``), as Nova's
    translator groups them (``_get_rp_name_for_address``). Sorted by
    address.
    """
    address = provider.name[len(provider.root) + 1:].lower()
    devices = snap.devices.get(host, {})
    own = [dev for dev in devices.values() if dev.address.lower() == address]
    if not own:
        own = [dev for dev in devices.values()
               if (dev.parent or '').lower() == address]
    return sorted(own, key=lambda dev: dev.address)


def device_requests(snap, tracker):
    """One device from each device provider of ``tracker``'s node.

    ``device`` where Placement has a unit free, ``device_phantom_capacity``
    where it has none; see the module's docstring. A provider whose
    devices the PCI tracker has not saved (or not one resource class) is
    left out: there is no device to name.
    """
    found = []
    for name in sorted(snap.providers):
        rp = snap.providers[name]
        if rp.root != tracker.node or not snapshot_mod.is_device_provider(rp):
            continue
        if len(rp.inventories) != 1:
            continue
        [rc] = rp.inventories
        free = placement_free(rp)[rc]
        devices = provider_devices(snap, tracker.host, rp)
        if not devices:
            continue
        first = devices[0]
        allows = free.free >= 1
        found.append(DeviceRequest(
            'device' if allows else 'device_phantom_capacity', rp.name,
            rp.uuid, rc, first.vendor, first.product, first.type,
            placement_allows=allows, placement=_free_text(rc, free),
            tracker=_devices_text(devices)))
    return found


def _devices_text(devices):
    return ', '.join('%s %s%s' % (dev.address, dev.status,
                                  ' (%s)' % dev.server if dev.server else '')
                     for dev in devices)


def tracker_text(tracker):
    """The tracker's view of its cells, for a problem's text."""
    parts = []
    for cell in tracker.cells:
        pinned = sorted(cell.pinned_cpus)
        pages = ', '.join('%dK %d/%d used' % (size, page['used'],
                                              page['total'])
                          for size, page in sorted(cell.pages.items())
                          if size > SMALL_PAGE_KB)
        parts.append('cell %d: CPU%s %s pinned of %s, shared use %d, '
                     'memory %d/%d MiB used%s' % (
                         cell.id, '' if len(pinned) == 1 else 's',
                         ','.join(map(str, pinned)) or 'none',
                         _span(cell.pcpus), cell.cpu_usage,
                         cell.memory_usage, cell.memory_mb,
                         ', pages ' + pages if pages else ''))
    return '; '.join(parts)


def _span(cpus):
    return ','.join(map(str, sorted(cpus))) or 'none'
