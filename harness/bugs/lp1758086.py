"""LP#1758086 put back into Nova: vGPUs of the first GPU provider only.

Its reintroduction fixture, for ``harness reproduce 1758086``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1758086``;
the bug's story and scenario are in ``lp1758086.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class MdevsOfTheFirstProviderOnly(base.Reintroduction):
    """LP#1758086 as it was: one GPU provider's allocation honoured.

    Fixed by 55a36f8f6a04388cfe5e845c7cd30d7c41cb4b66 ("Support multiple
    allocations for vGPUs"), first released in Nova 33.0.0.
    ``LibvirtDriver._allocate_mdevs`` took the first entry of the guest's
    VGPU allocations (``_vgpu_allocations``, one per GPU provider) and
    created or found mediated devices for it alone, warning that libvirt
    supported one allocation; the fix loops over every entry.

    This fixture makes ``_vgpu_allocations``, whose only caller is
    ``_allocate_mdevs``, return that first entry alone, as the driver
    used it before the fix.
    """

    def _setUp(self):
        from nova.virt.libvirt import driver

        real = driver.LibvirtDriver._vgpu_allocations

        def first_only(drv, allocations):
            found = real(drv, allocations)
            return dict(list(found.items())[:1])

        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.driver.LibvirtDriver._vgpu_allocations',
            first_only))
