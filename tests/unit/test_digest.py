"""The cloud digest's canonical text (``harness.cloud.digest._Walk``).

Nova-free: the walk of plain values, as ``digest.of`` walks the cloud's.
"""

import datetime

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
