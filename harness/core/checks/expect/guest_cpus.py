"""``guest_cpus``: the host CPUs each named guest is pinned to."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class GuestCpus(base.Expectation):
    """The host CPUs each named guest is pinned to, as Nova recorded it.

    From the guest's NUMA topology in the cell database (each cell's
    ``cpu_pinning``, what Nova's driver writes into the domain's
    ``vcpupin``): either the whole map, ``{vCPU: host CPU}``, or the host
    CPUs held, ``[host CPU, ...]``; ``[]`` (or ``{}``) says the guest
    pins none (not pinned, or its pinning was dropped). Exact for each
    guest named; guests not named are not checked.
    """

    name = 'guest_cpus'
    order = 45
    summary = ('The host CPUs each named guest is pinned to (vCPU -> host '
               'CPU, or the set).')
    shape = '{server: {vcpu: host cpu} | [host cpu, ...]}'
    example = 'guest_cpus: {vm1: {0: 2, 1: 10}}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        for server, want in reading.by_server(check, value, state):
            field = str(server)
            if isinstance(want, dict):
                parsed[server] = {'map': {
                    check.integer(vcpu, field + '.vcpu', minimum=0):
                    check.integer(pcpu, '%s.%s' % (field, vcpu), minimum=0)
                    for vcpu, pcpu in want.items()}}
            else:
                check.sequence(want, field)
                parsed[server] = {'cpus': sorted(
                    check.integer(cpu, field, minimum=0) for cpu in want)}
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            instance = snap.instances.get(server)
            pinning = instance.pinning if instance else {}
            if 'map' in wanted:
                if wanted['map'] != pinning:
                    problems.append(Problem(
                        self.name, server, wanted['map'], pinning,
                        'guest %s pinning: expected %s, got %s' % (
                            server, _show(wanted['map']), _show(pinning))))
            elif wanted['cpus'] != sorted(pinning.values()):
                got = sorted(pinning.values())
                problems.append(Problem(
                    self.name, server, wanted['cpus'], got,
                    'guest %s pinned CPUs: expected [%s], got [%s]' % (
                        server, snapshot_mod.format_cpus(wanted['cpus']),
                        snapshot_mod.format_cpus(got))))
        return problems


def _show(pinning):
    return '{%s}' % ', '.join('%d: %d' % (vcpu, pcpu)
                              for vcpu, pcpu in sorted(pinning.items()))


CHECK = GuestCpus()
