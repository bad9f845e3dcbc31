"""A pruned exploration finds what the full one does.

State caching (``Explorer(prune=True)``, ``harness.cloud.digest``) ends
a replay whose cloud is, between two steps, as the trunk's with none of
its injections left, and at depth 2 does not run a pair whose first
injection alone left the state before its second one's step as the
trunk's or as another pair's, or could not run. The proof, in the gate
on a share of one scenario: the pinned resize and confirm between two
profiled (libvirt) hosts, at depth 2, with LP#1944759 put back so that
some interleavings fail, pairs of a point of the resize and one of the
confirm spread over both steps' points (a periodic at the second; at
the first a periodic, or a service delete the API must refuse, which
changes nothing), explored in full and pruned:
every interleaving has the same verdict (failed step, label, signature),
as many are not applicable, and the failures shrink to the same
reproducers (``explorer.comparable``); and some were pruned, or the
proof proves nothing (about two minutes on a busy two-core machine:
in ``tox -e functional-proofs``, which the gate runs). A second case
takes pairs of two resize points, the second one the scheduler's,
where no migration names a host (as the recorded run passed it), and
as many whose second point names both: those of the first kind are
not applicable, known from their first injection's run without
replaying them (``explorer.SECOND_INAPPLICABLE``), each as its replay
in full says, and the others are replayed. The full
comparison, every scenario under
tests/functional/explore/ with and without the bug put back, at depths
1 and 2, is ``tox -e explore-soundness`` (a periodic job).
"""

import os

import fixtures

from harness.core import scenario as scenario_mod
from harness.runners import explorer
# Nova is loaded with this module, not inside the test (harness.leaks).
from harness.runners import runner  # noqa: F401
from harness import testing

SCENARIO = os.path.join(os.path.dirname(__file__), 'explore',
                        'pinned_resize_confirm.yaml')
PAIRS = 8


def resize_then_confirm(runnable):
    """Pairs of a resize point then a confirm point, spread over both.

    ``PAIRS`` whose first injection is a service delete the API refuses
    (it changes nothing), and as many of two periodics.
    """
    pairs = [pair for pair in runnable
             if (pair[0].at.step, pair[1].at.step) == (2, 3)
             and pair[1].task == 'update_available_resource']
    chosen = []
    for first in ('delete_service', 'update_available_resource'):
        these = [pair for pair in pairs if pair[0].task == first]
        chosen.extend(these[::max(1, len(these) // PAIRS)][:PAIRS])
    return chosen


def _explored(case, select, **options):
    """Explore the scenario's interleavings ``select(runnable)`` picks.

    At depth 2 with LP#1944759 put back (``options``: the explorer's
    others): the plan, its interleavings' results and the report.
    """
    explore = explorer.Explorer(
        depth=2, reintroduce='1944759',
        out_dir=case.useFixture(fixtures.TempDir()).path, **options)
    with explore.kept():
        plan = explore.plan(scenario_mod.load(SCENARIO)[0])
        plan.runnable = select(plan.runnable)
        plan.candidates = len(plan.runnable)
        results = explore.replay_plan(plan, range(len(plan.runnable)))
        report = explore.conclude(plan, results)
    return plan, results, report


def explore_share(case, select, **options):
    """``_explored``'s report, what it must agree on, and the plan."""
    plan, _, report = _explored(case, select, **options)
    return report, explorer.comparable(report), plan


def second_unnamed(runnable):
    """Pairs of two resize points, of a first injection on one host.

    ``PAIRS // 2`` whose second point is one where no migration named a
    host in the recorded run (the scheduler's), and as many whose second
    point named both, the first of each in plan order.
    """
    pairs = [pair for pair in runnable
             if (pair[0].at.step, pair[1].at.step) == (2, 2)
             and len(pair[0].hosts) == 1]
    unnamed = [pair for pair in pairs if pair[1].at.roles == ()]
    named = [pair for pair in pairs
             if {'source', 'dest'} <= set(pair[1].at.roles)]
    return unnamed[:PAIRS // 2] + named[:PAIRS // 2]


def explore_results(case, select, **options):
    """``_explored``'s plan, results, and what its report must agree on."""
    plan, results, report = _explored(case, select, **options)
    return plan, results, explorer.comparable(report)


class TestPrunedIsFull(testing.TestCase):

    def explore(self, prune):
        return explore_share(self, resize_then_confirm, prune=prune,
                             tasks=('delete_service',))[:2]

    def test_pruned_exploration_has_the_full_outcomes(self):
        full, full_found = self.explore(prune=False)
        pruned, pruned_found = self.explore(prune=True)
        self.assertEqual(2 * PAIRS,
                         len(full.outcomes) + full.inapplicable)
        self.assertEqual({}, full.pruned)
        self.assertGreater(sum(pruned.pruned.values()), 0, pruned.summary())
        # The refused deletes changed nothing: their pairs took their
        # seconds' outcomes, those seconds replayed alone after the firsts
        # (``Explorer._alone``).
        self.assertIn(explorer.FIRST_CHANGED_NOTHING, pruned.pruned,
                      pruned.summary())
        self.assertTrue(full.failed, full.summary())
        self.assertEqual(full_found, pruned_found)

    def test_a_second_injection_known_not_applicable_is_so(self):
        plan, full, full_found = explore_results(
            self, second_unnamed, prune=False)
        self.assertEqual(PAIRS, len(plan.runnable))
        _plan, pruned, pruned_found = explore_results(
            self, second_unnamed, prune=True)
        known = [number for number, result in enumerate(pruned)
                 if result.get('pruned') == explorer.SECOND_INAPPLICABLE]
        self.assertTrue(known, [result.get('pruned') for result in pruned])
        # Each not applicable, as its replay in full was; the others run.
        for number in known:
            self.assertTrue(full[number]['inapplicable'],
                            plan.runnable[number])
        self.assertEqual(full_found, pruned_found)
