"""``pci``: the PCI devices each named server holds, host by host."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class Pci(base.Expectation):
    """The PCI devices each named server holds, host by host.

    The PCI devices the server holds (claimed or allocated) on each
    host: as a count, as the devices' addresses, or counted by the
    devices' NUMA cells (``{cell id: n}``). A named server holds none on
    hosts not named for it; ``{}`` says none anywhere. Servers not named
    are not checked.
    """

    name = 'pci'
    order = 90
    summary = 'The PCI devices each named server holds, host by host.'
    shape = '{server: {host: int | [PCI address, ...] | {cell id: int}}}'
    example = 'pci: {vm1: {dst: {0: 1}}}'

    def parse(self, check, value, scenario, state):
        return reading.per_server(check, value, _held, scenario, state)

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            problems += self._server(server, wanted, snap)
        return problems

    def _server(self, server, want, snap):
        held = {}
        for dev in snapshot_mod.devices_of(snap, server):
            held.setdefault(dev.host, []).append(dev)
        problems = []
        for host in sorted(set(want) | set(held)):
            devs = held.get(host, [])
            expected = want.get(host, {'count': 0})
            if 'count' in expected:
                shown, got = expected['count'], len(devs)
            elif 'addresses' in expected:
                shown, got = expected['addresses'], sorted(d.address
                                                           for d in devs)
            else:
                got = {}
                for dev in devs:
                    got[dev.cell] = got.get(dev.cell, 0) + 1
                shown = {c: n for c, n in expected['cells'].items() if n}
            if shown != got:
                problems.append(Problem(
                    self.name, '%s on %s' % (server, host), shown, got,
                    'PCI devices of %s on %s: expected %s, got %s (%s)' % (
                        server, host, shown, got, ', '.join(
                            '%s cell %s' % (d.address, d.cell)
                            for d in sorted(devs, key=lambda d: d.address))
                        or 'none')))
        return problems


def _held(check, value, field):
    if isinstance(value, dict):
        return {'cells': {check.integer(cell, field + '.cell', minimum=0):
                          check.integer(n, '%s.%s' % (field, cell),
                                        minimum=0)
                          for cell, n in value.items()}}
    if isinstance(value, list):
        return {'addresses': sorted(check.string(a, field).lower()
                                    for a in value)}
    return {'count': check.integer(value, field, minimum=0)}


CHECK = Pci()
