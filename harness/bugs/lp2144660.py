"""LP#2144660 put back into Nova: the claim ignores where the devices are.

Its reintroduction fixture, for ``harness reproduce 2144660``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 2144660``;
the bug's story and scenario are in ``lp2144660.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ClaimSortsCellsWithoutDevices(base.Reintroduction):
    """LP#2144660 as it was: a claim without PCI requests had no pci_stats.

    Fixed by 76d06e115b5339fc1400086d66a8f1366cb610f9 ("Fix NUMA cell
    sorting for non-PCI VMs with pack strategy"), first released in Nova
    34.0.0. ``Claim._test_numa_topology`` passed the host's ``pci_stats``
    to ``hardware.numa_fit_instance_to_host`` only when the guest asked
    for PCI devices; without them the fit skipped the sort that moves
    cells holding devices to the end for a guest that asks for none, and
    the claim chose its cells by usage alone. The fix passes
    ``pci_stats`` always.

    This fixture gives the claim's module a ``hardware`` whose
    ``numa_fit_instance_to_host`` drops ``pci_stats`` when there are no
    PCI requests, as the claim did before the fix; the scheduler's own
    calls (its NUMATopologyFilter) are untouched.
    """

    def _setUp(self):
        from nova.virt import hardware

        class ClaimsHardware(object):
            def __getattr__(self, name):
                return getattr(hardware, name)

            @staticmethod
            def numa_fit_instance_to_host(*args, **kwargs):
                if not kwargs.get('pci_requests'):
                    kwargs['pci_stats'] = None
                return hardware.numa_fit_instance_to_host(*args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.claims.hardware', ClaimsHardware()))
