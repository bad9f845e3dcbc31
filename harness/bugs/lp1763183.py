"""LP#1763183 put back into Nova: a service delete ignores hosted instances.

Its reintroduction fixture, for ``harness reproduce 1763183``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1763183``;
the bug's story and scenarios are in ``lp1763183.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ServiceDeleteIgnoresInstances(base.Reintroduction):
    """LP#1763183 as it was: a compute hosting instances could be deleted.

    Fixed by 42f62f1ed2ad76829eb9d40a8b9646a523f6381f ("Block deleting
    compute services which are hosting instances", master, Rocky). The fix
    added to ``ServiceController.delete`` (nova/api/openstack/compute/
    services.py) a count of the instances on the service's host
    (``InstanceList.get_count_by_hosts``) and a 409 when it is not zero.

    This fixture makes that count read zero again, for the services API
    only (its module's ``objects`` is wrapped; every other caller of
    ``get_count_by_hosts`` is untouched). The rest of the delete is
    today's: the compute node records, their providers with cascade (the
    instances' allocations too), the host mapping and the service go.
    """

    def _setUp(self):
        from nova.api.openstack.compute import services
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.compute.services.objects',
            _Objects(services.objects)))


class _Objects(object):
    """``nova.objects`` as the services API sees it, counting no instance."""

    def __init__(self, real):
        self._real = real
        self.InstanceList = _NoInstances(real.InstanceList)

    def __getattr__(self, name):
        return getattr(self._real, name)


class _NoInstances(object):

    def __init__(self, real):
        self._real = real

    def get_count_by_hosts(self, context, hosts):
        return 0

    def __getattr__(self, name):
        return getattr(self._real, name)
