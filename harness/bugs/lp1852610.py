"""LP#1852610 put back into Nova: a service delete ignores migrations.

Its reintroduction fixture, for ``harness reproduce 1852610``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1852610``;
the bug's story and scenarios are in ``lp1852610.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ServiceDeleteIgnoresMigrations(base.Reintroduction):
    """LP#1852610 as it was: a resize's source service could be deleted.

    Fixed by 92fed026103b47fa2a76ea09204a4ba24c21e191 ("Block deleting
    compute services with in-progress migrations", master, Ussuri). The
    fix added ``ServiceController._assert_no_in_progress_migrations``
    (nova/api/openstack/compute/services.py), called by ``delete`` for
    the service's compute nodes: a 409 when
    ``MigrationList.get_in_progress_by_host_and_node`` finds any.

    This fixture makes that check pass again; the rest of the delete
    (the instance count of LP#1763183, the providers, the host mapping,
    the service) is today's.
    """

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.compute.services.ServiceController.'
            '_assert_no_in_progress_migrations',
            staticmethod(lambda context, service_id, compute_nodes: None)))
