"""``guest_devices``: the PCI devices and vGPUs each named guest holds."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class GuestDevices(base.Expectation):
    """The PCI devices (by address) and vGPUs each named guest holds.

    On the guest's current host (``host`` names another: a move's source
    holds the guest's devices until it is confirmed): ``[PCI address,
    ...]``, the devices that host's PCI tracker holds for the guest
    (``claimed`` or ``allocated``); or ``{pci: [...], mdevs: n, host:
    host}``, where ``mdevs`` is how many mediated devices (vGPUs) that
    host's hypervisor assigned it (their UUIDs are made afresh for each
    guest, so they are counted, not named). Exact for each field named:
    ``[]`` says it holds none.
    """

    name = 'guest_devices'
    order = 85
    summary = ('The PCI device addresses and vGPUs each named guest holds '
               'on its host.')
    shape = ('{server: [PCI address, ...] | {pci: [PCI address, ...], '
             'mdevs: int, host: host}}')
    example = "guest_devices: {vm1: ['0000:02:00.0']}"

    def parse(self, check, value, scenario, state):
        parsed = {}
        for server, want in reading.by_server(check, value, state):
            field = str(server)
            if not isinstance(want, dict):
                want = {'pci': want}
            check.keys(want, ('pci', 'mdevs', 'host'), field=field)
            parsed[server] = {}
            if 'host' in want:
                parsed[server]['host'] = check.known(
                    want['host'], scenario.hosts, field + '.host')
            if 'pci' in want:
                check.sequence(want['pci'], field + '.pci')
                parsed[server]['pci'] = sorted(
                    _address(check, address, field + '.pci')
                    for address in want['pci'])
            if 'mdevs' in want:
                parsed[server]['mdevs'] = check.integer(
                    want['mdevs'], field + '.mdevs', minimum=0)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            host = wanted.get('host')
            if host is None:
                record = snap.servers.get(server)
                host = record.host if record else None
            got = {'pci': sorted(dev.address for dev in
                                 snapshot_mod.devices_of(snap, server)
                                 if dev.host == host),
                   'mdevs': snap.mdevs.get(server, {}).get(host, 0)}
            for key in ('pci', 'mdevs'):
                if key in wanted and wanted[key] != got[key]:
                    problems.append(Problem(
                        self.name, '%s %s' % (server, key), wanted[key],
                        got[key], 'guest %s %s on %s: expected %s, got %s'
                        % (server, 'PCI devices' if key == 'pci' else
                           'mediated devices', host or 'no host',
                           wanted[key], got[key])))
        return problems


def _address(check, value, field):
    check.string(value, field)
    if not snapshot_mod.is_pci_address(value):
        check.fail(field, 'expected a PCI address (0000:02:00.0), got %r'
                   % (value,))
    return value.lower()


CHECK = GuestDevices()
