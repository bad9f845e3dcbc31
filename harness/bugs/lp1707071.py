"""LP#1707071 put back into Nova: each compute's periodic "heals" allocations.

Its reintroduction fixture, for ``harness reproduce 1707071``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 1707071``;
the bug's story and scenarios are in ``lp1707071.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class ComputesHealInstanceAllocations(base.Reintroduction):
    """LP#1707071 as it was: each compute's periodic "heals" allocations.

    Fixed by 5390210a4fa46e2af6b6aec9b41c03147b52760c ("Remove provider
    allocs in confirm/revert resize", Fixes-bug) on top of
    09e169bd7a74deaf52d9d6d38ff37799cab24157 ("placement: refactor healing
    of allocations in RT", Partial-bug), both master, Pike; Queens then
    gave the source side of a move to the migration record. Before
    09e169bd, ``update_available_resource`` on every compute rewrote
    Placement from its own view: each instance the host tracks got its
    allocations PUT as its flavor against this compute node alone (a PUT
    replaces everything the consumer holds), and every consumer holding
    allocations against the node that the host did not track as an
    instance had all of its allocations DELETEd. During a move both hosts
    see the instance, so source and destination overwrote each other
    ("compute nodes fight over allocations"). 09e169bd made the heal
    delete only for local-deleted instances and write nothing else; that
    policy is today's ``ResourceTracker._remove_deleted_instances_allocations``
    (the method 09e169bd introduced).

    This fixture replaces exactly that method, called at the same point of
    the periodic with the same arguments, by the old heal: a PUT of
    ``{this node: flavor}`` for each tracked instance whose allocations
    differ, then a DELETE of each untracked instance consumer against the
    node. Migration consumers are left alone: they did not exist before
    the fix (the old heal only knew instances), and keeping them makes the
    patch no wider than the fight it restores. Nothing else changes.
    """

    def _setUp(self):
        from nova.scheduler import utils as scheduler_utils

        def heal(rt, context, cn, migrations, instance_by_uuid):
            client = rt.reportclient
            migration_uuids = {m.uuid for m in migrations if 'uuid' in m}
            for uuid in sorted(rt.tracked_instances):
                instance = instance_by_uuid.get(uuid)
                if instance is None:
                    continue
                mine = {cn.uuid: {'resources': scheduler_utils.
                                  resources_from_flavor(instance,
                                                        instance.flavor)}}
                current = client.get_allocs_for_consumer(context, uuid)
                held = {rp: {'resources': alloc['resources']}
                        for rp, alloc in current['allocations'].items()}
                if held != mine:
                    client.put_allocations(context, uuid, {
                        'allocations': mine,
                        'consumer_generation': current.get(
                            'consumer_generation'),
                        'project_id': instance.project_id,
                        'user_id': instance.user_id})
            against_node = client.get_allocations_for_resource_provider(
                context, cn.uuid).allocations
            for consumer in sorted(against_node):
                if (consumer not in rt.tracked_instances
                        and consumer not in migration_uuids):
                    client.delete_allocation_for_instance(
                        context, consumer, force=True)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.'
            '_remove_deleted_instances_allocations', heal))
