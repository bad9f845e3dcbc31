"""Ask a host's resource tracker whether it takes a request, as Nova does.

The capacity probe (``harness.core.checks.invariant.capacity_probe``)
derives requests from Placement's view (``harness.core.capacity``) and
asks here whether the host would take each one. The answer is Nova's
own: the flavor goes through ``hardware.numa_get_constraints`` (what the
API and the scheduler turn a flavor into), and the NUMA topology through
``hardware.numa_fit_instance_to_host`` against the topology the tracker
holds for the node, with the limits the scheduler's
``NUMATopologyFilter`` passes (the node's CPU and RAM allocation ratios),
which is the test ``Claim._test_numa_topology`` makes when the compute
claims (``ResourceTracker.instance_claim``). The tracker's topology is
decoded into a new object (``NUMATopology.obj_from_db_obj``, as the claim
does), so asking changes nothing: no claim is made, nothing is saved.
"""

from nova import objects
from nova.virt import hardware


def claim_test(cloud, host, node, request):
    """The cells the tracker would give ``request``, or None if it refuses.

    :param request: a ``harness.core.capacity.Request``.
    :returns: ``{host cell id: pinned CPUs or ()}`` when it fits.
    :raises LookupError: the tracker holds no NUMA topology for ``node``
        (a node it no longer or not yet manages): there is nothing to ask.
    """
    tracker = cloud.compute(host).manager.rt
    compute_node = tracker.compute_nodes.get(node)
    if compute_node is None or not compute_node.numa_topology:
        raise LookupError('%s holds no NUMA topology for node %s'
                          % (host, node))
    host_topology = objects.NUMATopology.obj_from_db_obj(
        compute_node.numa_topology)
    flavor = objects.Flavor(
        name='capacity-probe', flavorid='capacity-probe',
        vcpus=request.vcpus, memory_mb=request.memory_mb, root_gb=0,
        ephemeral_gb=0, swap=0, extra_specs=request.specs)
    image_meta = objects.ImageMeta.from_dict({'properties': {}})
    wanted = hardware.numa_get_constraints(flavor, image_meta)
    limits = objects.NUMATopologyLimits(
        cpu_allocation_ratio=compute_node.cpu_allocation_ratio,
        ram_allocation_ratio=compute_node.ram_allocation_ratio)
    fitted = hardware.numa_fit_instance_to_host(
        host_topology, wanted, provider_mapping=None, limits=limits)
    if fitted is None:
        return None
    return {cell.id: tuple(sorted((cell.cpu_pinning or {}).values()))
            for cell in fitted.cells}
