"""LP#1986838 put back into Nova: a failed PCI claim logged, not raised.

Its reintroduction fixture, for ``harness reproduce 1986838``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1986838``;
the bug's story and scenario are in ``lp1986838.yaml`` next to it.
"""

import fixtures

from nova import exception
from nova.pci import stats

from harness.bugs import base


class PartialPciClaimIgnored(base.Reintroduction):
    """LP#1986838 as it was: requests checked alone, a failed claim ignored.

    Fixed by 2b447b7236f95752d00ebcee8c32cfef4850cf5d ("Trigger
    reschedule if PCI consumption fail on compute"), which changed two
    methods of ``PciDeviceStats``:

    - ``support_requests`` (the scheduler's PciPassthroughFilter) applies
      all of a boot's requests to a copy of the pools; before, it checked
      that each request alone had a matching pool;
    - ``consume_requests`` (the compute's claim) raises
      ``PciDeviceRequestFailed`` when a request finds no pool, after
      putting back what it took; before, it returned None there, and the
      claim went on with no device.

    This fixture restores both: ``support_requests`` filters the pools per
    request, and a ``PciDeviceRequestFailed`` from ``consume_requests``
    becomes None again.
    """

    def _setUp(self):
        real_consume = stats.PciDeviceStats.consume_requests

        def support_requests(pci_stats, requests, provider_mapping,
                             numa_cells=None):
            return all(
                pci_stats._filter_pools(
                    pci_stats.pools, request, numa_cells,
                    rp_uuids=pci_stats._get_rp_uuids_for_request(
                        request=request, provider_mapping=provider_mapping))
                for request in requests)

        def consume_requests(pci_stats, *args, **kwargs):
            try:
                return real_consume(pci_stats, *args, **kwargs)
            except exception.PciDeviceRequestFailed:
                return None

        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.stats.PciDeviceStats.support_requests',
            support_requests))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.stats.PciDeviceStats.consume_requests',
            consume_requests))
