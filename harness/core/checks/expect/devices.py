"""``devices``: each host's PCI devices, counted by status."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

# nova.objects.fields.PciDeviceStatus
DEVICE_STATUSES = ('available', 'claimed', 'allocated', 'removed',
                   'deleted', 'unavailable', 'unclaimable')
#: What Placement holds of the host's devices.
PLACEMENT_KEYS = ('placement', 'vgpus')


class Devices(base.Expectation):
    """Each host's PCI devices, counted by status, and their usage.

    How many of the host's PCI devices (those its ``[pci] device_spec``
    names, VFs and PFs counted one by one) its PCI tracker has in each
    status (``available``, ``claimed``, ``allocated``, ``unavailable``: a
    PF while one of its VFs is used, or a VF while its PF is; ...); with
    ``placement``, the usage of the host's PCI device providers in
    Placement, all classes summed (``[pci] report_in_placement``; Nova
    names them ``<host>_<PCI address>``); with ``vgpus``, the VGPU usage
    of the host's GPU providers (``[devices] enabled_mdev_types``; Nova
    names them ``<host>_pci_<domain>_<bus>_<slot>_<function>``). Statuses
    not named hold none; hosts not named are not checked.
    """

    name = 'devices'
    order = 80
    summary = ("Each host's PCI devices by status, and their usage in "
               "Placement.")
    shape = ('{host: {available: int, claimed: int, allocated: int, '
             'unavailable: int, unclaimable: int, removed: int, deleted: '
             'int, placement: int, vgpus: int}}')
    example = 'devices: {dst: {allocated: 1, available: 3, placement: 1}}'

    def parse(self, check, value, scenario, state):
        return {host: _counts(check, counts, host)
                for host, counts in reading.by_host(check, value, scenario)}

    def check(self, want, snap, scenario):
        problems = []
        for host, wanted in sorted(want.items()):
            got = snapshot_mod.device_counts(snap, host)
            if 'placement' in wanted:
                got['placement'] = sum(
                    sum(snap.providers[name].usages.values())
                    for name in snapshot_mod.device_providers(snap, host))
            if 'vgpus' in wanted:
                got['vgpus'] = sum(
                    rp.usages.get('VGPU', 0)
                    for rp in snap.providers.values()
                    if rp.root == host and snapshot_mod.is_gpu_provider(rp))
            wrong = ['%s expected %s, got %s' % (
                key, wanted.get(key, 0), got.get(key, 0))
                for key in sorted(set(wanted) | set(got))
                if wanted.get(key, 0) != got.get(key, 0)]
            if wrong:
                problems.append(Problem(
                    self.name, host, wanted, got,
                    'devices of %s: %s' % (host, ', '.join(wrong))))
        return problems


def _counts(check, value, field):
    check.mapping(value, field)
    check.keys(value, DEVICE_STATUSES + PLACEMENT_KEYS, field=field)
    return {key: check.integer(n, '%s.%s' % (field, key), minimum=0)
            for key, n in value.items()}


CHECK = Devices()
