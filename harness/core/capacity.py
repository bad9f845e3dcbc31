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

Not probed: CPU thread policies (``require``, ``isolate``: they depend
on which siblings are free, which Placement cannot say), guests of
several NUMA nodes, emulator threads, devices, and hosts without NUMA
topology (the fake driver: its tracker refuses nothing).
"""

import dataclasses
import math
import typing

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
