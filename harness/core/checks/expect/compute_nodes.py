"""``compute_nodes``: each named compute node record, stats included."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import records

#: The record's numbers an expectation may name.
AMOUNTS = ('vcpus', 'vcpus_used', 'memory_mb', 'memory_mb_used', 'local_gb',
           'local_gb_used', 'running_vms')
FIELDS = ('deleted', 'uuid', 'host', 'stats', 'pci_pools',
          'records', 'mapped') + AMOUNTS
#: What picks a PCI pool (``pci_pools``): each is optional but ``count``.
POOL_KEYS = ('vendor_id', 'product_id', 'numa_node', 'tags', 'count',
             'pools')
#: ``uuid: provider``: the record's UUID is the one of the resource
#: provider of the same name (Nova names the node's provider after it).
SAME_AS_PROVIDER = 'provider'


class ComputeNodes(base.Expectation):
    """Each named compute node record, as the cell database holds it.

    Per node (``hypervisor_hostname``; a host's own name, or a node of a
    multi-node host): ``deleted`` (a node whose service was deleted keeps
    its record, deleted; a live record wins over deleted ones), ``uuid``
    (the UUID, or ``provider``: the same as the Placement provider of that
    name), ``host``, the tracker's amounts (``vcpus``, ``vcpus_used``,
    ``memory_mb``, ``memory_mb_used``, ``local_gb``, ``local_gb_used``,
    ``running_vms``) and ``stats``, the counts the resource tracker keeps
    for the scheduler (``nova.compute.stats.Stats``): ``num_instances``,
    ``num_vm_<vm state>``, ``num_task_<task state>`` (``num_task_None``
    for no task), ``num_os_type_<os type>``, ``num_proj_<project ID>``
    and ``io_workload``. The stats are exact over those keys (a count not
    named is 0; Nova leaves a decremented count at 0, which reads as
    absent); other keys of ``stats`` are not checked. ``pci_pools`` are
    the node's PCI device pools (what the scheduler's
    ``PciPassthroughFilter`` reads: the free devices, grouped by vendor,
    product, NUMA cell and tags such as ``dev_type`` and
    ``physical_network``), each named by the keys given (``vendor_id``,
    ``product_id``, ``numa_node``, ``tags``: the tags named must match)
    with the free ``count`` of the pools it names and, with ``pools``, how
    many pools those are (Nova keeps one per provider: LP#2098496 split
    one in two); exact: a pool that no entry names has no free device, and
    no pool is named by two entries. ``records``: how many records of
    the node the table holds, deleted ones included (1: a node deleted
    and brought back is the same record, its id and UUID kept, as Nova
    undeletes it; a record made anew would leave the deleted one next to
    it until ``archive_deleted_rows`` moves it away). ``mapped``: the
    record's flag that ``nova-manage cell_v2 discover_hosts`` saw it
    (``discover_hosts``), which a service's delete resets (LP#2085135).
    ``null`` for a node
    says it has no record at all. Only the nodes and fields named are
    checked. The tracker saves the stats when it claims or frees a guest
    and at its periodic, so vm and task state counts lag until then.
    """

    name = 'compute_nodes'
    order = 90
    summary = ('Each named compute node record: deleted, UUID, amounts '
               'and the stats the scheduler reads.')
    shape = ('{node: null | {deleted: bool, uuid: UUID | provider, host: '
             'host, records: int, mapped: bool, vcpus_used: int, ..., '
             'pci_pools: '
             '[{vendor_id: hex, product_id: hex, numa_node: int, tags: '
             '{tag: value}, count: int, pools: int}], stats: '
             '{num_instances: int, num_vm_<state>: int, '
             'num_task_<state>: int, num_proj_<project>: int, '
             'num_os_type_<type>: int, io_workload: int}}}')
    example = ('compute_nodes: {src: {deleted: false, uuid: provider, '
               'stats: {num_instances: 1, num_vm_active: 1, '
               'num_task_resize_migrated: 1}}}')

    def parse(self, check, value, scenario, state):
        parsed = {}
        for node, want in reading.by_provider(check, value, scenario):
            if want is None:
                parsed[node] = None
                continue
            check.mapping(want, node)
            check.keys(want, FIELDS, field=node)
            parsed[node] = dict(want)
            for flag in ('deleted', 'mapped'):
                if flag in want and not isinstance(want[flag], bool):
                    check.fail('%s.%s' % (node, flag), 'expected true or '
                               'false, got %r' % (want[flag],))
            if 'uuid' in want:
                check.string(want['uuid'], node + '.uuid')
            if 'host' in want:
                check.known(want['host'], scenario.hosts, node + '.host')
            if 'records' in want:
                check.integer(want['records'], node + '.records', minimum=1)
            for key in AMOUNTS:
                if key in want:
                    check.integer(want[key], '%s.%s' % (node, key),
                                  minimum=0)
            if 'stats' in want:
                parsed[node]['stats'] = read_stats(
                    check, want['stats'], node + '.stats')
            if 'pci_pools' in want:
                parsed[node]['pci_pools'] = read_pools(
                    check, want['pci_pools'], node + '.pci_pools')
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for node, wanted in sorted(want.items()):
            record = snap.nodes.get(node)
            if wanted is None or record is None:
                if wanted != record:
                    problems.append(Problem(
                        self.name, node, wanted, record,
                        'compute node %s: expected %s, got %s' % (
                            node, 'no record' if wanted is None else
                            'a record', 'none' if record is None else
                            'a record (%sdeleted)' % (
                                '' if record.deleted else 'not '))))
                continue
            problems += self._node(node, wanted, record, snap)
        return problems

    def _node(self, node, wanted, record, snap):
        wrong = []
        for key in FIELDS:
            if key not in wanted or key in ('stats', 'pci_pools'):
                continue
            expected = wanted[key]
            if key == 'uuid' and expected == SAME_AS_PROVIDER:
                provider = snap.providers.get(node)
                expected = provider.uuid if provider else None
            if getattr(record, key) != expected:
                wrong.append('%s expected %s, got %s' % (
                    key, wanted[key] if expected is None else expected,
                    getattr(record, key)))
        if 'stats' in wanted:
            got = records.counted_stats(record.stats)
            for key in sorted(set(wanted['stats']) | set(got)):
                if wanted['stats'].get(key, 0) != got.get(key, 0):
                    wrong.append('stats %s expected %d, got %d' % (
                        key, wanted['stats'].get(key, 0), got.get(key, 0)))
        if 'pci_pools' in wanted:
            wrong += pool_differences(wanted['pci_pools'], record.pci_pools)
        if not wrong:
            return []
        return [Problem(self.name, node, wanted, record,
                        'compute node %s: %s' % (node, ', '.join(wrong)))]


def read_stats(check, value, field):
    """``{num_...: n, io_workload: n}`` checked; zero counts dropped."""
    check.mapping(value, field)
    counts = {}
    for key, count in value.items():
        if not isinstance(key, str) or not (
                key.startswith('num_') or key == 'io_workload'):
            check.fail('%s.%s' % (field, key), 'unknown stat; expected '
                       'num_instances, num_vm_<state>, num_task_<state>, '
                       'num_os_type_<type>, num_proj_<project> or '
                       'io_workload')
        check.integer(count, '%s.%s' % (field, key), minimum=0)
        if count:
            counts[key] = count
    return counts


def read_pools(check, value, field):
    """``[{vendor_id?, product_id?, numa_node?, tags?, count}]`` checked."""
    pools = []
    for number, pool in enumerate(check.sequence(value, field), 1):
        where = '%s.%d' % (field, number)
        check.mapping(pool, where)
        check.keys(pool, POOL_KEYS, required=('count',), field=where)
        check.integer(pool['count'], where + '.count', minimum=0)
        if 'pools' in pool:
            check.integer(pool['pools'], where + '.pools', minimum=0)
        for key in ('vendor_id', 'product_id'):
            if key in pool:
                check.string(pool[key], '%s.%s' % (where, key))
        if 'numa_node' in pool and pool['numa_node'] is not None:
            check.integer(pool['numa_node'], where + '.numa_node',
                          minimum=0)
        tags = check.mapping(pool.get('tags', {}), where + '.tags')
        parsed = {key: pool[key] for key in POOL_KEYS[:3] if key in pool}
        parsed['tags'] = {str(k): None if v is None else str(v)
                          for k, v in tags.items()}
        parsed['count'] = pool['count']
        if 'pools' in pool:
            parsed['pools'] = pool['pools']
        pools.append(parsed)
    return pools


def _names(entry, pool):
    """Whether ``entry`` (an expected pool) names the node's ``pool``."""
    return all(entry[key] == pool[key] for key in POOL_KEYS[:3]
               if key in entry) and all(
        pool['tags'].get(tag) == value
        for tag, value in entry['tags'].items())


def _shown(pool):
    return '%s:%s cell %s%s' % (
        pool.get('vendor_id', '*'), pool.get('product_id', '*'),
        pool.get('numa_node', '*'), ''.join(
            ' %s=%s' % item for item in sorted(pool['tags'].items())))


def pool_differences(want, pools):
    """What differs between the expected pools and the node's ``pools``."""
    wrong = []
    counts = [0] * len(want)
    found = [0] * len(want)
    for pool in pools:
        named = [number for number, entry in enumerate(want)
                 if _names(entry, pool)]
        if len(named) > 1:
            wrong.append('pci_pools: %s is named by entries %s' % (
                _shown(pool), ', '.join(str(n + 1) for n in named)))
        elif named:
            counts[named[0]] += pool['count']
            found[named[0]] += 1 if pool['count'] else 0
        elif pool['count']:
            wrong.append('pci_pools: %s has %d free, named by no entry' % (
                _shown(pool), pool['count']))
    for entry, got, split in zip(want, counts, found):
        if entry['count'] != got:
            wrong.append('pci_pools %s expected %d free, got %d' % (
                _shown(entry), entry['count'], got))
        if 'pools' in entry and entry['pools'] != split:
            wrong.append('pci_pools %s expected %d pool(s) with free '
                         'devices, got %d'
                         % (_shown(entry), entry['pools'], split))
    return wrong


CHECK = ComputeNodes()
