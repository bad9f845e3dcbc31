"""``one_compute_node_per_consumer``: no consumer spans two compute nodes."""

from harness.core.checks import base
from harness.core.checks import views
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class OneComputeNodePerConsumer(base.Invariant):
    """No consumer holds allocations on two compute nodes.

    No consumer holds allocations against more than one compute node
    tree. Since Queens every move Nova makes with migration-based
    allocations (resize, cold migration, live migration) splits the
    double-up between two consumers: the migration holds the source, the
    instance the destination; a same-host resize puts both consumers on
    one node.

    Written-down exception: an evacuation still in flight (type
    ``evacuation``, status ``accepted``, ``pre-migrating`` or ``done``):
    Nova's evacuate does not use a migration consumer, so the scheduler
    doubles the instance's allocation onto the destination, and the
    source drops its part only when its compute starts again
    (``_destroy_evacuated_instances`` sets the migration ``completed``).
    """

    name = 'one_compute_node_per_consumer'
    order = 30
    summary = 'No consumer holds allocations on more than one compute node.'

    def check(self, context):
        return one_compute_node_per_consumer(context.snapshot)


def one_compute_node_per_consumer(snap):
    problems = []
    nodes = set(snap.compute_nodes())
    for consumer in sorted(snap.allocations):
        held = snap.allocations[consumer]
        roots = sorted({snapshot_mod.root(snap, provider)
                        for provider in held} & nodes)
        if len(roots) < 2:
            continue
        evacuation = views.latest(snap, consumer)
        # The migration names hosts; a host may manage several nodes.
        if (evacuation is not None and evacuation.type == views.EVACUATION
                and evacuation.status in views.EVACUATING
                and {snap.trackers[root].host for root in roots}
                <= {evacuation.source, evacuation.dest}):
            # Written down: an evacuation doubles the instance's allocation
            # until the source compute restarts and cleans up.
            continue
        problems.append(Problem(
            'one_compute_node_per_consumer', consumer,
            text=(
                'one_compute_node_per_consumer: consumer %s holds allocations '
                'against %d compute nodes: %s' % (
                    consumer, len(roots), '; '.join(
                        '%s: %s' % (root, views.fmt(snapshot_mod.held_in(
                            snap, consumer, {root})))
                        for root in roots)))))
    return problems


CHECK = OneComputeNodePerConsumer()
