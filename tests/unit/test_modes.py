"""Comparing one scenario's runs in the two concurrency modes (no Nova)."""

from harness.core import snapshot
from harness.core import timeline as timeline_mod
from harness.runners import modes
from harness import testing


class _Scenario(object):
    name = 'a boot'
    path = 'boot.yaml'


def _record(mode, vcpus, generation=1, failed=False, passages=()):
    provider = snapshot.Provider('h1', 'u1', generation, None, 'h1',
                                 {'VCPU': {'total': 8}}, {'VCPU': vcpus})
    snap = snapshot.Snapshot({'h1': provider},
                             {'vm1': {'h1': {'VCPU': vcpus}}}, {}, {})
    timeline = timeline_mod.Timeline(concurrency=mode)
    entry = timeline.add(1, 'boot vm1', snap)
    entry.passages = list(passages)
    if failed:
        entry.problems = ['something']
    return modes.record(_Scenario(), timeline, mode)


class _Passage(object):
    def __init__(self, point):
        self.when, self.point, self.host, self.server = (
            'before', point, 'h1', 'vm1')


class TestCompare(testing.TestCase):

    def test_the_same_run_is_alike(self):
        self.assertEqual([], modes.compare(_record('threading', 1),
                                           _record('eventlet', 1)))

    def test_an_allocation_that_differs_is_accounting(self):
        found = modes.compare(_record('threading', 1), _record('eventlet', 2))
        self.assertEqual(['allocations', 'providers'],
                         [d.part for d in found])
        self.assertTrue(all(d.accounting for d in found))

    def test_generations_and_race_points_are_not(self):
        found = modes.compare(
            _record('threading', 1, generation=2,
                    passages=[_Passage('a'), _Passage('b')]),
            _record('eventlet', 1, passages=[_Passage('b'), _Passage('a')]))
        self.assertEqual(['generations', 'passages'],
                         [d.part for d in found])
        self.assertFalse(any(d.accounting for d in found))

    def test_a_verdict_that_differs_is_accounting(self):
        found = modes.compare(_record('threading', 1, failed=True),
                              _record('eventlet', 1))
        self.assertEqual(['verdict'], [d.part for d in found])
        self.assertTrue(found[0].accounting)


class TestReport(testing.TestCase):

    def report(self, left, right):
        lines = []
        alike = modes.report(left, right, lines.append)
        return alike, lines

    def test_alike(self):
        alike, lines = self.report([_record('threading', 1)],
                                   [_record('eventlet', 1)])
        self.assertTrue(alike)
        self.assertEqual(['same in both modes: a boot'], lines)

    def test_a_difference_shows_both_timelines(self):
        alike, lines = self.report([_record('threading', 1)],
                                   [_record('eventlet', 2)])
        self.assertFalse(alike)
        self.assertEqual('MODE DIFFERENCE in a boot: step 1 (boot vm1): '
                         'allocations differ; step 1 (boot vm1): providers '
                         'differ', lines[0])
        self.assertEqual('1 boot vm1\n'
                         '  threading  vm1@h1 VCPU=1 | pinned -\n'
                         '  eventlet   vm1@h1 VCPU=2 | pinned -', lines[1])

    def test_a_scenario_run_in_one_mode_only(self):
        alike, lines = self.report([_record('threading', 1)], [])
        self.assertFalse(alike)
        self.assertEqual(['a boot: ran in threading mode only'], lines)
