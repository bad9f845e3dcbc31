"""Expectation keys as Nova's assertions, one unit each.

A unit is a function ``(value, scenario) -> lines`` of test code for the
key's parsed value (``harness.core.checks.expect``), registered under the
key by ``translates``. The lines call the assertion helpers the generated
class defines (``nova_test.HELPERS``), which read what the harness reads:
Placement's allocations and usages, the compute node record, the API's
servers and migrations. A key without a unit is refused by name.
"""

import logging

from harness.export import registry

_REGISTRY = registry.Registry()
translates = _REGISTRY.translates
get = _REGISTRY.get
names = _REGISTRY.names
Unsupported = registry.Unsupported


def _entry(indent, key, value, width=71):
    """``key: value,`` lines at ``indent`` (past the method's 8).

    The mapping is broken one item a line when it would be too long.
    """
    line = '%s%r: %r,' % (' ' * indent, key, value)
    if len(line) <= width:
        return [line]
    return (['%s%r: {' % (' ' * indent, key)]
            + ['%s%r: %r,' % (' ' * (indent + 4), k, v)
               for k, v in value.items()]
            + ['%s},' % (' ' * indent)])


@translates('allocations')
def allocations(value, scenario):
    # Exact: every server not named holds nothing, as the harness checks.
    lines = ['self.assertAllocations({']
    for consumer, by_host in sorted(value.items()):
        lines.append('    %r: {' % consumer)
        for host, resources in sorted(by_host.items()):
            lines += _entry(8, host, dict(sorted(resources.items())))
        lines.append('    },')
    lines.append('})')
    return lines


def _by_host(assertion, value, amounts):
    """``assertion({host: amounts, ...})`` lines."""
    lines = ['self.%s({' % assertion]
    for host, counts in sorted(value.items()):
        lines += _entry(4, host, dict(sorted(amounts(host, counts).items())))
    return lines + ['})']


@translates('usages')
def usages(value, scenario):
    return _by_host('assertUsages', value, lambda host, resources: resources)


def _guests(host, counts):
    if set(counts) != {'guests'}:
        raise Unsupported('%s: the record\'s fields given exactly' % host)
    return counts['guests']


@translates('tracker')
def tracker(value, scenario):
    exact = {host: counts['exact'] for host, counts in value.items()
             if 'exact' in counts}
    if not exact:
        return _by_host('assertTrackers', value, _guests)
    # The fields named only, and the NUMA cells' usage, which only
    # profiled hosts have.
    _check_profiled(scenario, 'the record\'s fields given exactly')
    lines = _by_host('assertTrackers', {
        host: counts for host, counts in value.items()
        if host not in exact}, _guests)
    lines[-1] = '}, skip=%r)' % sorted(exact)
    for host, fields in sorted(exact.items()):
        lines.append('self.assertTrackerFields(%r, %r)' % (host, fields))
    return lines


@translates('servers')
def servers(value, scenario):
    lines = []
    for server, want in sorted(value.items()):
        if 'node' in want:
            raise Unsupported('%s: node' % server)
        lines.append('self.assertServer(%r, %s)' % (server, ', '.join(
            '%s=%r' % item for item in sorted(want.items()))))
    return lines


@translates('migrations')
def migrations(value, scenario):
    return ['self.assertLatestMigration(%r, %r)' % item
            for item in sorted(value.items())]


@translates('providers')
def providers(value, scenario):
    return ['self.assertProviders(%r)' % (sorted(value),)]


@translates('hypervisors')
def hypervisors(value, scenario):
    # The hypervisor list as the API shows it (GET /os-hypervisors/detail):
    # exactly the nodes named, each with its state and status if given.
    lines = ['self.assertHypervisors({']
    for node, want in sorted(value.items()):
        lines += _entry(4, node, dict(sorted(want.items())))
    return lines + ['})']


@translates('provider_traits')
def provider_traits(value, scenario):
    return ['self.assertProviderTraits(%r, %s)' % (host, ', '.join(
        '%s=%r' % (mode, traits) for mode, traits in sorted(want.items())))
        for host, want in sorted(value.items())]


@translates('pinned_cpus')
def pinned_cpus(value, scenario):
    # Read from each compute node's NUMA topology, as Nova's NUMA tests
    # read it; only profiled hosts have one.
    _check_profiled(scenario, 'pinned CPUs')
    lines = ['self.assertPinnedCpus({']
    for host, want in sorted(value.items()):
        lines += _entry(4, host, want['host'] if 'host' in want
                        else dict(sorted(want['cells'].items())))
    return lines + ['})']


def _check_profiled(scenario, key):
    for host in sorted(scenario.hosts.values(), key=lambda h: h.name):
        if not host.profile:
            raise Unsupported('host %r has no profile (%s)' % (host.name, key))


@translates('devices')
def devices(value, scenario):
    # The PCI tracker's records, as Nova's PCI tests count them, and the
    # usage of the host's PCI device providers.
    _check_profiled(scenario, 'PCI devices')
    lines = []
    for host, counts in sorted(value.items()):
        lines += ['self.assertDevices(%r, {' % host]
        lines += ['    %r: %r,' % item for item in sorted(counts.items())]
        lines += ['})']
    return lines


@translates('device_providers')
def device_providers(value, scenario):
    # Placement's view of each host's devices, as Nova's PCI in Placement
    # tests read it: exactly the providers named, the keys named of each.
    _check_profiled(scenario, 'device providers')
    lines = []
    for host, providers in sorted(value.items()):
        lines += ['self.assertDeviceProviders(%r, {' % host]
        for address, want in sorted(providers.items()):
            lines += _entry(4, address, dict(sorted(want.items())))
        lines += ['})']
    return lines


@translates('fault')
def fault(value, scenario):
    # The latest instance fault Nova recorded for each server named, in
    # whichever cell holds it (cell0 for one no host took), as the
    # harness reads it: the fields named, or none (None).
    lines = []
    for server, want in sorted(value.items()):
        want = dict(want or {})
        message = want.pop('message', None)
        line = 'self.assertFault(%r%s' % (server, ''.join(
            ', %s=%r' % item for item in sorted(want.items())))
        if message is None:
            lines.append(line + ')')
        elif len(line + ', message=%r)' % message) <= 71:
            lines.append(line + ', message=%r)' % message)
        else:
            # The message alone on its line, which the layout splits
            # into adjacent literals where it is too long.
            lines += [line + ', message=(', '    %r))' % message]
    return lines


@translates('pci')
def pci(value, scenario):
    # The PCI tracker's records of the devices each server holds.
    _check_profiled(scenario, 'PCI devices')
    lines = []
    for server, by_host in sorted(value.items()):
        want = {}
        for host, held in sorted(by_host.items()):
            want[host] = (held['count'] if 'count' in held
                          else held['addresses'] if 'addresses' in held
                          else dict(sorted(held['cells'].items())))
        lines.append('self.assertPci(%r, %r)' % (server, want))
    return lines


@translates('action_events')
def action_events(value, scenario):
    # Each entry matches one event of the server's instance actions, as
    # an admin sees them at the latest microversion (details: 2.84).
    lines = []
    for server, entries in sorted(value.items()):
        for entry in entries:
            lines.append('self.assertActionEvent(%r, %s)' % (server, ', '.join(
                '%s=%r' % item for item in sorted(entry.items()))))
    return lines


@translates('mdevs')
def mdevs(value, scenario):
    # The mediated devices each running host's libvirt driver assigned
    # to the server, as Nova's vGPU tests count them
    # (_get_all_assigned_mediated_devices).
    _check_profiled(scenario, 'mediated devices')
    return ['self.assertMdevs(%r, %r)' % (server, dict(sorted(
        by_host.items()))) for server, by_host in sorted(value.items())]


# The fields of a compute node record ``compute_nodes`` may name that are
# translated: its state, identity and the tracker's amounts. The stats
# and the PCI pools are the harness's readings of JSON fields: refused.
_NODE_FIELDS = ('deleted', 'uuid', 'host', 'records', 'mapped', 'vcpus',
                'vcpus_used', 'memory_mb', 'memory_mb_used', 'local_gb',
                'local_gb_used', 'running_vms')


@translates('compute_nodes')
def compute_nodes(value, scenario):
    # The cell database's records of each node, deleted ones too, as
    # Nova's test of LP#2085135 reads them (read_deleted='yes').
    lines = []
    for node, want in sorted(value.items()):
        if want is not None:
            extra = sorted(set(want) - set(_NODE_FIELDS))
            if extra:
                raise Unsupported('%s: %s' % (node, extra[0]))
            want = dict(sorted(want.items()))
        line = 'self.assertComputeNode(%r, %r)' % (node, want)
        if want is None or len(line) <= 71:
            lines.append(line)
            continue
        lines += (['self.assertComputeNode(%r, {' % node]
                  + ['    %r: %r,' % item for item in want.items()]
                  + ['})'])
    return lines


# What Nova's test log keeps (StandardLogging): INFO and up, unless the
# run sets OS_DEBUG.
_LOG_LEVELS = ('INFO', 'WARNING', 'ERROR', 'CRITICAL')


@translates('logs')
def logs(value, scenario):
    # Nova's tests read the test's whole log (self.stdlog.logger.output);
    # the step's own records are those after the mark its translation
    # takes as it starts (nova_test._method), as the harness keeps the
    # records logged while the step ran. The log does not tell which
    # service logged a record: 'any' keeps the harness's scope; a
    # service's 'absent' becomes absent from every service's records
    # (stronger, said in a comment of the test), its 'present' is
    # refused (another service's record would do).
    lines = []
    for service, modes in sorted(value.items()):
        if service != 'any' and 'present' in modes:
            raise Unsupported('service %r: present (the test\'s log does '
                              'not tell services apart; say any)' % service)
        for mode, matchers in sorted(modes.items()):
            for matcher in matchers:
                level = logging.getLevelName(matcher['level'])
                if level not in _LOG_LEVELS:
                    raise Unsupported('level %s (Nova\'s test log keeps '
                                      'INFO and up)' % level)
                if service != 'any':
                    lines += [
                        '# The scenario says none from %s: none from '
                        'any' % service,
                        '# service here, stronger (the test\'s log does '
                        'not tell them apart).']
                lines.append('self.assertLogged(log_mark, %r, %r%s)' % (
                    level, matcher.get('pattern'),
                    ', present=True' if mode == 'present' else ''))
    return lines
