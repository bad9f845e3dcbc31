"""``allocations``: what each consumer holds in Placement, host by host."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core import errors
from harness.core import names
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class Allocations(base.Expectation):
    """What each consumer holds in Placement, exactly, host by host.

    Consumers are servers (``vm1``) and the migrations of servers
    (``migration(vm1)``). Amounts are a flavor name (its resources, as
    Nova allocates them), a list of flavor names (summed), or
    ``{RESOURCE_CLASS: n}``; ``{}`` or ``0`` says nothing.

    Exact: a consumer not named holds nothing, and a named consumer holds
    nothing on hosts not named for it. On a host with several compute
    nodes (``nodes:``) the nodes are named instead of the host. Hosts are
    named: what a consumer holds in a host's PCI device providers is not
    counted here (that is ``devices``' ``placement``); the VGPU it holds
    on the host's GPUs is, as the host's (a flavor's ``resources:VGPU``).
    """

    name = 'allocations'
    order = 10
    summary = 'What each consumer holds in Placement, host by host.'
    shape = ('{consumer: {host: flavor | [flavor, ...] | '
             '{RESOURCE_CLASS: int}}}')
    example = 'allocations: {vm1: {dst: pin2b}, migration(vm1): {src: pin2}}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        known = reading.known_servers(state)
        for consumer, on_hosts in check.mapping(value, '').items():
            field = '%s' % (consumer,)
            match = names.MIGRATION_CONSUMER.match(str(consumer))
            server = match.group('server') if match else consumer
            if server not in known:
                check.fail(field, 'unknown consumer %s; servers so far: %s'
                           % (errors.show(consumer),
                              ', '.join(sorted(known)) or 'none'))
            on_hosts = {} if on_hosts in (None, 0) else on_hosts
            check.mapping(on_hosts, field)
            parsed[consumer] = {}
            for host, amounts in on_hosts.items():
                check.known(host, reading.providers(scenario),
                            field + '.host')
                parsed[consumer][host] = reading.amounts(
                    check, amounts, scenario, '%s.%s' % (field, host))
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        # What consumers hold in PCI device providers is ``devices``'.
        devices = {name for name, rp in snap.providers.items()
                   if snapshot_mod.is_device_provider(rp)}
        for consumer in sorted(set(want) | set(snap.allocations)):
            wanted = want.get(consumer, {})
            got = _on_hosts(snap, consumer, devices)
            if wanted == got:
                continue
            if not got:
                problems.append(Problem(
                    self.name, consumer, wanted, got,
                    'allocations of %s: expected %s, got nothing'
                    % (consumer, _by_host(wanted))))
                continue
            if not wanted:
                problems.append(Problem(
                    self.name, consumer, wanted, got,
                    'allocations of %s: expected nothing, got %s'
                    % (consumer, _by_host(got))))
                continue
            for host in sorted(set(wanted) | set(got)):
                if wanted.get(host, {}) != got.get(host, {}):
                    problems.append(Problem(
                        self.name, '%s on %s' % (consumer, host),
                        wanted.get(host, {}), got.get(host, {}),
                        'allocations of %s on %s: %s' % (
                            consumer, host, reading.diff(
                                wanted.get(host, {}), got.get(host, {})))))
        return problems


def _on_hosts(snap, consumer, devices):
    """What ``consumer`` holds, by provider; a GPU's VGPU as its host's."""
    got = {}
    for provider, resources in snap.allocations_of(consumer).items():
        rp = snap.providers.get(provider)
        if provider in devices:
            continue
        if rp is not None and snapshot_mod.is_gpu_provider(rp):
            provider = rp.root
        into = got.setdefault(provider, {})
        for rc, amount in resources.items():
            into[rc] = into.get(rc, 0) + amount
    return got


def _by_host(by_host):
    return '; '.join('%s: %s' % (host, snapshot_mod.format_resources(res))
                     for host, res in sorted(by_host.items()))


CHECK = Allocations()
