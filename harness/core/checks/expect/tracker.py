"""``tracker``: what each host's resource tracker counts."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem

#: The compute node record's fields it compares.
TRACKER_KEYS = ('vcpus_used', 'memory_mb_used', 'local_gb_used')
#: A NUMA cell's usage fields (``cells``): its shared CPUs' usage (the
#: guests' floating vCPUs placed on it; pinned ones are ``pinned_cpus``)
#: and its memory.
CELL_KEYS = ('cpu_usage', 'memory_usage')


class Tracker(base.Expectation):
    """What each host's resource tracker counts, exactly.

    Flavors mean the guests the tracker counts: ``vcpus_used`` = their
    vCPUs, ``memory_mb_used`` = their RAM plus the host's reserved memory,
    ``local_gb_used`` = their root and ephemeral disk plus the host's
    reserved disk (Placement's ``DISK_GB`` ``reserved``); a mapping gives
    the record's fields exactly (those named only), and ``cells: {cell
    id: {cpu_usage: n, memory_usage: n}}`` the NUMA cells' usage the
    tracker saved (``cpu_usage``: the guests' floating vCPUs placed on
    the cell, as ``hardware.numa_usage_from_instance_numa`` counts them,
    pinned ones being ``pinned_cpus``'; ``memory_usage`` in MiB; the
    cells and fields named only).
    ``{}`` or ``0`` says it counts no guest. Exact: a scenario host not
    named counts nothing.

    On a host with several compute nodes (``nodes:``) each node has its
    own tracker, named instead of the host; the host may be named too:
    its nodes' trackers summed (for when which node holds which guest is
    the scheduler's choice), and its nodes not named then are not checked
    one by one.
    """

    name = 'tracker'
    order = 30
    summary = "What each host's resource tracker counts."
    shape = ('{host: flavor | [flavor, ...] | {vcpus_used: int, '
             'memory_mb_used: int, local_gb_used: int, cells: {cell id: '
             '{cpu_usage: int, memory_usage: int}}}}')
    example = 'tracker: {src: pin2, dst: pin2b}'

    def parse(self, check, value, scenario, state):
        return {host: _read(check, counted, scenario, host)
                for host, counted in reading.by_provider(
                    check, value, scenario, whole_hosts=True)}

    def check(self, want, snap, scenario):
        problems = []
        providers = sorted(reading.providers(scenario))
        whole = {name: nodes for name, nodes in
                 reading.multi_node_hosts(scenario).items()
                 if name in want and name not in providers}
        summed = {node for nodes in whole.values() for node in nodes}
        for host in providers:
            if host not in want and (
                    host in summed or host not in snap.trackers
                    and host not in scenario.hosts):
                # A node not named that has no record (removed, or not
                # come yet) counts nothing; one whose host is named is
                # counted with its host's.
                continue
            problems += self._one(host, want[host] if host in want
                                  else _nothing(), snap)
        for name, nodes in sorted(whole.items()):
            problems += self._summed(name, nodes, want[name], snap)
        return problems

    def _one(self, host, want, snap):
        tracker = snap.trackers.get(host)
        if tracker is None:
            return [Problem(self.name, host, want, None,
                            'tracker of %s: no compute node record' % host)]
        got = {key: getattr(tracker, key) for key in TRACKER_KEYS}
        if 'cells' in want.get('exact', {}):
            got['cells'] = {cell.id: {'cpu_usage': cell.cpu_usage,
                                      'memory_usage': cell.memory_usage}
                            for cell in tracker.cells}
        want, got = _compared(want, got, [snap.providers.get(host)])
        if want == got:
            return []
        return [Problem(self.name, host, want, got, 'tracker of %s: %s' % (
            host, _wrong(want, got)))]

    def _summed(self, host, nodes, want, snap):
        """The trackers of a multi-node ``host``'s nodes, summed."""
        got = {key: 0 for key in TRACKER_KEYS}
        counted = []
        for node in nodes:
            tracker = snap.trackers.get(node)
            if tracker is None:
                continue
            for key in TRACKER_KEYS:
                got[key] += getattr(tracker, key)
            counted.append(snap.providers.get(node))
        want, got = _compared(want, got, counted)
        if want == got:
            return []
        return [Problem(self.name, host, want, got,
                        'trackers of %s\'s nodes (%s), summed: %s' % (
                            host, ', '.join(nodes), _wrong(want, got)))]


def _nothing():
    """What a host not named counts: no guest."""
    return {'guests': {key: 0 for key in TRACKER_KEYS}}


def _read(check, value, scenario, field):
    # {} is "nothing", as the docstring says, not "check no key".
    if value in (None, 0) or value == {}:
        return _nothing()
    if isinstance(value, (str, list)):
        flavors = reading.flavors(check, value, scenario, field)
        return {'guests': {
            'vcpus_used': sum(f.vcpus for f in flavors),
            'memory_mb_used': sum(f.ram for f in flavors),
            'local_gb_used': sum(f.disk + f.ephemeral for f in flavors)}}
    check.mapping(value, field)
    check.keys(value, TRACKER_KEYS + ('cells',), field=field)
    exact = {key: check.integer(value[key], '%s.%s' % (field, key),
                                minimum=0)
             for key in value if key != 'cells'}
    if 'cells' in value:
        exact['cells'] = {}
        for cell, usage in check.mapping(value['cells'],
                                         field + '.cells').items():
            where = '%s.cells.%s' % (field, cell)
            check.integer(cell, where, minimum=0)
            check.mapping(usage, where)
            check.keys(usage, CELL_KEYS, field=where)
            exact['cells'][cell] = {
                key: check.integer(n, '%s.%s' % (where, key), minimum=0)
                for key, n in usage.items()}
    return {'exact': exact}


def _compared(want, got, providers):
    """``(want, got)``: guests plus what is reserved, or the fields named.

    The tracker counts its host's reserved memory and disk as used;
    Placement's inventory (of ``providers``, ``None`` for a node with
    none) says how much is reserved.
    """
    if 'guests' not in want:
        want = want['exact']
        got_cells = got.get('cells')
        got = {key: got[key] for key in want if key != 'cells'}
        if 'cells' in want:
            # The cells and fields named only.
            cells = got_cells or {}
            got['cells'] = {cell: {key: cells.get(cell, {}).get(key)
                                   for key in fields}
                            for cell, fields in want['cells'].items()}
        return want, got
    want = dict(want['guests'])
    for rp in providers:
        inventories = rp.inventories if rp is not None else {}
        want['memory_mb_used'] += inventories.get('MEMORY_MB', {}).get(
            'reserved', 0)
        want['local_gb_used'] += inventories.get('DISK_GB', {}).get(
            'reserved', 0)
    return want, got


def _wrong(want, got):
    return ', '.join('%s expected %s, got %s' % (key, want[key], got[key])
                     for key in TRACKER_KEYS + ('cells',)
                     if key in want and want[key] != got[key])


CHECK = Tracker()
