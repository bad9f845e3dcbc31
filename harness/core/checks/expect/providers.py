"""``providers``: exactly the hosts that have a provider in Placement."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem


class Providers(base.Expectation):
    """The hosts that have a resource provider in Placement, exactly.

    Exactly the scenario hosts (or, on hosts with several compute
    nodes, the nodes) that have a resource provider in Placement: a
    deleted compute service's provider is gone; an orphaned one is not.
    """

    name = 'providers'
    order = 70
    summary = 'Exactly the hosts that have a resource provider in Placement.'
    shape = '[host, ...]'
    example = 'providers: [src, dst]'

    def parse(self, check, value, scenario, state):
        known = reading.providers(scenario)
        return sorted({check.known(host, known, '', noun='providers')
                       for host in check.sequence(value, '')})

    def check(self, want, snap, scenario):
        got = sorted(host for host in reading.providers(scenario)
                     if host in snap.providers)
        if want == got:
            return []
        return [Problem(self.name, 'providers', want, got,
                        'providers: expected %s, got %s' % (
                            ', '.join(want) or 'none',
                            ', '.join(got) or 'none'))]


CHECK = Providers()
