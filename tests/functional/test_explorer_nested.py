"""A nested exploration finds what the plain one does.

Nested branching (``Explorer(nested=True)``, ``explorer.replay_branched``)
forks the depth-2 pairs that share their first injection, and put their
second in a later step, from one run of that first injection alone, at
the point where their second fires (or before its step), instead of
each from the scenario's own run. The proof, on a share of one
scenario: the pinned resize and confirm between two profiled (libvirt)
hosts, at depth 2, with LP#1944759 put back so that some interleavings
fail, the pairs of three first injections at points of the resize (the
bug's window among them) each with four points of the confirm, and a
pair of two resize points (one step: not nested), explored plainly and
nested: every interleaving has the same verdict (failed step, label,
signature), as many are not applicable, and the failures shrink to the
same reproducers (``explorer.comparable``); and the nested one did fork
the resize-then-confirm pairs from their singles' runs, or the proof
proves nothing. The same with state caching (``prune``), which nests the
pairs it runs: the same outcomes nested or not, some pairs pruned, some
nested.
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
FIRSTS = 3
SECONDS = 4
PERIODIC = 'update_available_resource'
DELETE = 'delete_service'


def chosen(runnable):
    """Pairs of a resize point then a confirm point; one of two resizes.

    ``FIRSTS`` periodics at the resize (the source's before the
    destination's ``finish_resize``, the bug's window, first), each with
    ``SECONDS`` periodics at the confirm; and one pair of two resize
    points. Where the service delete is a task too, also one delete at
    the resize (the API refuses it: it changes nothing), with as many.
    """
    later = [pair for pair in runnable
             if (pair[0].at.step, pair[1].at.step) == (2, 3)
             and pair[1].task == PERIODIC]
    firsts = list(dict.fromkeys(pair[0] for pair in later))
    window = [first for first in firsts
              if first.at.point == 'finish_resize' and first.task == PERIODIC
              and first.at.when == 'before' and first.hosts == ('source',)]
    periodics = [first for first in firsts
                 if first.task == PERIODIC and first not in window]
    firsts = window + periodics[::7][:FIRSTS - 1] + [
        first for first in firsts if first.task == DELETE][:1]
    pairs = []
    for first in firsts:
        pairs.extend([pair for pair in later
                      if pair[0] == first][::3][:SECONDS])
    same_step = [pair for pair in runnable
                 if (pair[0].at.step, pair[1].at.step) == (2, 2)]
    return pairs + same_step[:1]


class TestNestedIsPlain(testing.TestCase):

    def explore(self, nested, prune=False, tasks=()):
        explore = explorer.Explorer(
            depth=2, reintroduce='1944759', nested=nested, workers=2,
            prune=prune, tasks=tasks,
            out_dir=self.useFixture(fixtures.TempDir()).path)
        with explore.kept():
            plan = explore.plan(scenario_mod.load(SCENARIO)[0])
            plan.runnable = chosen(plan.runnable)
            plan.candidates = len(plan.runnable)
            results = explore.replay_plan(plan, range(len(plan.runnable)))
            report = explore.conclude(plan, results)
        return report, explorer.comparable(report)

    def test_nested_exploration_has_the_plain_outcomes(self):
        plain, plain_found = self.explore(nested=False)
        nested, nested_found = self.explore(nested=True)
        self.assertEqual(FIRSTS * SECONDS + 1,
                         len(plain.outcomes) + plain.inapplicable)
        self.assertTrue(plain.failed, plain.summary())
        self.assertEqual(0, plain.nested)
        # Every resize-then-confirm pair forked from its single's run;
        # the pair of two resize points from the scenario's.
        self.assertEqual(FIRSTS * SECONDS, nested.nested)
        self.assertEqual(plain_found, nested_found)

    def test_nested_pruned_exploration_has_the_pruned_outcomes(self):
        pruned, pruned_found = self.explore(nested=False, prune=True,
                                            tasks=(DELETE,))
        nested, nested_found = self.explore(nested=True, prune=True,
                                            tasks=(DELETE,))
        self.assertTrue(pruned.failed, pruned.summary())
        self.assertGreater(sum(nested.pruned.values()), 0, nested.summary())
        self.assertEqual(0, pruned.nested)
        self.assertGreater(nested.nested, 0, nested.summary())
        self.assertEqual(pruned.pruned, nested.pruned)
        self.assertEqual(pruned_found, nested_found)
