"""``usages``: Placement's usage of each host's provider."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem


class Usages(base.Expectation):
    """Placement's usage of each host's provider, exactly.

    Amounts as under ``allocations``: a flavor name, a list of them
    (summed), or ``{RESOURCE_CLASS: n}``. Exact: a scenario host not named
    uses nothing. On a host with several compute nodes (``nodes:``) each
    node is its own provider, named instead of the host.
    """

    name = 'usages'
    order = 20
    summary = "Placement's usage of each host's resource provider."
    shape = '{host: flavor | [flavor, ...] | {RESOURCE_CLASS: int}}'
    example = 'usages: {src: pin2, dst: pin2b}'

    def parse(self, check, value, scenario, state):
        return {host: reading.amounts(check, amounts, scenario, host)
                for host, amounts in reading.by_provider(check, value,
                                                         scenario)}

    def check(self, want, snap, scenario):
        problems = []
        for host in sorted(reading.providers(scenario)):
            wanted = want.get(host, {})
            got = snap.usage(host) if host in snap.providers else {}
            if wanted != got:
                problems.append(Problem(
                    self.name, host, wanted, got,
                    'usage of %s: %s' % (host, reading.diff(wanted, got))))
        return problems


CHECK = Usages()
