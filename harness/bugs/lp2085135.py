"""LP#2085135 put back into Nova: a service's delete keeps its nodes mapped.

Its reintroduction fixture, for ``harness reproduce 2085135``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 2085135``;
the bug's story and scenarios are in ``lp2085135.yaml`` next to it.
"""

import fixtures

from nova.db.main import api as db
from nova import exception

from harness.bugs import base


class ServiceDeleteKeepsNodesMapped(base.Reintroduction):
    """LP#2085135 as it was: a deleted service's nodes stayed ``mapped``.

    Fixed by 6ab3923ba5f08990d1da053ec2b65ad486bdff32 "Reset the mapped
    field of nodes at service deletion" (c04c94ecfb on master, 33.0.0;
    Closes-Bug: #2085135). ``db.service_destroy`` soft-deletes the
    compute node records of a nova-compute service; the fix sets their
    ``mapped`` flag to 0 in the same update, so that when the compute
    comes back (its periodic undeletes the records) ``nova-manage
    cell_v2 discover_hosts`` maps its host again (the host mapping went
    with the service). Before it the flag stayed as it was, so
    ``discover_hosts`` skipped the records and the host stayed unmapped.

    This fixture puts each record's flag back as it was before the
    delete, right after ``service_destroy`` (the function's callers are
    ``Service.destroy``); everything else runs as installed.
    """

    def _setUp(self):
        real_destroy = db.service_destroy

        def service_destroy(context, service_id):
            service = db.service_get(context, service_id)
            try:
                nodes = db.compute_node_get_all_by_host(
                    context, service['host'])
            except exception.ComputeHostNotFound:
                nodes = []
            real_destroy(context, service_id)
            deleted = context.elevated(read_deleted='yes')
            for node in nodes:
                db.compute_node_update(deleted, node['id'],
                                       {'mapped': node['mapped']})

        self.useFixture(fixtures.MonkeyPatch(
            'nova.db.main.api.service_destroy', service_destroy))
