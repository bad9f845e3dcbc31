"""The cloud digest's canonical text (``harness.cloud.digest._Walk``).

Nova-free: the walk of plain values, as ``digest.of`` walks the cloud's.
"""

import copy
import datetime
import itertools
import sqlite3
import types

import fixtures

from harness.cloud import digest
from harness import testing

A = '0f8fad5b-d9cb-469f-a165-70867728950e'
B = '7c9e6679-7425-40de-944b-e07fc1f90ae7'
C = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'
T0 = datetime.datetime(2026, 1, 1, 0, 0, 10, 17)


def of(*values, times=True):
    walk = digest._Walk(times=times)
    for value in values:
        walk.walk(value)
    return walk.hexdigest()


class Thing(object):
    def __init__(self, **state):
        vars(self).update(state)


class TestRenaming(testing.TestCase):

    def test_uuids_renamed_in_order_of_first_appearance(self):
        # Two runs that drew other uuids for the same course of events.
        self.assertEqual(of({'instance': A, 'migration': B, 'of': A}),
                         of({'instance': C, 'migration': A, 'of': C}))

    def test_which_ids_are_the_same_one_is_state(self):
        self.assertNotEqual(of({'instance': A, 'migration': B, 'of': A}),
                            of({'instance': A, 'migration': B, 'of': B}))

    def test_uuids_inside_text_and_reservation_ids_renamed(self):
        self.assertEqual(of('req-%s on r-abcd1234' % A),
                         of('req-%s on r-zz9y8x7w' % B))
        self.assertNotEqual(of(['r-abcd1234', 'r-abcd1234']),
                            of(['r-abcd1234', 'r-zz9y8x7w']))

    def test_anything_else_in_text_counts(self):
        self.assertNotEqual(of({'vm_state': 'active'}),
                            of({'vm_state': 'resized'}))
        self.assertNotEqual(of([1, 2]), of([2, 1]))
        self.assertNotEqual(of([1]), of((1,)))
        self.assertNotEqual(of(1), of('1'))


class TestTimes(testing.TestCase):

    def test_microseconds_the_clock_ticked_more_are_not_state(self):
        # A run that asked the virtual clock more often before: every
        # time a few microseconds later, in the same order.
        shift = datetime.timedelta(microseconds=6)
        self.assertEqual(
            of({'created': T0, 'updated': str(T0 + shift * 3)}),
            of({'created': T0 + shift,
                'updated': str(T0 + shift * 5)}))

    def test_order_of_times_is_state(self):
        later = T0 + datetime.timedelta(microseconds=3)
        self.assertNotEqual(of([T0, later]), of([later, T0]))

    def test_a_second_or_more_apart_is_state(self):
        self.assertNotEqual(of([T0]), of([T0 + datetime.timedelta(1)]))
        self.assertNotEqual(of([T0]),
                            of([T0 + datetime.timedelta(seconds=1)]))

    def test_without_times_only_the_rest_is_compared(self):
        # The bound benchmarks/state_spread.py takes: states alike but
        # for their times (here their order) digest alike, and nothing
        # else is left out.
        later = T0 + datetime.timedelta(seconds=5)
        self.assertEqual(of([T0, later], times=False),
                         of([later, T0], times=False))
        self.assertNotEqual(of([T0, later]), of([later, T0]))
        self.assertNotEqual(of([T0, 'active'], times=False),
                            of([T0, 'resized'], times=False))

    def test_guest_xml_creation_time_is_wall_clock_not_state(self):
        xml = '<nova:creationTime>%s</nova:creationTime><memory>%d</memory>'
        self.assertEqual(of(xml % ('2026-12-06 15:49:57', 512)),
                         of(xml % ('2026-12-06 15:50:05', 512)))
        self.assertNotEqual(of(xml % ('2026-12-06 15:49:57', 512)),
                            of(xml % ('2026-12-06 15:49:57', 1024)))


class TestObjects(testing.TestCase):

    def test_objects_by_class_and_state(self):
        self.assertEqual(of(Thing(a=1, b=[A])), of(Thing(a=1, b=[B])))
        self.assertNotEqual(of(Thing(a=1)), of(Thing(a=2)))

    def test_sharing_is_state_and_cycles_end(self):
        shared = [1]
        self.assertNotEqual(of([shared, shared]), of([[1], [1]]))
        loop = Thing()
        loop.me = loop
        self.assertEqual(of(loop), of(loop))

    def test_sets_whatever_their_order(self):
        self.assertEqual(of({A, B, 'x'}), of({'x', C, A}))
        self.assertNotEqual(of({'x', 'y'}), of({'x', 'z'}))

    def test_what_it_cannot_read_gives_no_digest(self):
        # An iterator: its repr is its address, its position unreadable.
        self.assertRaises(digest.Unreadable, digest._Walk().walk,
                          iter([1]))

    def test_too_much_to_walk_gives_no_digest(self):
        self.useFixture(fixtures.MonkeyPatch(
            'harness.cloud.digest.BUDGET', 5))
        self.assertRaises(digest.Unreadable, digest._Walk().walk,
                          list(range(10)))


def traced(*values, times=True, rows=None):
    walk = digest._Walk(times=times, trace=True)
    for value in values:
        walk.walk(value)
    if rows is not None:
        with walk.at('db1-cell/instances'):
            walk.rows(*rows)
    return walk


class TestFields(testing.TestCase):
    """A traced walk: the digest's text, cut by where it was written."""

    STATE = {'instance': A, 'usage': {'vcpus': 2, 'pinned': {1, 5}},
             'updated': T0, 'record': Thing(vm_state='active', host=B),
             (1, 2): ['x', ('y', 3)], A: 'the instance again'}
    ROWS = ([(1, A, 'active', T0), (2, B, 'resized', None)],
            ['id', 'uuid', 'vm_state', 'updated_at'])

    def test_tracing_leaves_the_digest_as_it_is(self):
        walk = digest._Walk()
        walk.walk(self.STATE)
        walk.rows(*self.ROWS)
        # The untraced walk of a table is the walk of its rows.
        self.assertEqual(walk.hexdigest(), of(self.STATE, self.ROWS[0]))
        self.assertEqual(walk.hexdigest(),
                         traced(self.STATE, rows=self.ROWS).hexdigest())
        self.assertEqual(
            of(self.STATE, self.ROWS[0], times=False),
            traced(self.STATE, times=False, rows=self.ROWS).hexdigest())

    def test_the_fields_are_the_text_by_path(self):
        walk = traced(self.STATE, rows=self.ROWS)
        found = walk.fields()
        # Every piece in one field: nothing left out, nothing twice.
        self.assertEqual(sorted(''.join(walk.texts())),
                         sorted(''.join(found.values())))
        self.assertEqual("s'active'", found['.record.vm_state'])
        # Uuids by their names, in keys and values alike.
        self.assertEqual("s'U0'", found['.instance'])
        self.assertEqual("s'U1'", found['.record.host'])
        self.assertEqual("s'the instance again'", found['.U0'])
        self.assertEqual('a2', found['.usage.vcpus'])
        self.assertEqual('a1', found['.usage.pinned<0>'])
        self.assertEqual('a3', found['[(1, 2)][1][1]'])
        # Timestamps by second and rank, as hashed.
        self.assertEqual('t2026-01-01T00:00:10#0', found['.updated'])
        # A table's values by row number and column.
        self.assertEqual("s'resized'",
                         found['db1-cell/instances[1].vm_state'])
        self.assertEqual("s'U1'", found['db1-cell/instances[1].uuid'])
        self.assertEqual('t2026-01-01T00:00:10#0',
                         found['db1-cell/instances[0].updated_at'])

    def test_sections_are_joined_by_slashes(self):
        walk = digest._Walk(trace=True)
        with walk.at('tracker:src'):
            with walk.at('inner'):
                walk.walk({'a': 1})
        # The dict's own marks (and its keys) are its path's.
        self.assertEqual({'tracker:src/inner': "{dicts'a'}",
                          'tracker:src/inner.a': 'a1'}, walk.fields())

    def test_diff_names_the_fields_that_differ(self):
        before = traced({'vm_state': 'active', 'host': 'src',
                         'gone': 1}).fields()
        after = traced({'vm_state': 'resized', 'host': 'src',
                        'new': 2}).fields()
        self.assertEqual(
            [('.vm_state', "s'active'", "s'resized'"),
             ('.gone', 'a1', None), ('.new', None, 'a2')],
            [found for found in digest.diff(before, after)
             if found[0] != ''])
        self.assertEqual([], digest.diff(before, before))

    def test_without_times_a_time_is_alike_everywhere(self):
        later = T0 + datetime.timedelta(seconds=5)
        self.assertEqual([], digest.diff(
            traced({'at': T0}, times=False).fields(),
            traced({'at': later}, times=False).fields()))
        self.assertEqual(
            [('.at', 't2026-01-01T00:00:10#0', 't2026-01-01T00:00:15#0')],
            digest.diff(traced({'at': T0}).fields(),
                        traced({'at': later}).fields()))


class _Engine(object):
    """An engine as ``checkpoint._raw`` reads it: one SQLite connection."""

    def __init__(self, connection):
        self.driver_connection = connection

    def raw_connection(self):
        return self

    def close(self):
        pass


def cloud(saves=0, passed=(), armed=(), old_resources=None, vm_state='x'):
    """A cloud as ``digest.of`` walks it, each part plain data.

    One cell database with one instance, one compute (``src``) whose
    tracker holds ``old_resources``, the race points' ``passed`` points
    and ``armed`` injections.
    """
    cell = sqlite3.connect(':memory:')
    cell.execute('CREATE TABLE instances (id INTEGER, uuid TEXT, '
                 'vm_state TEXT, updated_at DATETIME)')
    cell.execute('INSERT INTO instances VALUES (1, ?, ?, ?)',
                 (A, vm_state, str(T0)))
    client = Thing(_provider_tree={}, _association_refresh_time={})
    tracker = Thing(driver=Thing(instances={}), reportclient=client,
                    monitors=[], service_ref=None, pci_tracker=None,
                    host='src', tracked_instances={A},
                    old_resources=old_resources or {})
    manager = Thing(rt=tracker, reportclient=client, driver=tracker.driver)
    return types.SimpleNamespace(
        env=Thing(engines=[('sqlite://', _Engine(cell))]),
        computes={'src': Thing(manager=manager)}, _libvirt_hosts=None,
        clock=Thing(state=lambda: (T0, 17, {}, [])),
        activity=Thing(saves=saves, placement_writes=saves),
        stand_ins=[], scheduler=Thing(manager=Thing(host_manager=Thing(
            host_state_map={}, _instance_info={}))),
        notifier=Thing(fake_notifier=Thing(notifications=[]),
                       fake_versioned_notifier=Thing(
                           versioned_notifications=[])),
        casts=Thing(failures=[], queued=[]), stopped_computes=lambda: [],
        race=Thing(state=lambda: (list(passed), list(armed), [], True,
                                  False, [])))


def injection(remaining):
    return Thing(point='finish_resize', when='before', remaining=remaining)


def node(**fields):
    from nova import objects
    objects.register_all()
    found = objects.ComputeNode(
        uuid=A, hypervisor_hostname='src', vcpus=8, memory_mb=4096,
        mapped=0, updated_at=T0, created_at=T0)
    for name, value in fields.items():
        setattr(found, name, value)
    return found


class TestCloud(testing.TestCase):
    """What ``digest.of`` walks of a cloud, and what it leaves out."""

    def test_the_fields_are_what_the_digest_walks(self):
        state = cloud(old_resources={'src': node()})
        walk = digest._cloud_walk(state, True, trace=True)
        digest._walk_cloud(walk, state, [('check 0', {'seen': [A]})])
        self.assertEqual(digest.of(state, [('check 0', {'seen': [A]})]),
                         walk.hexdigest())
        found = walk.fields()
        self.assertEqual("s'x'", found['db0-cell/instances[0].vm_state'])
        self.assertEqual("s'U0'", found['tracker:src.tracked_instances<0>'])
        self.assertEqual(
            'a0', found['tracker:src.old_resources.src'
                        '[nova_object.data].mapped'])
        self.assertEqual("s'U0'", found['extra:check 0.seen[0]'])
        self.assertEqual(
            [('db0-cell/instances[0].vm_state', "s'x'", "s'y'")],
            digest.diff(found, digest.fields(cloud(
                old_resources={'src': node()}, vm_state='y'),
                [('check 0', {'seen': [A]})])))

    def test_databases_named_by_their_tables(self):
        self.assertEqual('cell', digest._database_kind(
            ['compute_nodes', 'instances', 'resource_providers']))
        self.assertEqual('placement', digest._database_kind(
            ['allocations', 'resource_providers']))
        self.assertEqual('api', digest._database_kind(
            ['cell_mappings', 'instance_mappings']))

    def test_the_harness_write_counters_are_left_out(self):
        # Read only as a difference inside a step (``Run.operate``, the
        # versions of one step's points): an offset at a step's end.
        self.assertEqual(digest.of(cloud(saves=26)),
                         digest.of(cloud(saves=27)))

    def test_points_passed_are_left_out_injections_armed_are_not(self):
        # A passage is read only in its own step; a replay's injected
        # periodic marks the one it fired at (``deferred``) and shifts
        # the versions of those after.
        passed = types.SimpleNamespace(point='finish_resize', version=3,
                                       deferred=False)
        marked = types.SimpleNamespace(point='finish_resize', version=4,
                                       deferred=True)
        self.assertEqual(digest.of(cloud(passed=[passed])),
                         digest.of(cloud(passed=[marked, passed])))
        self.assertNotEqual(digest.of(cloud(armed=[injection(1)])),
                            digest.of(cloud()))
        self.assertEqual(digest.of(cloud(armed=[injection(0)])),
                         digest.of(cloud()))

    def test_old_resources_compared_as_the_tracker_compares_them(self):
        from nova.objects import base
        saved = node()
        # As ``_update`` leaves it after a periodic's save: a deep copy,
        # every field changed, another updated_at.
        again = copy.deepcopy(node(updated_at=T0 + datetime.timedelta(
            seconds=60)))
        saved.obj_reset_changes()
        mapped = node(mapped=1)
        more = node(vcpus=16)
        nested = node(stats={'updated_at': 'x'})
        for one, other in itertools.combinations(
                [saved, again, mapped, more, nested, node()], 2):
            # Alike to the digest exactly when alike to Nova's check.
            self.assertEqual(
                base.obj_equal_prims(one, other, ['updated_at']),
                digest.of(cloud(old_resources={'src': one}))
                == digest.of(cloud(old_resources={'src': other})),
                (one, other))
        self.assertEqual(digest.of(cloud(old_resources={'src': saved})),
                         digest.of(cloud(old_resources={'src': again})))
        self.assertNotEqual(
            digest.of(cloud(old_resources={'src': saved})),
            digest.of(cloud(old_resources={'src': mapped})))

    def test_only_old_resources_is_walked_as_compared(self):
        tracker = Thing(old_resources={'src': node()}, compute_nodes={
            'src': node()}, driver=1)
        state = digest._tracker_state(tracker, {id(tracker.driver)})
        self.assertEqual({'old_resources', 'compute_nodes'}, set(state))
        self.assertIs(tracker.compute_nodes, state['compute_nodes'])
        self.assertNotIn(
            'updated_at',
            state['old_resources']['src']['nova_object.data'])
