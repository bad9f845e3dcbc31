"""LP#2115905 put back into Nova: a held device's provider deleted while used.

Its reintroduction fixture, for ``harness reproduce 2115905``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 2115905``;
the bug's story and scenario are in ``lp2115905.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class HeldDeviceProviderNotKept(base.Reintroduction):
    """LP#2115905 as it was: no inventory kept for a held, removed device.

    Fixed by 4495f1f019ccaa0067121d8f5b367140aa9cb7ae ("[pci]Keep used dev
    in Placement regardless of dev_spec"). The fix added
    ``PciResourceProvider._adjust_for_removals_and_held_devices``, called
    from ``update_provider_tree``: a device provider whose devices left
    ``[pci] device_spec`` but still have allocations keeps as much
    inventory as is allocated (its resource class and traits recovered
    from Placement), and goes away at a later periodic. Before it, the
    provider of such a device had no device left to count and was
    deleted from the provider tree, which Placement refuses while the
    guest's allocation is on it.

    This fixture makes that adjustment do nothing, so the provider's
    inventory is its devices' count again, as before the fix.
    """

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.pci_placement_translator.PciResourceProvider.'
            '_adjust_for_removals_and_held_devices',
            lambda rp, provider_tree, rp_rc_usage: None))
