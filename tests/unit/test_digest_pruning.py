"""State caching in the explorer: what a pruned replay's outcome is.

Nova-free: the explorer's bookkeeping of steps, boundaries and known
results (``explorer._labels``, ``_boundaries``, ``_moved``,
``Explorer._known``); what the digests are is ``test_digest``'s, and that
pruned explorations find what full ones do is
tests/functional/test_explorer_pruning.py's.
"""

from harness.core import scenario
from harness.runners import explorer
from harness import testing
from tests.unit import test_explorer

# A resize and confirm between two fake hosts, then a delete.
HEAD = test_explorer.TestForkedInsideTheStep.head + '  - delete: vm1\n'
UAR = 'update_available_resource'
RESIZE = explorer.Point(2, 'before', 'finish_resize', 'dst', 'vm1')
RESIZE_LATER = explorer.Point(2, 'after', 'finish_resize', 'dst', 'vm1')
CONFIRM = explorer.Point(3, 'after', 'confirm_resize', 'src', 'vm1')


def load():
    return scenario.load_file('s.yaml', HEAD)[1][0]


def single(point, *hosts):
    return explorer.Injection(point, UAR, hosts or ('source',))


def result(failed=False, step=None, inapplicable=False, digests=None,
           rejoined=None, name='r'):
    return {'failed': failed, 'step': step, 'label': name, 'problems': [],
            'inapplicable': inapplicable, 'digests': digests or {},
            'rejoined': rejoined, 'phases': {}}


class TestLabels(testing.TestCase):

    def test_inject_steps_named_by_the_step_they_go_before(self):
        both = single(RESIZE, 'source', 'dest')
        self.assertEqual(
            [('step', 1), ('inject', 2, 0), ('inject', 2, 1), ('step', 2),
             ('step', 3), ('step', 4)],
            explorer._labels(load(), (both,)))
        # What injected_steps puts in, in number.
        self.assertEqual(6, len(explorer.injected_steps(load(), (both,))))

    def test_a_failed_step_moves_to_the_same_step_of_another_replay(self):
        trunk = load()
        alone = (single(CONFIRM),)
        pair = (single(RESIZE, 'source', 'dest'), single(CONFIRM))
        # The confirm is step 4 with one inject before it, step 6 with
        # three.
        moved = explorer._moved(trunk, result(True, 4), alone, pair)
        self.assertEqual(6, moved['step'])
        self.assertEqual(5, explorer._moved(
            trunk, result(True, 3), alone, pair)['step'])  # its inject
        self.assertIsNone(explorer._moved(
            trunk, result(), alone, pair)['step'])


class TestBoundaries(testing.TestCase):

    def test_after_each_step_from_the_first_injected_into_but_the_last(self):
        pair = (single(RESIZE), single(CONFIRM))
        # Steps: boot, inject, resize, inject, confirm, delete.
        self.assertEqual({3: (2, 1), 5: (3, 0)},
                         explorer._boundaries(load(), pair))
        self.assertEqual({3: (2, 0), 4: (3, 0)},
                         explorer._boundaries(load(), (single(RESIZE),)))


class _Pairs(testing.TestCase):
    """The scenario, its trunk's digests and injections of its steps."""

    reference = [None, 'boot', 'resized', 'confirmed', 'deleted']

    def setUp(self):
        super().setUp()
        self.trunk = load()
        self.first = single(RESIZE)
        self.other_first = single(RESIZE_LATER)
        self.second = single(CONFIRM)
        self.explorer = explorer.Explorer(workers=1, depth=2)


class TestKnown(_Pairs):
    """Which depth-2 pairs are not run, and whose outcome they take."""

    def known(self, pair, alone, groups=None, number=0):
        return self.explorer._known(self.trunk, pair, alone, self.reference,
                                    {} if groups is None else groups,
                                    number)

    def test_first_changed_nothing_takes_the_second_alone(self):
        alone = {self.first: result(digests={2: 'resized'}),
                 self.second: result(True, 4, name='confirm failed')}
        found = self.known((self.first, self.second), alone)
        self.assertEqual(explorer.FIRST_CHANGED_NOTHING, found['pruned'])
        self.assertTrue(found['failed'])
        self.assertEqual('confirm failed', found['label'])
        # Its own confirm: after two inject steps, not one.
        self.assertEqual(5, found['step'])

    def test_back_in_the_trunk_before_the_second(self):
        alone = {self.first: result(rejoined=2),
                 self.second: result()}
        found = self.known((self.first, self.second), alone)
        self.assertEqual(explorer.FIRST_CHANGED_NOTHING, found['pruned'])

    def test_the_same_state_before_the_same_second_is_run_once(self):
        alone = {self.first: result(digests={2: 'refreshed'}),
                 self.other_first: result(digests={2: 'refreshed'}),
                 self.second: result()}
        groups = {}
        self.assertIsNone(self.known((self.first, self.second), alone,
                                     groups, 0))
        self.assertEqual(0, self.known((self.other_first, self.second),
                                       alone, groups, 1))

    def test_another_state_is_run(self):
        alone = {self.first: result(digests={2: 'refreshed'}),
                 self.other_first: result(digests={2: 'other'}),
                 self.second: result()}
        groups = {}
        self.known((self.first, self.second), alone, groups, 0)
        self.assertIsNone(self.known((self.other_first, self.second),
                                     alone, groups, 1))

    def test_unknown_state_or_a_failure_before_the_second_is_run(self):
        for first in (result(digests={2: None}), result(),
                      result(True, 3, digests={2: 'resized'})):
            self.assertIsNone(self.known((self.first, self.second), {
                self.first: first, self.second: result()}))

    def test_a_failure_after_the_second_s_step_began_does_not_count(self):
        # The first alone failed at the confirm (its step 4): the state
        # before it was the trunk's.
        alone = {self.first: result(True, 4, digests={2: 'resized'}),
                 self.second: result()}
        self.assertEqual(explorer.FIRST_CHANGED_NOTHING, self.known(
            (self.first, self.second), alone)['pruned'])

    def test_first_not_applicable_makes_the_pair_so(self):
        alone = {self.first: result(inapplicable=True),
                 self.second: result()}
        found = self.known((self.first, self.second), alone)
        self.assertTrue(found['inapplicable'])
        self.assertEqual(explorer.FIRST_INAPPLICABLE, found['pruned'])

    def test_two_injections_in_one_step_are_run(self):
        alone = {self.first: result(digests={2: 'resized'}),
                 self.other_first: result()}
        self.assertIsNone(self.known((self.first, self.other_first), alone))


class TestAlone(_Pairs):
    """Which injections a pruned depth 2 replays alone, and in what batches.

    Each pair's first injection, then only the second injections whose
    pairs take their outcome (their first alone changed nothing before
    them): a shard holds a few firsts' pairs, and the seconds of those
    are nearly every injection of the scenario.
    """

    delete = explorer.Point(4, 'before', 'terminate_instance', 'dst', 'vm1')

    def setUp(self):
        super().setUp()
        self.last = single(self.delete)
        self.batches = []
        # A job is its injection here; its result is the test's.
        self.explorer._job = (
            lambda scenario, injections, reference, record: injections[0])

    def alone(self, chosen, results):
        def replay_jobs(jobs):
            self.batches.append(list(jobs))
            return [results[job] for job in jobs]
        self.explorer._replay_jobs = replay_jobs
        self.explorer._extra = 0
        return self.explorer._alone(self.trunk, chosen, self.reference)

    def test_only_the_first_injections_when_each_changed_something(self):
        results = {self.first: result(digests={2: 'refreshed', 3: 'x'}),
                   self.other_first: result(digests={2: 'other'})}
        found = self.alone([(self.first, self.second),
                            (self.other_first, self.second),
                            (self.first, self.last)], results)
        self.assertEqual([[self.first, self.other_first]], self.batches)
        self.assertEqual(set(results), set(found))
        self.assertEqual(2, self.explorer._extra)

    def test_a_second_whose_first_changed_nothing_next(self):
        results = {self.first: result(digests={2: 'resized'}),
                   self.other_first: result(digests={2: 'other'}),
                   self.second: result(True, 4, name='confirm failed')}
        chosen = [(self.first, self.second), (self.other_first, self.second)]
        found = self.alone(chosen, results)
        self.assertEqual([[self.first, self.other_first], [self.second]],
                         self.batches)
        self.assertEqual(3, self.explorer._extra)
        # The pair it was replayed for takes its outcome.
        known = self.explorer._known(self.trunk, chosen[0], found,
                                     self.reference, {}, 0)
        self.assertEqual(explorer.FIRST_CHANGED_NOTHING, known['pruned'])
        self.assertEqual('confirm failed', known['label'])

    def test_a_second_that_is_a_first_too_is_replayed_once(self):
        # The confirm's injection alone left the state before the delete
        # as the trunk's: the delete's is needed, the confirm's is run.
        results = {self.first: result(digests={2: 'resized'}),
                   self.second: result(digests={3: 'confirmed'}),
                   self.last: result()}
        self.alone([(self.first, self.second), (self.second, self.last)],
                   results)
        self.assertEqual([[self.first, self.second], [self.last]],
                         self.batches)

    def test_a_first_not_applicable_needs_no_second(self):
        results = {self.first: result(inapplicable=True,
                                      digests={2: 'resized'})}
        self.alone([(self.first, self.second)], results)
        self.assertEqual([[self.first]], self.batches)
