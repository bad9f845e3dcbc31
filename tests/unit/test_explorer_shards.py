"""Shards of an exploration: the split, the file format, the merge's refusals.

No cloud here: ``PlannedExplorer`` plans a fixed set of points and makes
each replay's result from its plan index, so shard files can be written
and merged as ``harness explore --shard`` and ``--merge`` would.
"""

import contextlib
import itertools
import json
import os

import fixtures

from harness.core import errors
from harness.core import problems
from harness.core import scenario as scenario_mod
from harness.runners import explorer
from harness.runners import shards
from harness import testing

SCENARIOS = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                         'functional', 'explore', 'moves_fake.yaml')
BOTH = ('source', 'dest')
POINTS = [explorer.Point(2, 'before', 'prep_resize', 'dst', 'vm1', ()),
          explorer.Point(2, 'before', 'finish_resize', 'dst', 'vm1', BOTH),
          explorer.Point(3, 'after', 'confirm_resize', 'src', 'vm1', BOTH)]
PHASES = {name: 0.25 for name in explorer.PHASES}


def result(index):
    """A replay's result, made up from its plan index."""
    failed = index % 4 == 1
    return {'failed': failed, 'step': 2 if failed else None,
            'label': 'resize vm1' if failed else '',
            'problems': [problems.Problem(
                'usages', 'dst', {'VCPU': 1, ('odd', 'key'): {2, 3}},
                {'VCPU': 2}, 'usages of dst: VCPU 2, not 1', 2)]
            if failed else [],
            'inapplicable': index % 5 == 3, 'phases': dict(PHASES),
            'points': []}


class PlannedExplorer(explorer.Explorer):
    """An explorer whose plan and replays need no cloud."""

    @contextlib.contextmanager
    def kept(self):
        yield self

    def plan(self, scenario):
        baseline = dict(result(0), points=[
            tuple(point.__dict__.values()) for point in POINTS])
        candidates = self.candidates(POINTS)
        if self.limit is not None:
            candidates = candidates[:self.limit]
        return explorer.Plan(scenario, baseline, len(candidates),
                             explorer.runnable(candidates))

    def replay_plan(self, plan, indexes):
        return [result(index) for index in indexes]


class ShardFiles(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.out = self.useFixture(fixtures.TempDir()).path
        self.scenarios = scenario_mod.load(SCENARIOS)[:2]

    def write(self, index, count, out=None, **options):
        options.setdefault('workers', 1)
        document = shards.run(PlannedExplorer(**options), self.scenarios,
                              index, count)
        return shards.write(document, out or self.out)

    def write_all(self, count, **options):
        return [self.write(index, count, **options)
                for index in range(count)]

    def edit(self, path, change):
        with open(path) as source:
            document = json.load(source)
        change(document)
        with open(path, 'w') as out:
            json.dump(document, out)
        return path

    def assertRefused(self, paths, *words):
        error = self.assertRaises(errors.ScenarioError, shards.load, paths)
        for word in words:
            self.assertIn(word, str(error))
        return error


class TestSplit(testing.TestCase):

    def test_every_index_is_in_exactly_one_shard(self):
        for total in range(0, 30):
            for count in range(1, 7):
                split = [list(shards.indexes(total, index, count))
                         for index in range(count)]
                joined = sorted(i for shard in split for i in shard)
                self.assertEqual(list(range(total)), joined)
                # In plan order within a shard, and spread evenly.
                for shard in split:
                    self.assertEqual(sorted(shard), shard)
                    self.assertLessEqual(
                        len(shard) - min(len(s) for s in split), 1)

    def test_shard_option(self):
        self.assertEqual((0, 1), shards.parse_shard('0/1'))
        self.assertEqual((3, 4), shards.parse_shard(' 3 / 4 '))
        for bad in ('2/2', '-1/2', '0/0', '1', 'a/b', '', '1/2/3', '5/3',
                    None):
            error = self.assertRaises(errors.ScenarioError,
                                      shards.parse_shard, bad)
            self.assertIn('--shard is I/N', str(error))

    def test_plan_order_is_the_same_every_time(self):
        plans = [PlannedExplorer(depth=2, workers=1).candidates(POINTS)
                 for _ in range(2)]
        self.assertEqual(plans[0], plans[1])
        self.assertEqual(shards._plan_digest(plans[0]),
                         shards._plan_digest(plans[1]))


def pairs(sizes):
    """Runnable pairs in plan order: ``sizes[g]`` pairs of first ``g``.

    As ``Explorer.candidates`` makes them, the pairs of one first
    injection follow each other in the plan.
    """
    return [(first, second) for first, size in enumerate(sizes)
            for second in range(size)]


class TestNestedSplit(testing.TestCase):
    """With ``--nested``, whole groups of one first injection per shard."""

    def assertSplit(self, runnable, shares):
        joined = sorted(i for share in shares for i in share)
        self.assertEqual(list(range(len(runnable))), joined)
        for share in shares:
            self.assertEqual(sorted(share), share)
        firsts = [{runnable[i][0] for i in share} for share in shares]
        for one, other in itertools.combinations(firsts, 2):
            self.assertEqual(set(), one & other)

    def test_every_pair_in_exactly_one_shard_with_its_first(self):
        for sizes in ([], [1], [5, 4, 3, 2, 1], [3, 3, 3, 3], [1, 7, 2],
                      list(range(12, 0, -1))):
            for count in range(1, 7):
                runnable = pairs(sizes)
                self.assertSplit(runnable, shards.Split(
                    count, nested=True).shares(runnable))

    def test_groups_not_next_to_each_other(self):
        # A plan does not put them apart, but the split does not rely
        # on it.
        runnable = [('a', 1), ('b', 1), ('a', 2), ('c', 1), ('b', 2)]
        shares = shards.Split(2, nested=True).shares(runnable)
        self.assertSplit(runnable, shares)
        # a (2 pairs) to shard 0, b (2) to 1, c (1) to 0: 2 and 2, the
        # lower index.
        self.assertEqual([[0, 2, 3], [1, 4]], shares)

    def test_balanced_by_size_largest_first(self):
        # Sizes 5, 4, 3, 2, 1 (a plan's groups shrink along it): 5 to
        # shard 0, 4 to 1, 3 to 1 (4 < 5), 2 to 0 (5 < 7), 1 to 0 (7
        # and 7: the lower index). Round-robin would give 9 and 6.
        split = shards.Split(2, nested=True)
        runnable = pairs([5, 4, 3, 2, 1])
        self.assertEqual([list(range(0, 5)) + list(range(12, 15)),
                          list(range(5, 12))], split.shares(runnable))
        self.assertEqual([8, 7], split.loads)

    def test_the_balance_carries_to_the_next_scenario(self):
        split = shards.Split(2, nested=True)
        split.shares(pairs([5, 4, 3, 2, 1]))
        # Shard 1 has fewer pairs: it takes the next scenario's first.
        self.assertEqual([[], [0]], split.shares(pairs([1])))
        self.assertEqual([[0, 1], [2]], split.shares(pairs([2, 1])))
        self.assertEqual([10, 9], split.loads)

    def test_plain_is_modulo(self):
        for sizes in ([5, 4, 3, 2, 1], [1, 7, 2]):
            runnable = pairs(sizes)
            for count in range(1, 5):
                split = shards.Split(count)
                for _scenario in range(2):
                    self.assertEqual(
                        [list(shards.indexes(len(runnable), index, count))
                         for index in range(count)],
                        split.shares(runnable))


class TestRunnable(testing.TestCase):
    """What is not replayed: a first injection on a role not named yet."""

    def test_depth_one(self):
        plan = explorer.Explorer(workers=1).candidates(POINTS)
        self.assertEqual(12, len(plan))
        self.assertEqual(plan[4:], explorer.runnable(plan))

    def test_depth_two_rules_out_by_the_first_point_only(self):
        plan = explorer.Explorer(depth=2, workers=1).candidates(POINTS)
        # Twelve single injections, paired at different points.
        self.assertEqual(12 * 11 // 2 - 3 * 6, len(plan))
        order = {point: number for number, point in enumerate(POINTS)}
        self.assertTrue(all(order[a.at] < order[b.at] for a, b in plan))
        # Pairs that start at the point no role is named at go; a pair
        # whose second point is one is still replayed (that point may be
        # passed otherwise after the first injection).
        kept = explorer.runnable(plan)
        self.assertEqual(4 * 4, len(kept))
        self.assertEqual({(POINTS[1], POINTS[2])},
                         {(a.at, b.at) for a, b in kept})
        self.assertEqual(
            [c for c in plan if c[0].at != POINTS[0]], kept)
        later = explorer.Point(3, 'before', 'confirm_resize', 'src', 'vm1',
                               ())
        pair = tuple(explorer.Injection(point, 'update_available_resource',
                                        ('source',))
                     for point in (POINTS[1], later))
        self.assertEqual([pair], explorer.runnable([pair]))


class TestRecords(testing.TestCase):

    def test_values_keep_their_types(self):
        value = {'src': {'VCPU': 1}, ('a', 1): {2, 3}, 4: [1, (2, 3)],
                 None: 1.5, 'set': frozenset(['x']), 'tag': {'tuple': 1}}
        back = shards.decode(json.loads(json.dumps(shards.encode(value))))
        self.assertEqual(value, back)
        self.assertIsInstance(back[('a', 1)], set)
        self.assertIsInstance(back[4][1], tuple)

    def test_a_problem_and_an_injection_round_trip(self):
        problem = result(1)['problems'][0]
        record = json.loads(json.dumps(shards._problem(problem)))
        self.assertEqual(problem, shards._from_problem(record))
        self.assertEqual(problem.kind, shards._from_problem(record).kind)
        injection = explorer.Injection(POINTS[1], 'update_available_resource',
                                       ('dest', 'source'))
        record = json.loads(json.dumps(shards._injection(injection)))
        back = shards._from_injection(record)
        self.assertEqual(injection, back)
        self.assertEqual(BOTH, back.at.roles)
        self.assertEqual(str(injection), str(back))


class TestFormat(ShardFiles):

    def test_a_shard_file(self):
        path = self.write(1, 3, depth=1)
        self.assertEqual('shard-1-of-3.json', os.path.basename(path))
        document = shards.read(path)
        self.assertEqual(shards.FORMAT, document['format'])
        self.assertEqual({'index': 1, 'count': 3}, document['shard'])
        self.assertEqual({'tasks': ['update_available_resource'],
                          'depth': 1, 'reintroduce': None, 'limit': None,
                          'invariants': True, 'nested': False,
                          'prune': False},
                         document['options'])
        self.assertEqual(
            [(SCENARIOS, 'resize then revert'),
             (SCENARIOS, 'cold migrate then confirm')],
            [(e['file'], e['name']) for e in document['scenarios']])
        entry = document['scenarios'][0]
        # Three points at four host orders; the first point's roles name
        # no host, so its four are not replayed at depth 1.
        self.assertEqual(12, entry['candidates'])
        self.assertEqual(8, entry['runnable'])
        self.assertEqual([1, 4, 7], [r['index'] for r in entry['replays']])
        self.assertTrue(entry['replays'][0]['result']['failed'])
        self.assertEqual('usages', entry['replays'][0]['result'][
            'problems'][0]['check'])
        self.assertEqual(3, len(entry['baseline']['points']))
        # Of plan indexes 1, 4 and 7, result() fails 1 and finds none not
        # applicable (3 is).
        self.assertEqual(0, entry['inapplicable'])
        self.assertTrue(shards.summary(document)[0].startswith(
            'resize then revert: shard 1/3: 3 of 8 interleavings replayed, '
            '1 failed, 0 not applicable, in '), shards.summary(document))
        self.assertEqual(1, shards.read(self.write(0, 3, depth=1))[
            'scenarios'][0]['inapplicable'])

    def test_shards_load_back_in_plan_order(self):
        paths = self.write_all(3, depth=2)
        merged = shards.load(list(reversed(paths)))
        self.assertEqual(3, merged.shards)
        self.assertEqual(2, merged.options['depth'])
        entry = merged.scenarios[0]
        one = PlannedExplorer(depth=2, workers=1)
        plan = one.plan(self.scenarios[0])
        self.assertEqual(len(plan.runnable), len(entry['results']))
        self.assertEqual(
            [[shards._injection(i) for i in c] for c in plan.runnable],
            entry['runnable'])
        self.assertEqual(
            one.replay_plan(plan, range(len(plan.runnable))),
            [shards._from_result(r) for r in entry['results']])

    def test_nested_shards_replay_whole_groups(self):
        paths = self.write_all(3, depth=2, nested=True)
        documents = [shards.read(path) for path in paths]
        self.assertEqual([True] * 3,
                         [d['options']['nested'] for d in documents])
        one = PlannedExplorer(depth=2, workers=1)
        plan = one.plan(self.scenarios[0])
        # Sixteen pairs, four of each of four first injections (those
        # at finish_resize): a group per shard, and the last to shard 0
        # (4, 4, 4: the lower index).
        self.assertEqual(16, len(plan.runnable))
        firsts = [{json.dumps(r['injections'][0], sort_keys=True)
                   for r in d['scenarios'][0]['replays']}
                  for d in documents]
        self.assertEqual([2, 1, 1], [len(f) for f in firsts])
        self.assertEqual(4, len(set().union(*firsts)))
        self.assertEqual([[0, 1, 2, 3, 12, 13, 14, 15], [4, 5, 6, 7],
                          [8, 9, 10, 11]],
                         [[r['index'] for r in d['scenarios'][0]['replays']]
                          for d in documents])
        # Loads 8, 4, 4: the next scenario's first two groups go to the
        # shards with fewer, its third to shard 0 (8, 8, 8: the lower
        # index), its last to shard 1 (12, 8, 8).
        self.assertEqual([[8, 9, 10, 11], [0, 1, 2, 3, 12, 13, 14, 15],
                          [4, 5, 6, 7]],
                         [[r['index'] for r in d['scenarios'][1]['replays']]
                          for d in documents])
        merged = shards.load(list(reversed(paths)))
        self.assertTrue(merged.options['nested'])
        entry = merged.scenarios[0]
        self.assertEqual(
            [[shards._injection(i) for i in c] for c in plan.runnable],
            entry['runnable'])
        self.assertEqual(
            one.replay_plan(plan, range(len(plan.runnable))),
            [shards._from_result(r) for r in entry['results']])

    def test_one_shard_is_the_whole_plan(self):
        merged = shards.load(self.write_all(1, depth=1))
        self.assertEqual(8, len(merged.scenarios[0]['results']))


class TestRefusals(ShardFiles):

    def test_no_files(self):
        self.assertRefused([], '--merge needs the shard files')

    def test_a_missing_shard(self):
        paths = self.write_all(4)
        self.assertRefused(paths[:1] + paths[2:3], 'shards 1, 3 of 4 missing')

    def test_a_shard_given_twice(self):
        paths = self.write_all(2)
        copy = self.write(1, 2, out=os.path.join(self.out, 'again'))
        self.assertRefused(paths + [copy], 'shard 1 of 2 is given twice',
                           paths[1], copy)

    def test_shards_of_different_counts(self):
        paths = [self.write(0, 2), self.write(1, 3)]
        self.assertRefused(paths, paths[1], 'shard 1 of 3', 'of 2 shards')

    def test_shards_with_different_options(self):
        paths = [self.write(0, 2, depth=1), self.write(1, 2, depth=2)]
        self.assertRefused(paths, paths[1], 'other options', 'depth')
        paths = [self.write(0, 2), self.write(1, 2, limit=5)]
        self.assertRefused(paths, 'other options', 'limit')

    def test_shards_nested_and_not(self):
        paths = [self.write(0, 2, depth=2, nested=True),
                 self.write(1, 2, depth=2)]
        self.assertRefused(paths, paths[1], 'other options', paths[0],
                           'field "options.nested": false, not true')

    def test_a_file_from_before_nested_is_plain(self):
        paths = self.write_all(2, depth=2)
        self.edit(paths[0], lambda d: d['options'].pop('nested'))
        merged = shards.load(paths)
        self.assertFalse(merged.options['nested'])
        self.assertEqual(16, len(merged.scenarios[0]['results']))
        nested = self.write(1, 2, out=os.path.join(self.out, 'nested'),
                            depth=2, nested=True)
        self.assertRefused([paths[0], nested], nested,
                           'field "options.nested": true, not false')

    def test_shards_pruned_and_not(self):
        # The same outcomes either way, but the merged summary's pruned
        # counts would be of neither exploration.
        paths = [self.write(0, 2, depth=2, prune=True),
                 self.write(1, 2, depth=2)]
        self.assertEqual(
            [True, False],
            [shards.read(path)['options']['prune'] for path in paths])
        self.assertRefused(paths, paths[1], 'other options', paths[0],
                           'field "options.prune": false, not true')

    def test_a_file_from_before_prune_is_full(self):
        paths = self.write_all(2, depth=2)
        self.edit(paths[0], lambda d: d['options'].pop('prune'))
        merged = shards.load(paths)
        self.assertFalse(merged.options['prune'])
        pruned = self.write(1, 2, out=os.path.join(self.out, 'pruned'),
                            depth=2, prune=True)
        self.assertRefused([paths[0], pruned], pruned,
                           'field "options.prune": true, not false')

    def test_nested_replays_that_are_not_the_split(self):
        paths = self.write_all(2, depth=2, nested=True)

        def move(document):
            # A group's last pair, replayed by the other shard.
            replays = document['scenarios'][0]['replays']
            return replays.pop()
        moved = []
        self.edit(paths[0], lambda d: moved.append(move(d)))
        self.assertRefused(paths, 'field "replays"',
                           'no shard replays plan indexes [11]')
        self.edit(paths[1], lambda d: d['scenarios'][0]['replays'].append(
            moved[0]))
        # Every pair replayed once, but one not by its first's shard.
        self.assertRefused(paths, paths[0], 'field "replays"',
                           'shard 0 of 2 replays plan indexes')
        paths = self.write_all(2, depth=2, nested=True)
        first = shards.read(paths[0])['scenarios'][0]['replays'][0]
        self.edit(paths[1], lambda d: d['scenarios'][0]['replays'].append(
            first))
        self.assertRefused(paths, paths[1], 'plan index 0 is replayed twice')
        self.edit(paths[1], lambda d: d['scenarios'][0]['replays'][-1].update(
            index=16))
        self.assertRefused(paths, paths[1],
                           'plan index 16 is not in the plan of 16')

    def test_shards_of_different_scenarios(self):
        paths = self.write_all(2)
        self.edit(paths[1], lambda d: d['scenarios'][1].update(name='other'))
        self.assertRefused(paths, paths[1], 'other scenarios', "'other'")
        paths = self.write_all(2)
        self.edit(paths[1], lambda d: d['scenarios'][0].update(
            fingerprint='0' * 64))
        self.assertRefused(paths, 'other scenarios')

    def test_shards_whose_baselines_planned_differently(self):
        paths = self.write_all(2)
        self.edit(paths[1], lambda d: d['scenarios'][0].update(plan='f' * 64))
        self.assertRefused(paths, paths[1], 'planned other interleavings',
                           '"plan"', 'not deterministic')

    def test_replays_that_are_not_the_plan(self):
        paths = self.write_all(2)

        def swap(document):
            replays = document['scenarios'][0]['replays']
            replays[0]['injections'], replays[1]['injections'] = (
                replays[1]['injections'], replays[0]['injections'])
        self.edit(paths[0], swap)
        self.assertRefused(paths, 'not those of their plan')
        paths = self.write_all(2)
        self.edit(paths[1], lambda d: d['scenarios'][0]['replays'].pop())
        self.assertRefused(paths, paths[1], 'field "replays"',
                           'shard 1 of 2 replays plan indexes')

    def test_malformed_files(self):
        path = self.write(0, 1)
        bad = os.path.join(self.out, 'bad.json')
        with open(bad, 'w') as out:
            out.write('{"format": ')
        self.assertRefused([bad], bad, 'not a shard file of harness explore')
        self.assertRefused([os.path.join(self.out, 'none.json')],
                           'no such shard file')
        for change, field in (
                (lambda d: d.update(format='other'), '"format"'),
                (lambda d: d.update(version=2), '"version"'),
                (lambda d: d.pop('options'), '"options"'),
                (lambda d: d['options'].pop('depth'), '"options.depth"'),
                (lambda d: d['shard'].update(index=1), '"shard"'),
                (lambda d: d['shard'].update(count='1'), '"shard.count"'),
                (lambda d: d['scenarios'][0].update(runnable=True),
                 '"scenarios[0].runnable"'),
                (lambda d: d['scenarios'][0]['replays'][1]['result'][
                    'problems'].append({'check': 'x'}),
                 '"scenarios[0].replays[1].result.problems"'),
                (lambda d: d['scenarios'][0]['replays'][0].update(
                    injections=[{'at': 1}]),
                 '"scenarios[0].replays[0].injections"'),
                (lambda d: d['scenarios'][1].update(baseline=[]),
                 '"scenarios[1].baseline"')):
            self.write(0, 1)
            self.edit(path, change)
            self.assertRefused([path], path, field)

    def test_a_scenario_changed_since(self):
        self.write(0, 1)
        entry = shards.load([os.path.join(
            self.out, 'shard-0-of-1.json')]).scenarios[1]
        self.assertEqual('cold migrate then confirm',
                         shards._scenario(entry).name)
        error = self.assertRaises(errors.ScenarioError, shards._scenario,
                                  dict(entry, fingerprint='0' * 64))
        self.assertIn('changed since the shards explored it', str(error))
        error = self.assertRaises(errors.ScenarioError, shards._scenario,
                                  dict(entry, name='gone'))
        self.assertIn("no scenario named 'gone'", str(error))
