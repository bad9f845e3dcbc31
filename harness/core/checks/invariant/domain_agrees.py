"""``domain_agrees``: each guest's domain says what Nova placed it on."""

from harness.core.checks import base
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

#: vm states of a guest whose domain its host's hypervisor keeps.
DEFINED_STATES = frozenset(('active', 'stopped', 'paused', 'suspended',
                            'resized', 'rescued'))


class DomainAgrees(base.Invariant):
    """Each guest's domain on its host says what Nova placed it on.

    For every guest on a host with a libvirt hypervisor (a profiled
    host), in a vm state whose domain the hypervisor keeps and with no
    operation in flight (no task state), the domain that host's
    hypervisor holds (the XML Nova defined there, what
    whitebox-tempest-plugin reads on a real host) agrees with the guest's
    record in the cell database:

    - there is one, where the step placed the guest or changed its
      state (a boot, a move, an unshelve, a start...). A domain the
      hypervisor lost by itself (a host started afresh, its guests gone)
      is Nova's to notice at ``_sync_power_states``, not at once
      (``ComputeManager._init_instance`` leaves the guest active unless
      ``resume_guests_state_on_host_boot``): such a guest is left alone
      until Nova moves or changes it. Not checked either after a
      same-host resize is confirmed: ``LibvirtDriver._cleanup_resize``
      undefines the guest's domain when ``instance.host != CONF.host``,
      and the computes of this process read the global ``CONF.host``
      (Nova's test default ``fake-mini``; ``harness.cloud.perhost`` does
      not give each host its own), so the harness's compute undefines a
      domain a deployment's keeps: a limitation of the harness, to lift
      by making ``[DEFAULT] host`` a per-host option;
    - with a NUMA topology: one vCPU per guest CPU; each vCPU pinned to
      its host CPU (``cpu_pinning``) or, unpinned, to the shared CPUs of
      its host cell as the host's tracker reports them; each guest cell's
      memory on its host cell (``<numatune><memnode>``); the emulator
      threads on the reserved CPUs (``hw:emulator_threads_policy=
      isolate``) or, with no policy, on the union of the vCPUs' CPUs
      (``share`` depends on the host's ``cpu_shared_set`` and is not
      checked); the IO thread where the emulator threads are; guest cells
      with huge pages backed by pages of that size
      (``<memoryBacking>``), and no others;
    - its PCI host devices are the devices the host's PCI tracker has
      allocated to it; a suspended guest's may be fewer
      (``LibvirtDriver.suspend`` detaches its PCI devices and its
      direct-physical ports' before saving its memory, ``resume``
      attaches them again), never others.

    After a live migration the domain checked is the destination's: it
    must carry the destination's pinning, not the source's (LP#1889257,
    LP#1890501). A host whose compute is stopped is left out (its
    hypervisor may have been replaced before the compute comes back).
    """

    name = 'domain_agrees'
    order = 85
    accounting = False
    summary = ("Each guest's domain XML on its host carries its pinning, "
               "NUMA memory, huge pages and devices.")

    def check(self, context):
        return domain_agrees(context.snapshot, skip_hosts=context.stopped,
                             before=context.before)


def domain_agrees(snap, skip_hosts=(), before=None):
    """See the unit's docstring; ``before``: the snapshot a step before."""
    problems = []
    for server, instance in sorted(snap.instances.items()):
        if (instance.host not in snap.domains
                or instance.host in skip_hosts
                or instance.task_state is not None
                or instance.vm_state not in DEFINED_STATES):
            continue
        domain = snap.domains[instance.host].get(server)
        if domain is None:
            wrong = (['no domain on its host']
                     if _placed_by_the_step(server, instance, before)
                     and not _same_host_resize_confirmed(snap, server)
                     else [])
        else:
            wrong = (_placement(snap, instance, domain)
                     + _devices(snap, server, instance, domain))
        if wrong:
            problems.append(Problem(
                'domain_agrees', '%s on %s' % (server, instance.host),
                text='domain_agrees: guest %s (%s) on %s: %s' % (
                    server, instance.vm_state, instance.host,
                    '; '.join(wrong))))
    return problems


def _placed_by_the_step(server, instance, before):
    """Whether the step gave the guest its host or its vm state."""
    was = before.instances.get(server) if before is not None else None
    return (was is None or was is instance or was.host != instance.host
            or was.vm_state != instance.vm_state)


def _same_host_resize_confirmed(snap, server):
    """Whether the guest's latest move is a confirmed same-host resize."""
    latest = snap.migrations.get(snapshot_mod.MIGRATION % server)
    return (latest is not None and latest.status == 'confirmed'
            and latest.source == latest.dest)


def _cpus(cpus):
    return '[%s]' % snapshot_mod.format_cpus(cpus)


def _placement(snap, instance, domain):
    if not instance.cells:
        return []
    wrong = []
    tracker = snap.trackers.get(instance.node)
    host_cells = {cell.id: cell
                  for cell in (tracker.cells if tracker else ())}
    vcpus = sum(len(cell.cpus) for cell in instance.cells)
    if domain.vcpus != vcpus:
        wrong.append('%d vCPUs, its NUMA topology has %d' % (
            domain.vcpus, vcpus))
    pins = set()
    for index, cell in enumerate(instance.cells):
        if domain.memnodes.get(index) != (cell.id,):
            wrong.append('guest cell %d memory on host node(s) %s, Nova '
                         'placed it on %d' % (
                             index, _cpus(domain.memnodes.get(index, ())),
                             cell.id))
        for vcpu in cell.cpus:
            if vcpu in cell.pinning:
                want = (cell.pinning[vcpu],)
            elif cell.id in host_cells:
                want = tuple(host_cells[cell.id].cpus)
            else:
                continue
            pins.update(want)
            got = domain.vcpupin.get(vcpu, ())
            if got != want:
                wrong.append('vCPU %d on %s, Nova placed it on %s' % (
                    vcpu, _cpus(got), _cpus(want)))
    reserved = tuple(sorted(cpu for cell in instance.cells
                            for cpu in cell.reserved))
    policy = instance.emulator_threads_policy
    want_emulator = (reserved if policy == 'isolate' else
                     tuple(sorted(pins)) if policy is None else None)
    if want_emulator is not None and domain.emulatorpin != want_emulator:
        wrong.append('emulator threads on %s, expected %s' % (
            _cpus(domain.emulatorpin), _cpus(want_emulator)))
    if domain.iothreadpin != domain.emulatorpin:
        wrong.append('IO thread on %s, emulator threads on %s' % (
            _cpus(domain.iothreadpin), _cpus(domain.emulatorpin)))
    want_pages = {}
    smallest = min((size for cell in host_cells.values()
                    for size in cell.pages), default=4)
    for index, cell in enumerate(instance.cells):
        if cell.pagesize and cell.pagesize > smallest:
            want_pages.setdefault(cell.pagesize, set()).add(index)
    want_pages = {size: tuple(sorted(cells))
                  for size, cells in want_pages.items()}
    if domain.hugepages != want_pages:
        wrong.append('huge pages %s, expected %s' % (
            _pages(domain.hugepages), _pages(want_pages)))
    return wrong


def _pages(pages):
    return '{%s}' % ', '.join('%dK: cells %s' % (size, _cpus(cells))
                              for size, cells in sorted(pages.items())) \
        if pages else 'none'


def _devices(snap, server, instance, domain):
    want = sorted(dev.address.lower() for dev in snap.devices.get(
        instance.host, {}).values()
        if dev.server == server and dev.status == 'allocated')
    # A vDPA interface is backed by its VF, which the tracker allocated.
    got = sorted(domain.hostdevs + domain.vdpa)
    if instance.vm_state == 'suspended' and set(got) <= set(want):
        return []
    if got != want:
        return ['PCI host devices %s, its host allocated it %s' % (
            ', '.join(domain.hostdevs + tuple(
                'vDPA ' + vf for vf in domain.vdpa)) or 'none',
            ', '.join(want) or 'none')]
    return []


CHECK = DomainAgrees()
