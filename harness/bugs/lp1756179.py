"""LP#1756179 put back into Nova: a service delete keeps the providers.

Its reintroduction fixture, for ``harness reproduce 1756179``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1756179``;
the bug's story and scenarios are in ``lp1756179.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ServiceDeleteKeepsProviders(base.Reintroduction):
    """LP#1756179 as it was: a service delete left the providers behind.

    Fixed by 589c495c1ae62129e20ab5e2641e330541eee01f ("Cleanup RP and HM
    records while deleting a compute service.", master, Rocky). The fix
    made ``ServiceController.delete`` (nova/api/openstack/compute/
    services.py) call ``delete_resource_provider(context, compute_node,
    cascade=True)`` on its ``placementclient`` for each of the host's
    compute nodes, and destroy the host mapping.

    This fixture puts back the provider half: the services API's
    ``placementclient`` deletes no provider (nor anything the cascade
    would have freed). The host mapping is still destroyed as today (not
    accounting), and every other user of the report client (the compute's
    own periodic, which deletes orphan nodes' providers) is untouched.
    """

    def _setUp(self):
        from nova.scheduler.client import report
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.compute.services.ServiceController.'
            'placementclient',
            property(lambda controller: _KeepsProviders(
                report.report_client_singleton()))))


class _KeepsProviders(object):
    """The report client, deleting no provider."""

    def __init__(self, real):
        self._real = real

    def delete_resource_provider(self, context, compute_node, cascade=False):
        return None

    def __getattr__(self, name):
        return getattr(self._real, name)
