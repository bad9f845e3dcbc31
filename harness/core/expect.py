"""Expectations a scenario step states, checked against a snapshot.

Under ``expect:`` a step may give any of:

``allocations``
    ``{consumer: {host: amounts}}``. Consumers are servers (``vm1``) and
    the migrations of servers (``migration(vm1)``). Amounts are a flavor
    name (its resources, as Nova allocates them), a list of flavor names
    (summed), or ``{RESOURCE_CLASS: n}``.
``usages``
    ``{host: amounts}``: Placement's usage of the host's provider.
``tracker``
    ``{host: flavors or {vcpus_used, memory_mb_used, local_gb_used}}``:
    the host's resource tracker. Flavors mean the guests it counts:
    vcpus_used = their vCPUs, memory_mb_used = their RAM plus the host's
    reserved memory, local_gb_used = their root and ephemeral disk plus
    the host's reserved disk (Placement's DISK_GB ``reserved``).
``pinned_cpus``
    ``{host: n | [cpu ids] | {cell id: n | [cpu ids]}}``.
``servers``
    ``{server: STATUS | {status, host, node}}``; ``host: null`` says the
    server is on no host (shelved and offloaded); ``node`` is its compute
    node (``instance.node``), for a host with several.
``migrations``
    ``{server: status of its latest migration}``.
``providers``
    ``[host, ...]``: exactly the scenario hosts that have a resource
    provider in Placement (a deleted compute service's provider is gone;
    an orphaned one is not).

Where a host manages several compute nodes (``nodes:``), ``allocations``,
``usages``, ``tracker``, ``pinned_cpus`` and ``providers`` name its nodes
instead (each is its own provider and tracker); a host without ``nodes:``
is named by itself. ``tracker`` may also name such a host: its nodes'
trackers summed (for when which node holds which guest is the
scheduler's choice); its nodes not named then are not checked one by
one.
``devices``
    ``{host: {status: n, ..., placement: n}}``: how many of the host's PCI
    devices (those its ``[pci] device_spec`` names, VFs and PFs counted
    one by one) its PCI tracker has in each status (``available``,
    ``claimed``, ``allocated``, ``unavailable``: a PF while one of its VFs
    is used, or a VF while its PF is; ...), and with ``placement`` the
    usage of the host's PCI device providers in Placement, all classes
    summed (``[pci] report_in_placement``; Nova names them
    ``<host>_<PCI address>``), and with ``vgpus`` the VGPU usage of the
    host's GPU providers (``[devices] enabled_mdev_types``; Nova names them
    ``<host>_pci_<domain>_<bus>_<slot>_<function>``). Statuses not named
    hold none; hosts not named are not checked.
``pci``
    ``{server: {host: n | [addresses] | {cell id: n}}}``: the PCI devices
    the server holds (claimed or allocated) on each host, as a count, as
    the devices' addresses, or counted by the devices' NUMA cells. A
    named server holds none on hosts not named for it; ``{}`` says none
    anywhere. Servers not named are not checked.
``mdevs``
    ``{server: {host: n}}``: how many mediated devices (vGPUs) each host's
    hypervisor has assigned to the server, as Nova's libvirt driver reads
    them from its guests (``_get_all_assigned_mediated_devices``, with
    those it holds for an incoming live migration). Exact as ``pci`` is;
    a host whose compute is stopped shows none.

Exactness: a listed set is exact. Under ``allocations``, a consumer not
named holds nothing, and a named consumer holds nothing on hosts not named
for it; under ``usages``, ``tracker`` and ``pinned_cpus``, a scenario host
not named holds (counts, pins) nothing. ``allocations`` names hosts: what
a consumer holds in a host's PCI device providers is not among it (that is
``devices``' ``placement``); the VGPU it holds on the host's GPUs is (a
flavor's ``resources:VGPU``). ``servers`` and ``migrations``
check only what they name. ``{}`` or ``0`` says "nothing" explicitly.
"""

from harness.core import errors
from harness.core import names
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

EXPECT_KEYS = ('allocations', 'usages', 'tracker', 'pinned_cpus', 'servers',
               'migrations', 'providers', 'devices', 'pci', 'mdevs')
# nova.objects.fields.PciDeviceStatus
DEVICE_STATUSES = ('available', 'claimed', 'allocated', 'removed',
                   'deleted', 'unavailable', 'unclaimable')
TRACKER_KEYS = ('vcpus_used', 'memory_mb_used', 'local_gb_used')


# -- parsing (before anything runs) -----------------------------------------

def parse(check, expect, scenario, state):
    """Check an ``expect:`` mapping; return it with flavors resolved."""
    check.mapping(expect, '')
    check.keys(expect, EXPECT_KEYS)
    known_servers = set(state.servers) | state.deleted
    parsed = {}
    if 'allocations' in expect:
        parsed['allocations'] = {}
        for consumer, by_host in check.mapping(
                expect['allocations'], 'allocations').items():
            field = 'allocations.%s' % consumer
            match = names.MIGRATION_CONSUMER.match(str(consumer))
            server = match.group('server') if match else consumer
            if server not in known_servers:
                check.fail(field, 'unknown consumer %s; servers so far: %s'
                           % (errors.show(consumer),
                              ', '.join(sorted(known_servers))
                              or 'none'))
            by_host = {} if by_host in (None, 0) else by_host
            check.mapping(by_host, field)
            parsed['allocations'][consumer] = {
                check.known(host, _providers(scenario), field + '.host'):
                    _amounts(check, amounts, scenario, '%s.%s'
                             % (field, host))
                for host, amounts in by_host.items()}
    if 'usages' in expect:
        parsed['usages'] = {
            host: _amounts(check, amounts, scenario, 'usages.%s' % host)
            for host, amounts in _by_provider(check, expect['usages'],
                                              scenario, 'usages')}
    if 'tracker' in expect:
        parsed['tracker'] = {
            host: _tracker(check, value, scenario, 'tracker.%s' % host)
            for host, value in _by_provider(check, expect['tracker'],
                                            scenario, 'tracker',
                                            whole_hosts=True)}
    if 'pinned_cpus' in expect:
        parsed['pinned_cpus'] = {
            host: _pinned(check, value, 'pinned_cpus.%s' % host)
            for host, value in _by_provider(check, expect['pinned_cpus'],
                                            scenario, 'pinned_cpus')}
    if 'servers' in expect:
        parsed['servers'] = {}
        for server, value in check.mapping(expect['servers'],
                                           'servers').items():
            field = 'servers.%s' % server
            check.known(server, known_servers, field)
            if isinstance(value, str):
                value = {'status': value}
            check.mapping(value, field)
            check.keys(value, ('status', 'host', 'node'), field=field)
            # host null: on no host (a shelved-offloaded server).
            if value.get('host') is not None:
                check.known(value['host'], scenario.hosts, field + '.host')
            if value.get('node') is not None:
                check.known(value['node'], _providers(scenario),
                            field + '.node')
            parsed['servers'][server] = dict(value)
    if 'providers' in expect:
        parsed['providers'] = sorted({
            check.known(host, _providers(scenario), 'providers')
            for host in check.sequence(expect['providers'], 'providers')})
    if 'migrations' in expect:
        parsed['migrations'] = {}
        for server, status in check.mapping(expect['migrations'],
                                            'migrations').items():
            check.known(server, known_servers | state.moved,
                        'migrations.%s' % server)
            if server not in state.moved:
                check.fail('migrations.%s' % server,
                           '%s has not been moved so far' % server)
            parsed['migrations'][server] = check.string(
                status, 'migrations.%s' % server)
    if 'devices' in expect:
        parsed['devices'] = {
            host: _device_counts(check, value, 'devices.%s' % host)
            for host, value in _by_host(check, expect['devices'], scenario,
                                        'devices')}
    for key, held in (('pci', _held), ('mdevs', _count)):
        if key in expect:
            parsed[key] = _per_server(check, expect[key], key, held,
                                      known_servers, scenario)
    return parsed


def _per_server(check, value, key, held, known_servers, scenario):
    """``{server: {host: what it holds there}}``; ``{}``/``0``: nothing."""
    parsed = {}
    for server, by_host in check.mapping(value, key).items():
        field = '%s.%s' % (key, server)
        check.known(server, known_servers, field)
        by_host = {} if by_host in (None, 0) else by_host
        parsed[server] = {
            host: held(check, count, '%s.%s' % (field, host))
            for host, count in _by_host(check, by_host, scenario, field)}
    return parsed


def _count(check, value, field):
    return check.integer(value, field, minimum=0)


def _device_counts(check, value, field):
    check.mapping(value, field)
    check.keys(value, DEVICE_STATUSES + ('placement', 'vgpus'),
               field=field)
    return {key: check.integer(n, '%s.%s' % (field, key), minimum=0)
            for key, n in value.items()}


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


def _providers(scenario):
    """The names expectations give compute nodes (``Scenario.providers``)."""
    providers = getattr(scenario, 'providers', None)
    return providers() if callable(providers) else set(scenario.hosts)


def _multi_node_hosts(scenario):
    return {name: host.nodes for name, host in scenario.hosts.items()
            if getattr(host, 'nodes', None) is not None}


def _by_provider(check, value, scenario, field, whole_hosts=False):
    names = _providers(scenario)
    if whole_hosts:
        names = names | set(_multi_node_hosts(scenario))
    for name, amounts in check.mapping(value, field).items():
        check.known(name, names, field + '.host')
        yield name, amounts


def _by_host(check, value, scenario, field):
    for host, amounts in check.mapping(value, field).items():
        check.known(host, scenario.hosts, field + '.host')
        yield host, amounts


def _flavors(check, value, scenario, field):
    names = [value] if isinstance(value, str) else value
    for name in names:
        check.known(name, scenario.flavors, field, noun='flavor')
    return [scenario.flavors[name] for name in names]


def _amounts(check, value, scenario, field):
    if value in (None, 0):
        return {}
    if isinstance(value, (str, list)):
        total = {}
        for flavor in _flavors(check, value, scenario, field):
            for rc, amount in flavor.resources().items():
                total[rc] = total.get(rc, 0) + amount
        return total
    check.mapping(value, field)
    for rc, amount in value.items():
        check.resource_class(rc, '%s.%s' % (field, rc))
        check.integer(amount, '%s.%s' % (field, rc), minimum=0)
    return {rc: amount for rc, amount in value.items() if amount}


def _tracker(check, value, scenario, field):
    # {} is "nothing", as the module docstring says, not "check no key".
    if value in (None, 0) or value == {}:
        return {'guests': {key: 0 for key in TRACKER_KEYS}}
    if isinstance(value, (str, list)):
        flavors = _flavors(check, value, scenario, field)
        return {'guests': {
            'vcpus_used': sum(f.vcpus for f in flavors),
            'memory_mb_used': sum(f.ram for f in flavors),
            'local_gb_used': sum(f.disk + f.ephemeral for f in flavors)}}
    check.mapping(value, field)
    check.keys(value, TRACKER_KEYS, field=field)
    return {'exact': {key: check.integer(value[key], '%s.%s' % (field, key),
                                         minimum=0)
                      for key in value}}


def _pinned(check, value, field):
    if isinstance(value, dict):
        return {'cells': {check.integer(cell, field + '.cell', minimum=0):
                          _cpus(check, cpus, '%s.%s' % (field, cell))
                          for cell, cpus in value.items()}}
    return {'host': _cpus(check, value, field)}


def _cpus(check, value, field):
    if isinstance(value, list):
        return sorted(check.integer(cpu, field, minimum=0) for cpu in value)
    return check.integer(value, field, minimum=0)


# -- checking (after each step) ---------------------------------------------

def check(expect, snap, scenario):
    """Differences between ``expect`` and ``snap``: ``Problem`` records."""
    lines = []
    if 'allocations' in expect:
        lines += _check_allocations(expect['allocations'], snap)
    providers = sorted(_providers(scenario))
    if 'usages' in expect:
        for host in providers:
            want = expect['usages'].get(host, {})
            got = snap.usage(host) if host in snap.providers else {}
            if want != got:
                lines.append(Problem(
                    'usages', host, want, got,
                    'usage of %s: %s' % (host, _diff(want, got))))
    if 'tracker' in expect:
        whole = {name: nodes for name, nodes in
                 _multi_node_hosts(scenario).items()
                 if name in expect['tracker'] and name not in providers}
        summed = {node for nodes in whole.values() for node in nodes}
        for host in providers:
            if host not in expect['tracker'] and (
                    host in summed or host not in snap.trackers
                    and host not in scenario.hosts):
                # A node not named that has no record (removed, or not
                # come yet) counts nothing; one whose host is named is
                # counted with its host's.
                continue
            lines += _check_tracker(host, expect['tracker'].get(
                host, {'guests': {key: 0 for key in TRACKER_KEYS}}), snap)
        for name, nodes in sorted(whole.items()):
            lines += _check_host_tracker(name, nodes,
                                         expect['tracker'][name], snap)
    if 'pinned_cpus' in expect:
        for host in providers:
            lines += _check_pinned(host, expect['pinned_cpus'].get(
                host, {'host': 0}), snap)
    for server, want in sorted(expect.get('servers', {}).items()):
        got = snap.servers.get(server)
        if got is None:
            lines.append(Problem(
                'servers', server, want, None,
                'server %s: expected %s, but it is gone'
                % (server, _fmt_server(want))))
            continue
        for key in ('status', 'host', 'node'):
            if key in want and want[key] != getattr(got, key):
                lines.append(Problem(
                    'servers', '%s %s' % (server, key), want[key],
                    getattr(got, key), 'server %s: %s expected %s, got %s'
                    % (server, key, want[key], getattr(got, key))))
    if 'providers' in expect:
        want = expect['providers']
        got = sorted(host for host in providers
                     if host in snap.providers)
        if want != got:
            lines.append(Problem(
                'providers', 'providers', want, got,
                'providers: expected %s, got %s' % (
                    ', '.join(want) or 'none', ', '.join(got) or 'none')))
    for server, want in sorted(expect.get('migrations', {}).items()):
        got = snap.migrations.get(snapshot_mod.MIGRATION % server)
        status = got.status if got else None
        if status != want:
            lines.append(Problem(
                'migrations', server, want, status,
                'migration of %s: status expected %s, got %s'
                % (server, want, status)))
    for host, want in sorted(expect.get('devices', {}).items()):
        lines += _check_devices(host, want, snap)
    for server, want in sorted(expect.get('pci', {}).items()):
        lines += _check_pci(server, want, snap)
    for server, want in sorted(expect.get('mdevs', {}).items()):
        got = snap.mdevs.get(server, {})
        if {h: n for h, n in want.items() if n} != got:
            lines.append(Problem(
                'mdevs', server, want, got,
                'mediated devices of %s: expected %s, got %s' % (
                    server, _per_host(want), _per_host(got))))
    return lines


def _per_host(counts):
    return ', '.join('%s=%d' % (host, n) for host, n in sorted(
        counts.items()) if n) or 'none'


def _check_devices(host, want, snap):
    got = snapshot_mod.device_counts(snap, host)
    if 'placement' in want:
        got['placement'] = sum(
            sum(snap.providers[name].usages.values())
            for name in snapshot_mod.device_providers(snap, host))
    if 'vgpus' in want:
        got['vgpus'] = sum(
            rp.usages.get('VGPU', 0) for rp in snap.providers.values()
            if rp.root == host and snapshot_mod.is_gpu_provider(rp))
    wrong = ['%s expected %s, got %s' % (key, want.get(key, 0),
                                         got.get(key, 0))
             for key in sorted(set(want) | set(got))
             if want.get(key, 0) != got.get(key, 0)]
    if not wrong:
        return []
    return [Problem('devices', host, want, got,
                    'devices of %s: %s' % (host, ', '.join(wrong)))]


def _check_pci(server, want, snap):
    held = {}
    for dev in snapshot_mod.devices_of(snap, server):
        held.setdefault(dev.host, []).append(dev)
    lines = []
    for host in sorted(set(want) | set(held)):
        devs = held.get(host, [])
        expected = want.get(host, {'count': 0})
        if 'count' in expected:
            shown, got = expected['count'], len(devs)
        elif 'addresses' in expected:
            shown, got = expected['addresses'], sorted(d.address
                                                       for d in devs)
        else:
            shown = expected['cells']
            got = {}
            for dev in devs:
                got[dev.cell] = got.get(dev.cell, 0) + 1
            shown = {c: n for c, n in shown.items() if n}
        if shown != got:
            lines.append(Problem(
                'pci', '%s on %s' % (server, host), shown, got,
                'PCI devices of %s on %s: expected %s, got %s (%s)' % (
                    server, host, shown, got, ', '.join(
                        '%s cell %s' % (d.address, d.cell)
                        for d in sorted(devs, key=lambda d: d.address))
                    or 'none')))
    return lines


def _check_allocations(expected, snap):
    lines = []
    # What consumers hold in PCI device providers is ``devices``' to check.
    devices = {name for name, rp in snap.providers.items()
               if snapshot_mod.is_device_provider(rp)}
    for consumer in sorted(set(expected) | set(snap.allocations)):
        want = expected.get(consumer, {})
        got = {}
        for provider, resources in snap.allocations_of(consumer).items():
            rp = snap.providers.get(provider)
            if provider in devices:
                continue
            if rp is not None and snapshot_mod.is_gpu_provider(rp):
                # A flavor's VGPU, held on the host's GPU: the host's.
                into = got.setdefault(rp.root, {})
                for rc, amount in resources.items():
                    into[rc] = into.get(rc, 0) + amount
                continue
            into = got.setdefault(provider, {})
            for rc, amount in resources.items():
                into[rc] = into.get(rc, 0) + amount
        if not want and not got:
            continue
        if want == got:
            continue
        if not got:
            lines.append(Problem(
                'allocations', consumer, want, got,
                'allocations of %s: expected %s, got nothing'
                % (consumer, _fmt_by_host(want))))
            continue
        if not want:
            lines.append(Problem(
                'allocations', consumer, want, got,
                'allocations of %s: expected nothing, got %s'
                % (consumer, _fmt_by_host(got))))
            continue
        for host in sorted(set(want) | set(got)):
            if want.get(host, {}) != got.get(host, {}):
                lines.append(Problem(
                    'allocations', '%s on %s' % (consumer, host),
                    want.get(host, {}), got.get(host, {}),
                    'allocations of %s on %s: %s' % (
                        consumer, host, _diff(want.get(host, {}),
                                              got.get(host, {})))))
    return lines


def _check_tracker(host, want, snap):
    tracker = snap.trackers.get(host)
    if tracker is None:
        return [Problem('tracker', host, want, None,
                        'tracker of %s: no compute node record' % host)]
    got = {key: getattr(tracker, key) for key in TRACKER_KEYS}
    if 'guests' in want:
        # The tracker counts the host's reserved memory and disk as used;
        # Placement's inventory says how much is reserved.
        inventories = (snap.providers[host].inventories
                       if host in snap.providers else {})
        want = dict(want['guests'])
        want['memory_mb_used'] += inventories.get('MEMORY_MB', {}).get(
            'reserved', 0)
        want['local_gb_used'] += inventories.get('DISK_GB', {}).get(
            'reserved', 0)
    else:
        want = want['exact']
        got = {key: got[key] for key in want}
    if want == got:
        return []
    return [Problem('tracker', host, want, got, 'tracker of %s: %s' % (
        host, ', '.join('%s expected %s, got %s' % (key, want[key], got[key])
                        for key in TRACKER_KEYS
                        if key in want and want[key] != got[key])))]


def _check_host_tracker(host, nodes, want, snap):
    """The trackers of a multi-node ``host``'s nodes, summed."""
    got = {key: 0 for key in TRACKER_KEYS}
    reserved = {'memory_mb_used': 0, 'local_gb_used': 0}
    for node in nodes:
        tracker = snap.trackers.get(node)
        if tracker is None:
            continue
        for key in TRACKER_KEYS:
            got[key] += getattr(tracker, key)
        inventories = (snap.providers[node].inventories
                       if node in snap.providers else {})
        reserved['memory_mb_used'] += inventories.get(
            'MEMORY_MB', {}).get('reserved', 0)
        reserved['local_gb_used'] += inventories.get(
            'DISK_GB', {}).get('reserved', 0)
    if 'guests' in want:
        want = dict(want['guests'])
        for key, amount in reserved.items():
            want[key] += amount
    else:
        want = want['exact']
        got = {key: got[key] for key in want}
    if want == got:
        return []
    return [Problem('tracker', host, want, got,
                    'trackers of %s\'s nodes (%s), summed: %s' % (
                        host, ', '.join(nodes), ', '.join(
                            '%s expected %s, got %s' % (
                                key, want[key], got[key])
                            for key in TRACKER_KEYS
                            if key in want and want[key] != got[key])))]


def _check_pinned(host, want, snap):
    tracker = snap.trackers.get(host)
    cells = tracker.cells if tracker else ()
    if 'host' in want:
        return _compare_cpus(host, want['host'],
                             list(tracker.pinned_cpus) if tracker else [])
    lines = []
    by_id = {cell.id: list(cell.pinned_cpus) for cell in cells}
    for cell_id in sorted(set(want['cells']) | set(by_id)):
        lines += _compare_cpus('%s cell %d' % (host, cell_id),
                               want['cells'].get(cell_id, 0),
                               by_id.get(cell_id, []))
    return lines


def _compare_cpus(where, want, got):
    what = 'pinned CPUs on %s' % where
    if isinstance(want, int):
        if want != len(got):
            return [Problem('pinned_cpus', where, want, sorted(got),
                            '%s: expected %d, got %d [%s]' % (
                                what, want, len(got),
                                snapshot_mod.format_cpus(got)))]
        return []
    if want != sorted(got):
        return [Problem('pinned_cpus', where, want, sorted(got),
                        '%s: expected [%s], got [%s]' % (
                            what, snapshot_mod.format_cpus(want),
                            snapshot_mod.format_cpus(got)))]
    return []


def _diff(want, got):
    if not want:
        return 'expected nothing, got %s' % snapshot_mod.format_resources(got)
    if not got:
        return 'expected %s, got nothing' % snapshot_mod.format_resources(
            want)
    parts = ['%s expected %s, got %s' % (rc, want.get(rc, 0), got.get(rc, 0))
             for rc in sorted(set(want) | set(got))
             if want.get(rc, 0) != got.get(rc, 0)]
    return ', '.join(parts)


def _fmt_by_host(by_host):
    return '; '.join('%s: %s' % (host, snapshot_mod.format_resources(res))
                     for host, res in sorted(by_host.items()))


def _fmt_server(want):
    return ', '.join('%s %s' % (k, v) for k, v in sorted(want.items()))


def failure(step, problems):
    """The ScenarioFailed for a step's differences (``Problem`` records)."""
    lines = [str(problem) for problem in problems]
    return errors.ScenarioFailed(
        'step %d (%s): expectations not met:\n  %s'
        % (step.index, step.label, '\n  '.join(lines)),
        step=step, diff='\n'.join(lines), problems=problems)
