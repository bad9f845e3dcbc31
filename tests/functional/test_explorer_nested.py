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

from harness.cloud import mode
# Nova is loaded with this module, not inside the test (harness.leaks).
from harness.runners import runner  # noqa: F401
from harness import testing
from tests.functional import test_explorer_branches
from tests.functional import test_explorer_pruning

FIRSTS = 3
SECONDS = 4
SAME = 2
PERIODIC = 'update_available_resource'
DELETE = 'delete_service'
WINDOW = test_explorer_branches.WINDOW


def chosen(runnable):
    """Pairs of a resize point then a confirm point or another resize one.

    ``FIRSTS`` periodics at the resize (the source's in the state the
    destination's ``finish_resize`` starts in, the bug's window, first:
    ``test_explorer_branches.WINDOW``), each with
    ``SECONDS`` periodics at the confirm and ``SAME`` at later resize
    points; and one pair of two confirm points, alone with its first
    (not nested). Where the service delete is a task too, also one
    delete at the resize (the API refuses it: it changes nothing), with
    as many.
    """
    periodic = [pair for pair in runnable if pair[1].task == PERIODIC]
    later = [pair for pair in periodic
             if (pair[0].at.step, pair[1].at.step) == (2, 3)]
    firsts = list(dict.fromkeys(pair[0] for pair in later))
    window = [first for first in firsts
              if (first.at.when, first.at.point) == WINDOW
              and first.task == PERIODIC and first.hosts == ('source',)]
    others = [first for first in firsts
              if first.task == PERIODIC and first not in window]
    firsts = window + others[::7][:FIRSTS - 1] + [
        first for first in firsts if first.task == DELETE][:1]
    pairs = []
    for first in firsts:
        pairs.extend([pair for pair in later
                      if pair[0] == first][::3][:SECONDS])
        pairs.extend([pair for pair in periodic if pair[0] == first
                      and pair[1].at.step == 2][::5][:SAME])
    alone = [pair for pair in periodic
             if (pair[0].at.step, pair[1].at.step) == (3, 3)]
    return pairs + alone[:1]


def nests(plan):
    """How many of the plan's pairs fork from their first's run.

    Those whose first has another pair, and whose second goes in a
    later step, or (where a fork is taken inside a step) in the same
    step, at a point first passed after the first's in the recorded
    run: from the start, such a second fires after the first in that
    step.
    """
    passed = [tuple(point[:5]) for point in plan.baseline['points']]

    def first_passed(at):
        return passed.index((at.step, at.when, at.point, at.host, at.server))
    count = 0
    for pair in plan.runnable:
        first, second = pair
        if sum(1 for other in plan.runnable if other[0] == first) < 2:
            continue
        if second.at.step > first.at.step:
            count += 1
        elif (second.at.step == first.at.step and not mode.THREADING
              and first_passed(second.at) > first_passed(first.at)):
            count += 1
    return count


class TestNestedIsPlain(testing.TestCase):

    def explore(self, nested, prune=False, tasks=()):
        return test_explorer_pruning.explore_share(
            self, chosen, nested=nested, workers=2, prune=prune,
            tasks=tasks)

    def test_nested_exploration_has_the_plain_outcomes(self):
        plain, plain_found, _plan = self.explore(nested=False)
        nested, nested_found, plan = self.explore(nested=True)
        self.assertEqual(FIRSTS * (SECONDS + SAME) + 1,
                         len(plain.outcomes) + plain.inapplicable)
        self.assertTrue(plain.failed, plain.summary())
        self.assertEqual(0, plain.nested)
        # Every resize-then-confirm pair forked from its single's run,
        # and (under eventlet) the resize pairs; the confirm pair, alone
        # with its first, from the scenario's.
        self.assertGreater(nests(plan), FIRSTS * SECONDS - 1)
        self.assertEqual(nests(plan), nested.nested)
        self.assertEqual(plain_found, nested_found)

    def test_nested_pruned_exploration_has_the_pruned_outcomes(self):
        pruned, pruned_found, _plan = self.explore(
            nested=False, prune=True, tasks=(DELETE,))
        nested, nested_found, _plan = self.explore(
            nested=True, prune=True, tasks=(DELETE,))
        self.assertTrue(pruned.failed, pruned.summary())
        self.assertGreater(sum(nested.pruned.values()), 0, nested.summary())
        self.assertEqual(0, pruned.nested)
        self.assertGreater(nested.nested, 0, nested.summary())
        self.assertEqual(pruned.pruned, nested.pruned)
        self.assertEqual(pruned_found, nested_found)
