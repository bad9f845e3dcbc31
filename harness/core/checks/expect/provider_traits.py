"""``provider_traits``: traits a compute node's provider has, or lacks."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem

MODES = ('has', 'lacks')


class ProviderTraits(base.Expectation):
    """Traits each named compute node's provider has, and lacks.

    Per node (a host's own name, or a node of a multi-node host): ``has``,
    traits its resource provider must carry (``COMPUTE_STATUS_DISABLED``
    while its service is disabled, a driver capability such as
    ``COMPUTE_NODE``), and ``lacks``, traits it must not. A provider
    carries many traits (every capability its driver reports): only those
    named are checked. A node without a provider fails either way.
    """

    name = 'provider_traits'
    order = 72
    accounting = False
    summary = ("Traits a compute node's provider has, or lacks.")
    shape = '{node: {has: [trait, ...], lacks: [trait, ...]}}'
    example = ('provider_traits: {src: {has: [COMPUTE_STATUS_DISABLED]}, '
               'dst: {lacks: [COMPUTE_STATUS_DISABLED]}}')

    def parse(self, check, value, scenario, state):
        parsed = {}
        for node, want in reading.by_provider(check, value, scenario):
            check.mapping(want, node)
            check.keys(want, MODES, field=node)
            if not want:
                check.fail(node, 'say has, lacks or both')
            parsed[node] = {}
            for mode in MODES:
                if mode not in want:
                    continue
                field = '%s.%s' % (node, mode)
                traits = [check.string(trait, field) for trait in
                          check.sequence(want[mode], field)]
                if not traits:
                    check.fail(field, 'name at least one trait')
                parsed[node][mode] = sorted(traits)
            both = set(parsed[node].get('has', ())) & set(
                parsed[node].get('lacks', ()))
            if both:
                check.fail(node, '%s cannot be both had and lacked'
                           % ', '.join(sorted(both)))
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for node, wanted in sorted(want.items()):
            provider = snap.providers.get(node)
            if provider is None:
                problems.append(Problem(
                    self.name, node, wanted, None,
                    'traits of %s: it has no provider' % node))
                continue
            traits = set(provider.traits)
            missing = [t for t in wanted.get('has', ()) if t not in traits]
            extra = [t for t in wanted.get('lacks', ()) if t in traits]
            wrong = (['lacks %s' % ', '.join(missing)] if missing else []) \
                + (['has %s' % ', '.join(extra)] if extra else [])
            if wrong:
                problems.append(Problem(
                    self.name, node, wanted, sorted(traits),
                    'traits of %s: %s' % (node, '; '.join(wrong))))
        return problems


CHECK = ProviderTraits()
