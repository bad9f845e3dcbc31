"""``mdevs``: the mediated devices (vGPUs) each named server has, host by
host."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem


class Mdevs(base.Expectation):
    """The mediated devices (vGPUs) each named server has, by host.

    How many mediated devices (vGPUs) each host's hypervisor has
    assigned to the server, as Nova's libvirt driver reads them from its
    guests (``_get_all_assigned_mediated_devices``, with those it holds
    for an incoming live migration). Exact as ``pci`` is: a named server
    has none on hosts not named for it; ``{}`` says none anywhere. A host
    whose compute is stopped shows none.
    """

    name = 'mdevs'
    order = 100
    summary = ('The mediated devices (vGPUs) each named server has, host '
               'by host.')
    shape = '{server: {host: int}}'
    example = 'mdevs: {vm1: {dst: 1}}'

    def parse(self, check, value, scenario, state):
        return reading.per_server(check, value, reading.count, scenario,
                                  state)

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            got = snap.mdevs.get(server, {})
            if {h: n for h, n in wanted.items() if n} != got:
                problems.append(Problem(
                    self.name, server, wanted, got,
                    'mediated devices of %s: expected %s, got %s' % (
                        server, _per_host(wanted), _per_host(got))))
        return problems


def _per_host(counts):
    return ', '.join('%s=%d' % (host, n) for host, n in sorted(
        counts.items()) if n) or 'none'


CHECK = Mdevs()
