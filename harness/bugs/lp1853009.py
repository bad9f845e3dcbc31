"""LP#1853009 put back into Nova: an orphan compute node deleted by host-blind
delete.

Its reintroduction fixture, for ``harness reproduce 1853009``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1853009``;
the bug's story and scenarios are in ``lp1853009.yaml`` next to it.
"""

import fixtures

from nova.db.main import api as db

from harness.bugs import base


class OrphanDeleteIgnoresOwner(base.Reintroduction):
    """LP#1853009 as it was: a compute node deleted whoever owns it now.

    Fixed by a8492e88783b40f6dc61888fada232f0d00d6acf ("Prevent deletion
    of a compute node belonging to another host", master; Closes-Bug), with
    32676a9f45807ea8770dc7bdff1e859673af1b61 ("Clear rebalanced compute
    nodes from resource tracker", Partial-Bug) and
    2bb4527228c8e6fa4a1fa6cfbe80e8790e4e0789 ("Invalidate provider tree
    when compute node disappears", Related-Bug).

    a8492e88 gave ``db.compute_node_delete`` a ``constraint`` argument,
    which ``ComputeNode.destroy`` sets to the host the object was read
    with, so that the orphan clean-up of ``update_available_resource``
    deletes nothing once another service has taken the node over (the
    manager then only forgets the node). Before it, the delete went by the
    record's id alone. This fixture drops the constraint again (the
    function's only caller is ``ComputeNode.destroy``).

    32676a9f added ``ResourceTracker.clean_compute_node_cache``, called at
    the start of the periodic, to drop cached nodes whose records are no
    longer the service's; 2bb45272 made it drop their providers from the
    report client's cache too. Before them, neither happened: this fixture
    makes that method do nothing. Everything else runs as installed.
    """

    def _setUp(self):
        real_delete = db.compute_node_delete

        def compute_node_delete(context, compute_id, constraint=None):
            return real_delete(context, compute_id)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.db.main.api.compute_node_delete', compute_node_delete))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            'clean_compute_node_cache',
            lambda tracker, compute_nodes_in_db: None))
