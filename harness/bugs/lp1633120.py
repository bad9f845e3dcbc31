"""LP#1633120 put back into Nova: a held device forgotten with its config.

Its reintroduction fixture, for ``harness reproduce 1633120``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1633120``;
the bug's story and scenario are in ``lp1633120.yaml`` next to it.
"""

import sys

from harness.bugs import base


class HeldDeviceForceRemoved(base.Reintroduction):
    """LP#1633120 as it was: an allocated device removed by force.

    Fixed by 26c41eccade6412f61f9a8721d853b545061adcc ("PCI: do not force
    remove allocated devices"). When a device the PCI tracker knows is no
    longer reported (it left ``[pci] device_spec``), ``_set_hvdevs`` asks
    it to ``remove()``; a claimed or allocated device refuses. Before the
    fix, ``_set_hvdevs`` then set its status to ``removed`` anyway, so the
    tracker's next save deleted its record while a guest held it; since
    the fix it keeps the device (``continue``) until its guest is gone.

    This fixture turns that refusal back into the forced removal, for
    ``_set_hvdevs``'s call only: the device's status becomes ``removed``
    and ``_set_hvdevs`` goes on as it does after a removal (an allocated
    device is in no free pool, so no pool changes, as before the fix).
    """

    def _setUp(self):
        from nova import exception
        from nova.objects import fields
        from nova.objects import pci_device
        from nova.pci import manager

        real = pci_device.PciDevice.remove
        manager_file = manager.__file__
        refused = (exception.PciDeviceInvalidStatus,
                   exception.PciDeviceInvalidOwner)

        def remove(device):
            try:
                return real(device)
            except refused:
                caller = base.caller_outside_patch(sys._getframe(1))
                if caller.co_filename != manager_file or \
                        caller.co_name != '_set_hvdevs':
                    raise
                device.status = fields.PciDeviceStatus.REMOVED

        base.patch_method(self, pci_device.PciDevice, 'remove', remove)
