"""``devices_agree``: each host's PCI devices are held consistently."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

# nova.objects.fields.PciDeviceStatus: what a held PF makes its VFs and a
# held VF its PF (unclaimable while claimed, unavailable once allocated).
BLOCKED_STATUSES = frozenset(('unclaimable', 'unavailable'))
HELD_STATUSES = snapshot_mod.HELD_STATUSES


class DevicesAgree(base.Invariant):
    """Each host's PCI devices are held as Nova's rules say.

    The PCI devices of each host, as its PCI tracker saved them:

    - a device a guest holds (``claimed`` or ``allocated``) names it, one
      that is free names none, and no device is held by a guest that is
      gone;
    - a PF and one of its VFs are never both held (Nova makes the PF
      ``unavailable`` while a VF is used, and the VFs while the PF is):
      one function of a card, one guest; and both directions of that
      rule hold for a PF tracked with its VFs: while a VF is held its PF
      is ``unclaimable`` or ``unavailable``, while the PF is held so is
      each VF, and a PF none of whose VFs is held, or a VF whose PF is
      not held, is not left ``unclaimable`` or ``unavailable``;
    - with ``[pci] report_in_placement``, the usage of each PCI device
      provider (``<host>_<address>``) is the number of devices the
      tracker has held there (the device itself, or its PF's VFs);
    - a guest's devices on its host lie on one of its NUMA cells when its
      ``hw:pci_numa_affinity_policy`` is ``required`` or ``legacy`` (the
      devices here all report a NUMA node, so legacy is required);
      ``preferred`` allows any cell; ``socket`` is not checked (the
      snapshot does not hold which socket a cell is on). Checked when no
      operation of the guest is in flight (no task state).

    It honours ``tracker_agrees``' windows: a host whose tracker lags
    Placement in a tolerated window (a guest deleted or evacuated while
    its compute was down, ...), and a stopped compute, are not checked
    against Placement nor for devices of guests that are gone until
    their periodic runs.
    """

    name = 'devices_agree'
    order = 80
    summary = ("Each host's PCI devices name their guests, block each "
               "other, match Placement and lie on the guest's cells.")
    honours = ('tracker_agrees',)

    def check(self, context):
        lagging = context.windows.get('tracker_agrees') or {}
        return devices_agree(context.snapshot,
                             skip_hosts=set(lagging) | context.stopped)


def devices_agree(snap, skip_hosts=()):
    """See the unit's docstring."""
    problems = []

    def problem(subject, text):
        problems.append(Problem('devices_agree', subject,
                                text='devices_agree: %s' % text))

    for host in sorted(snap.devices):
        devices = snap.devices[host]
        for address, dev in sorted(devices.items()):
            if dev.held and dev.server is None:
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'but names no guest' % (address, host, dev.status))
            elif not dev.held and dev.server is not None:
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'but still names guest %s' % (
                            address, host, dev.status, dev.server))
            elif dev.held and dev.server not in snap.servers and (
                    host not in skip_hosts):
                problem('%s %s' % (host, address), 'device %s on %s is %s '
                        'for %s, which is gone' % (address, host, dev.status,
                                                   dev.server))
            if dev.held and dev.parent in devices and \
                    devices[dev.parent].held:
                pf = devices[dev.parent]
                problem('%s %s' % (host, address), 'VF %s on %s is %s for '
                        '%s while its PF %s is %s for %s' % (
                            address, host, dev.status, dev.server,
                            pf.address, pf.status, pf.server))
        _functions_block_each_other(host, devices, problem)
        if host not in skip_hosts:
            _device_providers_agree(snap, host, problem)
    _devices_on_allowed_cells(snap, problem)
    return problems


def _functions_block_each_other(host, devices, problem):
    """A card's PF and VFs as ``nova.objects.pci_device`` keeps them.

    Both directions, for a PF tracked with its VFs: a held VF leaves its
    PF unclaimable or unavailable (``claim``, ``allocate``), a held PF
    each of its VFs; a PF none of whose VFs is held, and a VF whose PF is
    not held, are available again (``free``).
    """
    children = {}
    for dev in devices.values():
        if dev.parent in devices:
            children.setdefault(dev.parent, []).append(dev)
    for address, vfs in sorted(children.items()):
        pf = devices[address]
        held = [vf for vf in vfs if vf.held]
        if held and pf.status not in BLOCKED_STATUSES | HELD_STATUSES:
            problem('%s %s' % (host, address), 'PF %s on %s is %s while '
                    'its VF(s) %s are held' % (
                        address, host, pf.status,
                        ', '.join(vf.address for vf in held)))
        elif not held and not pf.held and pf.status in BLOCKED_STATUSES:
            problem('%s %s' % (host, address), 'PF %s on %s is %s although '
                    'none of its VFs is held' % (address, host, pf.status))
        for vf in sorted(vfs, key=lambda vf: vf.address):
            if pf.held and vf.status not in BLOCKED_STATUSES | HELD_STATUSES:
                problem('%s %s' % (host, vf.address), 'VF %s on %s is %s '
                        'while its PF %s is %s for %s' % (
                            vf.address, host, vf.status, address,
                            pf.status, pf.server))
            elif not pf.held and vf.status in BLOCKED_STATUSES:
                problem('%s %s' % (host, vf.address), 'VF %s on %s is %s '
                        'although its PF %s is not held (%s)' % (
                            vf.address, host, vf.status, address,
                            pf.status))


def _device_providers_agree(snap, host, problem):
    providers = snapshot_mod.device_providers(snap, host)
    if not providers:
        return
    held = {}
    for dev in snap.devices.get(host, {}).values():
        if dev.held:
            # A VF counts in its PF's provider.
            where = dev.parent if dev.type == 'type-VF' else dev.address
            held[where.upper()] = held.get(where.upper(), 0) + 1
    for name in providers:
        address = name[len(host) + 1:]
        used = sum(snap.providers[name].usages.values())
        if used != held.get(address, 0):
            problem('provider %s' % name, 'provider %s has usage %s in '
                    'Placement, but the PCI tracker of %s holds %d device(s)'
                    ' there (consumers: %s)' % (
                        name, used, host, held.get(address, 0), ', '.join(
                            '%s=%s' % (c, views.fmt(r)) for c, r in sorted(
                                snap.allocations_against(name).items()))
                        or 'none'))


def _devices_on_allowed_cells(snap, problem):
    for name in sorted(snap.guests):
        guest = snap.guests[name]
        server = snap.servers.get(name)
        if (server is None or server.task_state or not guest.cells
                or not guest.policies
                or set(guest.policies) - {'required', 'legacy'}):
            continue
        for dev in snapshot_mod.devices_of(snap, name):
            if dev.host == server.host and dev.cell not in guest.cells:
                problem('%s %s' % (name, dev.address), 'guest %s (policy '
                        '%s) runs on cell(s) %s of %s but holds device %s '
                        'on cell %s' % (
                            name, '/'.join(guest.policies),
                            ','.join(map(str, guest.cells)), dev.host,
                            dev.address, dev.cell))


CHECK = DevicesAgree()
