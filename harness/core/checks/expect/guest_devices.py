"""``guest_devices``: the PCI devices and vGPUs each named guest holds."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class GuestDevices(base.Expectation):
    """The PCI devices (by address) and vGPUs each named guest holds.

    ``[PCI address, ...]``: the devices the PCI trackers hold for the
    guest (``claimed`` or ``allocated``), on every host; or ``{pci:
    [...], mdevs: n}`` with the number of mediated devices (vGPUs) its
    hypervisors assigned it too (their UUIDs are made afresh for each
    guest, so they are counted, not named). Exact for each guest named:
    ``[]`` says it holds none.
    """

    name = 'guest_devices'
    order = 85
    summary = 'The PCI device addresses and vGPUs each named guest holds.'
    shape = '{server: [PCI address, ...] | {pci: [PCI address, ...], ' \
        'mdevs: int}}'
    example = "guest_devices: {vm1: ['0000:02:00.0']}"

    def parse(self, check, value, scenario, state):
        parsed = {}
        known = reading.known_servers(state)
        for server, want in check.mapping(value, '').items():
            field = '%s' % (server,)
            check.known(server, known, field)
            if not isinstance(want, dict):
                want = {'pci': want}
            check.keys(want, ('pci', 'mdevs'), field=field)
            parsed[server] = {}
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
            got = {'pci': sorted(dev.address for dev in
                                 snapshot_mod.devices_of(snap, server)),
                   'mdevs': sum(snap.mdevs.get(server, {}).values())}
            for key in sorted(wanted):
                if wanted[key] != got[key]:
                    problems.append(Problem(
                        self.name, '%s %s' % (server, key), wanted[key],
                        got[key], 'guest %s %s: expected %s, got %s' % (
                            server, 'PCI devices' if key == 'pci' else
                            'mediated devices', wanted[key], got[key])))
        return problems


def _address(check, value, field):
    check.string(value, field)
    if not snapshot_mod.is_pci_address(value):
        check.fail(field, 'expected a PCI address (0000:02:00.0), got %r'
                   % (value,))
    return value.lower()


CHECK = GuestDevices()
