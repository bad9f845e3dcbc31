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
from nova.pci import stats as pci_stats
from nova.virt import hardware

from harness.core import capacity

#: The two views a device request is put to (see ``device_claim_test``).
CLAIM = "the compute's claim"
SCHEDULER = "the scheduler's PciPassthroughFilter"

#: The request's id (a UUID, as ``get_pci_requests_from_flavor`` makes
#: one): Nova's PCI prefilter names the request groups of a flavor's PCI
#: request ``<request_id>-<index>``; the scheduler's mapping uses it.
REQUEST_ID = 'c0ffee00-0044-4044-8044-000000000044'


def claim_test(cloud, host, node, request):
    """The cells the tracker would give ``request``, or None if it refuses.

    :param request: a ``harness.core.capacity.Request``, or a
        ``DeviceRequest`` (then see ``device_claim_test``).
    :returns: ``{host cell id: pinned CPUs or ()}`` when it fits.
    :raises LookupError: the tracker holds no NUMA topology for ``node``
        (a node it no longer or not yet manages): there is nothing to ask.
    """
    if isinstance(request, capacity.DeviceRequest):
        return device_claim_test(cloud, host, node, request)
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


def device_claim_test(cloud, host, node, request):
    """Whether each view of ``host`` takes a ``DeviceRequest``.

    The flavor alias's request for one device, as the compute's claim
    gets it after the scheduler's allocation (``rp_uuids`` in its spec,
    ``update_pci_request_with_placement_allocations``), for a guest
    without NUMA topology. Put to:

    - the compute's claim: ``Claim._test_pci``, ``support_requests`` on
      the PCI tracker's live stats with no provider mapping;
    - the scheduler's ``PciPassthroughFilter``: ``support_requests`` on
      the pools the compute node record saved (what ``HostState`` reads),
      with the allocation candidate's mapping of the request's group to
      the provider.

    ``support_requests`` applies the request to a deep copy of the stats:
    nothing is claimed, nothing saved.

    :returns: ``{view: whether it takes the request}``.
    :raises LookupError: the compute has no PCI tracker or no record for
        ``node``: there is nothing to ask.
    """
    tracker = cloud.compute(host).manager.rt
    compute_node = tracker.compute_nodes.get(node)
    pci_tracker = tracker.pci_tracker
    if compute_node is None or pci_tracker is None:
        raise LookupError('%s has no PCI tracker for node %s' % (host, node))
    spec = {'vendor_id': request.vendor_id,
            'product_id': request.product_id,
            'dev_type': request.dev_type}
    claimed = objects.InstancePCIRequest(
        count=1, spec=[dict(spec, rp_uuids=request.rp_uuid)],
        alias_name='capacity-probe', request_id=REQUEST_ID)
    scheduled = objects.InstancePCIRequest(
        count=1, spec=[spec], alias_name='capacity-probe',
        request_id=REQUEST_ID)
    topology = None
    if compute_node.numa_topology:
        topology = objects.NUMATopology.obj_from_db_obj(
            compute_node.numa_topology)
    # HostState.pci_stats: the record's pools, the tracker's filter (not
    # used to apply a request; named so that nothing reads the config).
    saved = pci_stats.PciDeviceStats(
        topology, stats=compute_node.pci_device_pools,
        dev_filter=pci_tracker.dev_filter)
    return {
        CLAIM: pci_tracker.stats.support_requests(
            [claimed], provider_mapping=None),
        SCHEDULER: saved.support_requests(
            [scheduled],
            provider_mapping={REQUEST_ID + '-0': [request.rp_uuid]}),
    }
