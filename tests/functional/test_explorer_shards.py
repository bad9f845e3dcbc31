"""Two shards of an exploration, merged, report what one run reports.

With LP#1944759 put back, the pinned resize and confirm fails when the
source's update_available_resource runs before the destination's
finish_resize (the outbound migration's pinned CPUs are dropped from the
source's tracker), alone or with the destination's before or after it.
``LIMIT`` keeps the plan short: of its first 38 candidates, those on a
role no migration names yet are not replayed, and of the others the
three at finish_resize with the source's periodic fail alike (one group,
one reproducer). One run, and the same plan split into two shards (each
records its baseline and replays every other interleaving) then merged,
must try, fail and skip the same interleavings, group the failures alike
and shrink each group to the same reproducer.

Nested (``--nested``), a shard replays whole groups of the pairs that
share their first injection (``shards.Split``), so that it forks them
from one run of that injection as one run does: on the share of the
same scenario at depth 2 that ``test_explorer_nested`` explores (three
first injections at the resize, each with four confirm points and two
later resize points, and a pair alone with its first), two nested
shards merged have the outcomes of one nested run and of one plain run
(``explorer.comparable``: every verdict, the not-applicable count, the
shrunk reproducers), as many pairs forked nested as the one nested run,
and no first injection with pairs in both shards. The nightly's shards
are pruned too (``--prune``): two nested, pruned shards of that share
(with service deletes the API refuses, which change nothing) merged
have the outcomes of one plain run in full.
"""

import json
import os

import fixtures

from harness.core import scenario as scenario_mod
from harness.runners import explorer
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness.runners import shards
from harness import testing
from tests.functional import test_explorer_nested

SCENARIO = os.path.join(os.path.dirname(__file__), 'explore',
                        'pinned_resize_confirm.yaml')
FAKE_MOVES = os.path.join(os.path.dirname(__file__), 'explore',
                          'moves_fake.yaml')
LIMIT = 38


class TestShardsMerged(testing.TestCase):

    def test_two_shards_merged_are_one_run(self):
        out = self.useFixture(fixtures.TempDir()).path
        scenario = scenario_mod.load(SCENARIO)[0]

        def explorer_to(name):
            # Replays in this process, as in test_explorer: stestr's
            # workers already have the cores.
            return explorer.Explorer(
                reintroduce='1944759', invariants=False, workers=1,
                limit=LIMIT, out_dir=os.path.join(out, name))

        one = explorer_to('one').explore(scenario)
        paths = [shards.write(shards.run(explorer_to('shards'), [scenario],
                                         index, 2),
                              os.path.join(out, 'shards'))
                 for index in (1, 0)]
        (merged_scenario, merged), = shards.merge(
            paths, out_dir=os.path.join(out, 'merged'), workers=1).explored

        self.assertEqual(scenario.name, merged_scenario.name)
        self.assertNotEqual([], one.failed, one.summary())
        self.assertEqual(
            (one.tried, len(one.failed), one.shrunk, one.inapplicable),
            (merged.tried, len(merged.failed), merged.shrunk,
             merged.inapplicable), '%s\n%s' % (one.summary(),
                                               merged.summary()))
        self.assertEqual(LIMIT, one.tried - 1 + one.inapplicable)
        # Every outcome, in the same order: its injections and problems.
        self.assertEqual([str(o) for o in one.outcomes],
                         [str(o) for o in merged.outcomes])
        self.assertEqual([o.problems for o in one.outcomes],
                         [o.problems for o in merged.outcomes])
        self.assertEqual(one.timed, merged.timed)

        def groups(report):
            return [(o.label, o.problems[0].kind, o.shrunk_steps,
                     _reproducer(o.shrunk_path, out))
                    for o in report.failed if o.shrunk_path]
        self.assertEqual(groups(one), groups(merged))
        self.assertEqual(one.shrunk, len(groups(one)))


class ChosenExplorer(explorer.Explorer):
    """An explorer whose plan is ``test_explorer_nested.chosen``'s share."""

    def plan(self, scenario):
        plan = super().plan(scenario)
        plan.runnable = test_explorer_nested.chosen(plan.runnable)
        plan.candidates = len(plan.runnable)
        return plan


class TestNestedShardsMerged(testing.TestCase):

    def test_nested_shards_merged_are_one_run(self):
        out = self.useFixture(fixtures.TempDir()).path
        scenario = scenario_mod.load(SCENARIO)[0]

        def explorer_to(name, nested):
            return ChosenExplorer(
                depth=2, reintroduce='1944759', nested=nested, workers=2,
                out_dir=os.path.join(out, name))

        plain = explorer_to('plain', False).explore(scenario)
        nested = explorer_to('nested', True).explore(scenario)
        documents = [shards.run(explorer_to('shards', True), [scenario],
                                index, 2) for index in (1, 0)]
        paths = [shards.write(document, os.path.join(out, 'shards'))
                 for document in documents]
        (merged_scenario, merged), = shards.merge(
            paths, out_dir=os.path.join(out, 'merged'), workers=2).explored

        self.assertEqual(scenario.name, merged_scenario.name)
        self.assertEqual(
            test_explorer_nested.FIRSTS * (test_explorer_nested.SECONDS
                                           + test_explorer_nested.SAME) + 1,
            len(plain.outcomes) + plain.inapplicable)
        self.assertNotEqual([], plain.failed, plain.summary())
        # Each shard has first injections of its own, all their pairs.
        firsts = [{json.dumps(replay['injections'][0], sort_keys=True)
                   for replay in document['scenarios'][0]['replays']}
                  for document in documents]
        self.assertNotEqual(set(), firsts[0])
        self.assertNotEqual(set(), firsts[1])
        self.assertEqual(set(), firsts[0] & firsts[1])
        # The shards nested as the one run did, or this proves nothing.
        self.assertEqual(0, plain.nested)
        self.assertGreater(nested.nested, 0, nested.summary())
        self.assertEqual(nested.nested, merged.nested)
        found = explorer.comparable(merged)
        self.assertEqual(explorer.comparable(nested), found)
        self.assertEqual(explorer.comparable(plain), found)


class TestPrunedNestedShardsMerged(testing.TestCase):
    """The nightly's way: nested, pruned shards, merged.

    On the same share with the service delete as a task too (a first
    injection the API refuses, which changes nothing: pairs to prune),
    two shards explored nested and pruned, then merged, have the
    outcomes of one plain run in full (``explorer.comparable``), and
    pruned some interleavings, or this proves nothing.
    """

    def test_pruned_nested_shards_merged_are_one_full_run(self):
        out = self.useFixture(fixtures.TempDir()).path
        scenario = scenario_mod.load(SCENARIO)[0]

        def explorer_to(name, **options):
            return ChosenExplorer(
                depth=2, reintroduce='1944759', workers=2,
                tasks=(test_explorer_nested.DELETE,),
                out_dir=os.path.join(out, name), **options)

        full = explorer_to('full').explore(scenario)
        paths = [shards.write(shards.run(
            explorer_to('shards', nested=True, prune=True), [scenario],
            index, 2), os.path.join(out, 'shards')) for index in (1, 0)]
        (_scenario, merged), = shards.merge(
            paths, out_dir=os.path.join(out, 'merged'), workers=2).explored

        self.assertTrue(full.failed, full.summary())
        self.assertEqual({}, full.pruned)
        self.assertGreater(sum(merged.pruned.values()), 0, merged.summary())
        self.assertEqual(explorer.comparable(full),
                         explorer.comparable(merged))


class TestDepthTwoNotReplayed(testing.TestCase):
    """A pair whose first injection's role is not named yet cannot run.

    Up to its first point a depth-2 replay is the recorded run, so the
    roles noted there hold: before the conductor makes the resize's
    migration no role names a host, and the pair ends as not applicable
    whatever its second injection (``explorer.runnable`` leaves it out).
    """

    def test_a_pair_starting_before_the_migration(self):
        scenario = scenario_mod.load(FAKE_MOVES)[0]
        self.assertEqual('resize then revert', scenario.name)
        explore = explorer.Explorer(depth=2, invariants=False, workers=1)
        with explore.kept():
            plan = explore.plan(scenario)
            pairs = explore.candidates(
                [explorer.Point(*p) for p in plan.baseline['points']],
                {step.index: step.unit.roles for step in scenario.steps})
            left_out = [c for c in pairs if c not in plan.runnable]
            self.assertNotEqual([], left_out)
            # The latest first point left out, with a second one where
            # the migration names both hosts.
            pair = [c for c in left_out if c[1].at.roles == (
                'source', 'dest')][-1]
            result = explorer.replay(explore._job(scenario, pair),
                                     pool=explore._pool)
        self.assertEqual((), pair[0].at.roles)
        self.assertTrue(result['inapplicable'], result)


def _reproducer(path, out):
    """A reproducer's text, its own directory left out."""
    with open(path) as source:
        return source.read().replace(os.path.dirname(path), '<out>')
