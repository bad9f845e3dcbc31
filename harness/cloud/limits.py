"""Keystone's unified limits for a cloud (a scenario's ``limits:``).

Composed from Nova's own ``UnifiedLimitsFixture``, which stands in for the
Keystone calls both oslo.limit and Nova's ``nova.limit.utils`` make (the
registered limits, and whether an unregistered resource is enforced):
each limit is one registered limit, every project's default, as an
operator creates it with ``openstack registered limit create``.
"""

import fixtures

from nova.tests import fixtures as nova_fixtures


class UnifiedLimits(fixtures.Fixture):
    """Registered limits ``{resource name: limit}`` in Keystone's place."""

    def __init__(self, limits):
        super().__init__()
        self.limits = dict(limits)

    def _setUp(self):
        # Nova keeps its identity client for the life of the process (Nova's
        # own TestCase resets it): this cloud's stand-in, and none after.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.limit.utils.IDENTITY_CLIENT', None))
        keystone = self.useFixture(nova_fixtures.UnifiedLimitsFixture())
        for name, limit in sorted(self.limits.items()):
            keystone.create_registered_limit(resource_name=name,
                                             default_limit=limit)
