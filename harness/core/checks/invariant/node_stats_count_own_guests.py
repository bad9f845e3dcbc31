"""``node_stats_count_own_guests``: each node's stats count its guests."""

from harness.core.checks import base
from harness.core.problems import Problem
from harness.core import records


class NodeStatsCountOwnGuests(base.Invariant):
    """Each compute node's ``stats`` count exactly the guests on it.

    The stats the resource tracker saves on each compute node record
    (``nova.compute.stats.Stats``: ``num_instances``, ``num_vm_<state>``,
    ``num_task_<state>``, ``num_os_type_<type>``, ``num_proj_<project>``,
    ``io_workload``), which the scheduler's filters and weighers read
    (``NumInstancesFilter``, ``IoOpsFilter``, ``IoOpsWeigher``), equal
    the same counts over the guests the cell database places on that node
    (``instance.host`` and ``instance.node``; deleted and
    shelved-offloaded guests do not count), and no other node's.

    Checked where Nova's design says they must hold: after
    ``update_available_resource`` on every running compute (the snapshot
    ``periodics_idempotent`` takes on a copy of the cloud, after every
    step; nothing is checked where that invariant does not run). Between
    periodics Nova lags by design and nothing is checked: the
    tracker updates a guest's counts only when it claims it, frees it or
    is told its state changed (``ResourceTracker.update_usage``), so a vm
    or task state that changed since (a boot that went from building to
    active, any move's task states) and a guest that moved in or out
    (a migration's claim does not count the guest on the destination; the
    source keeps counting it) show at the host's next periodic, which
    clears the stats and counts the node's guests again
    (``_update_available_resource``). A step that ran the periodic itself
    is no exception: work that reaches the host after it (a build cast
    to a compute that restarts) changes states again. Nodes whose host is
    not running,
    deleted records and nodes Placement has not caught up with yet
    (``periodics_idempotent``'s windows) are left out.
    """

    name = 'node_stats_count_own_guests'
    # After periodics_idempotent, which takes the snapshot it reads.
    order = 55
    summary = ("Each compute node's stats count exactly the guests the "
               "database places on it, after its periodic.")
    honours = ('periodics_idempotent',)

    def check(self, context):
        if context.after_periodics is None:
            return []
        pending = set(context.windows.get('periodics_idempotent') or ())
        return node_stats_count_own_guests(
            context.after_periodics, context.running, pending,
            'after update_available_resource on every compute')


def node_stats_count_own_guests(snap, hosts, skip_nodes=(), when=''):
    """Problems for the live nodes of ``hosts`` whose stats miscount."""
    problems = []
    instances = list(snap.instances.values())
    names = {inst.uuid: name for name, inst in snap.instances.items()}
    for node_name, node in sorted(snap.nodes.items()):
        if node.deleted or node.host not in hosts or node_name in skip_nodes:
            continue
        want = records.count_guests(instances, node)
        got = records.counted_stats(node.stats)
        if want == got:
            continue
        guests = sorted('%s (%s/%s)' % (names[inst.uuid], inst.vm_state,
                                        inst.task_state)
                        for inst in instances
                        if inst.host == node.host and inst.node == node_name)
        wrong = ', '.join('%s %d, expected %d' % (
            key, got.get(key, 0), want.get(key, 0))
            for key in sorted(set(want) | set(got))
            if want.get(key, 0) != got.get(key, 0))
        problems.append(Problem(
            'node_stats_count_own_guests', 'node %s' % node_name, want, got,
            text='node_stats_count_own_guests: the stats of node %s%s: '
            '%s; the database places there: %s' % (
                node_name, ' ' + when if when else '', wrong,
                ', '.join(guests) or 'no guest')))
    return problems


CHECK = NodeStatsCountOwnGuests()
