"""``benchmarks/state_spread.py --diff``: how it sorts what differs.

Nova-free: the kinds of difference between a field's texts (as
``digest.fields`` writes them), the families fields fall in, and the
aggregation over replays; what the fields are is ``test_digest``'s.
"""

import importlib.util
import os

from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def load():
    spec = importlib.util.spec_from_file_location(
        'state_spread', os.path.join(ROOT, 'benchmarks', 'state_spread.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


spread = load()
AT = '.updated_at=t2026-01-01T00:00:00#%d'


class TestKinds(testing.TestCase):

    def test_a_value_of_its_own(self):
        self.assertEqual('value', spread._kind('a0', 'a1'))
        self.assertEqual('value', spread._kind(None, 'a1'))
        self.assertEqual('value', spread._kind("s'U1'", "s'active'"))

    def test_a_timestamp_whose_second_differs(self):
        self.assertEqual('time', spread._kind(
            '.updated_at=t2026-01-01T00:00:00#5',
            '.updated_at=t2026-01-01T00:01:00#5'))

    def test_only_ranks_or_names_follow_another_difference(self):
        self.assertEqual('rank', spread._kind(AT % 480, AT % 479))
        self.assertEqual('names', spread._kind("s'U3'", "s'U4'"))
        # A shared object written again (``r`` and its number).
        self.assertEqual('names', spread._kind('r533', 'r531'))
        self.assertEqual(('rank', 'names'), spread.FOLLOWING)


class TestFamilies(testing.TestCase):

    def test_a_column_of_a_table(self):
        path = 'db2-cell/compute_nodes[1].stats'
        self.assertEqual('db2-cell/compute_nodes[].stats',
                         spread.field(path))
        self.assertEqual('db2-cell/compute_nodes.stats',
                         spread.family(path))

    def test_a_section_and_its_first_attribute(self):
        path = 'tracker:dst.tracked_migrations.U2.status'
        self.assertEqual('tracker:dst.tracked_migrations.U.status',
                         spread.field(path))
        self.assertEqual('tracker:dst.tracked_migrations',
                         spread.family(path))
        self.assertEqual('activity[]', spread.family('activity[0]'))


class TestAggregate(testing.TestCase):

    REPLAYS = [
        ('r0', {2: ('d', 'n', [
            ('tracker:src.stats.src.io_workload', 'a1', None),
            ('db2-cell/instances[0].updated_at', AT % 4, AT % 3)])}),
        ('r1', {2: ('d', 'n', [
            ('tracker:src.stats.src.io_workload', 'a1', 'a0')]),
            3: ('d', 'n', [])}),
        ('r2', {3: ('d', 'n', None)}),
    ]

    def test_per_family_how_many_replays_and_how(self):
        found = spread.aggregate(self.REPLAYS)
        stats = found['tracker:src.stats']
        self.assertEqual({0, 1}, stats['replays'])
        self.assertEqual({'value': 2}, dict(stats['kinds']))
        self.assertEqual({2: 2}, dict(stats['steps']))
        self.assertEqual((0, 2, 'tracker:src.stats.src.io_workload', 'a1',
                          None), stats['example'])
        # Only a rank: no example of its own.
        self.assertIsNone(found['db2-cell/instances.updated_at']['example'])

    def test_causes_leave_out_what_follows(self):
        self.assertEqual(frozenset(['tracker:src.stats']),
                         spread.causes(self.REPLAYS[0][1][2][2]))
        self.assertEqual(frozenset(), spread.causes([]))
