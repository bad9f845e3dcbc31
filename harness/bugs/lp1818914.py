"""LP#1818914 put back into Nova: confirm frees the source only via a periodic.

Its reintroduction fixture, for ``harness reproduce 1818914``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1818914``;
the bug's story and scenarios are in ``lp1818914.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class DropMoveClaimOnlyForTrackedMigrations(base.Reintroduction):
    """LP#1818914 as it was: confirm freed the source only via a periodic.

    Fixed by ad9f37350ad1f4e598a9a5df559b9160db1a11c1 "Update usage in
    RT.drop_move_claim during confirm resize" (master, Stein, 2019-03-07;
    Closes-Bug: #1818914; Nova's functional test
    ``test_resize_confirm_assert_hypervisor_usage_no_periodics`` guards
    it). Before it, ``drop_move_claim`` subtracted the flavor's usage only
    inside ``if instance['uuid'] in self.tracked_migrations:``; for an
    instance the tracker did not track as a migration it only removed the
    instance from ``tracked_instances``. The source of a resize tracks the
    outbound migration only once its periodic has run, so confirm, which
    passes the old flavor explicitly, freed nothing on the source's
    compute node record until the next ``update_available_resource``.
    The fix moved ``if instance_type is not None:`` (today ``if flavor is
    not None:`` in ``_drop_move_claim``) out of that branch.

    This fixture restores the guard: when the instance is not in
    ``tracked_migrations``, ``_drop_move_claim`` is called with no flavor,
    which skips exactly the subtraction (and its save), while the
    bookkeeping after it (popping ``tracked_migrations``, discarding from
    ``tracked_instances``) runs as before.
    """

    def _setUp(self):
        from nova.compute import resource_tracker

        real = resource_tracker.ResourceTracker._drop_move_claim

        def _drop_move_claim(rt, context, instance, nodename, flavor=None,
                             prefix='new_'):
            if instance['uuid'] not in rt.tracked_migrations:
                flavor = None
            return real(rt, context, instance, nodename, flavor=flavor,
                        prefix=prefix)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker._drop_move_claim',
            _drop_move_claim))
