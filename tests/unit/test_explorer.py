"""The explorer's plan: which interleavings, and nothing bug-specific."""

import json
import os
import re

import fixtures

from harness import bugs
from harness.core import errors
from harness.core import problems
from harness.core import scenario
from harness.runners import explorer
from harness.runners import phases as phases_mod
from harness.runners import shrinking
from harness import testing

SOURCE = os.path.join(os.path.dirname(explorer.__file__), 'explorer.py')


class TestNoBugSpecificCode(testing.TestCase):

    def test_explorer_names_no_bug_and_no_reintroduction(self):
        with open(SOURCE) as f:
            text = f.read()
        for bug in bugs.known():
            self.assertNotIn(bug.id, text)
        self.assertIsNone(re.search(r'harness\.bugs\.lp\d', text))
        self.assertIsNone(re.search(r'\b\d{6,7}\b', text))
        # It injects periodics at points it recorded, not at points it
        # was told about.
        self.assertNotIn('finish_resize', text)
        self.assertNotIn('old_flavor', text)


class TestCandidates(testing.TestCase):

    points = [explorer.Point(2, 'before', 'finish_resize', 'dst', 'vm1'),
              explorer.Point(3, 'after', 'confirm_resize', 'src', 'vm1')]

    def test_depth_one_tries_each_point_with_each_host_order(self):
        plan = explorer.Explorer(workers=1).candidates(self.points)
        self.assertEqual(2 * 4, len(plan))
        self.assertEqual(
            [('source',), ('dest',), ('source', 'dest'), ('dest', 'source')],
            [c[0].hosts for c in plan[:4]])
        self.assertTrue(all(c[0].task == 'update_available_resource'
                            for c in plan))

    def test_a_kind_without_a_migration_is_tried_on_the_server_host(self):
        # A rebuild's or unshelve's points: no migration names a source
        # or destination; the server's own host takes the periodic.
        self.assertEqual((('server_host',),),
                         explorer.orders(('server_host',)))
        self.assertEqual(explorer.ORDERS,
                         explorer.orders(('source', 'dest')))
        plan = explorer.Explorer(workers=1).candidates(
            self.points, roles={2: ('server_host',)})
        self.assertEqual(1 + 4, len(plan))
        self.assertEqual(('server_host',), plan[0][0].hosts)

    def test_more_tasks_multiply_the_plan(self):
        plan = explorer.Explorer(
            tasks=['_poll_unconfirmed_resizes'], workers=1).candidates(
            self.points)
        self.assertEqual(2 * 2 * 4, len(plan))

    def test_depth_two_tries_pairs_at_different_points(self):
        plan = explorer.Explorer(depth=2, workers=1).candidates(self.points)
        self.assertEqual(4 * 4, len(plan))
        self.assertTrue(all(a.at != b.at for a, b in plan))

    def test_injection_steps_name_the_point_and_hosts(self):
        injection = explorer.Injection(self.points[0],
                                       'update_available_resource',
                                       ('dest', 'source'))
        self.assertEqual(
            [{'inject': {'before': 'finish_resize',
                         'run': 'update_available_resource', 'on': 'dest',
                         'server': 'vm1', 'at_host': 'dst'}},
             {'inject': {'before': 'finish_resize',
                         'run': 'update_available_resource',
                         'on': 'source', 'server': 'vm1',
                         'at_host': 'dst'}}],
            injection.steps())

    def test_restart_is_opt_in_and_tried_on_one_host_at_a_time(self):
        default = explorer.Explorer(workers=1)
        self.assertEqual(('update_available_resource',), default.tasks)
        plan = explorer.Explorer(tasks=['restart'], workers=1).candidates(
            self.points)
        restarts = [c for c in plan if c[0].task == 'restart']
        # Each point: the periodic's four orders, and a restart of the
        # source or of the destination (a restart ends the work there).
        self.assertEqual(2 * 4 + 2 * 2, len(plan))
        self.assertEqual([('source',), ('dest',)] * 2,
                         [c[0].hosts for c in restarts])

    def test_a_restart_injects_a_restart_step(self):
        injection = explorer.Injection(self.points[0], 'restart', ('dest',))
        self.assertEqual(
            [{'inject': {'before': 'finish_resize', 'restart': 'dest',
                         'server': 'vm1', 'at_host': 'dst'}}],
            injection.steps())

    def test_bad_options_are_refused(self):
        self.assertRaises(errors.ScenarioError, explorer.Explorer,
                          tasks=['no_such_task'])
        self.assertRaises(errors.ScenarioError, explorer.Explorer, depth=3)


class _Step(object):

    def __init__(self, index, arms=False):
        self.index = index
        self.unit = type('Unit', (), {'arms': arms})


class _Checker(object):

    def __init__(self):
        self.timings = {'tracker_agrees': 0.0}


class TestPhases(testing.TestCase):
    """Where a replay's time goes: the clock and the checks are faked."""

    def setUp(self):
        super().setUp()
        self.now = [100.0]
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.phases.time.monotonic', lambda: self.now[0]))

    def tick(self, seconds):
        self.now[0] += seconds

    def test_steps_before_the_injection_are_the_prefix(self):
        checker = _Checker()
        phases = phases_mod.Phases(prefix=1, checkers=[checker])
        self.tick(2.0)                       # loaded, cloud put back
        phases.run_started(None, None)
        for index, took, checked in ((1, 1.0, 0.5), (2, 3.0, 1.0),
                                     (3, 2.0, 0.25)):
            phases.step_started(_Step(index))
            self.tick(took)
            checker.timings['tracker_agrees'] += checked
            phases.step_done(_Step(index), None)
        self.tick(0.5)                       # the run's end
        self.assertEqual({'reset': 2.0, 'prefix': 1.0, 'steps': 3.75,
                          'checks': 1.25, 'other': 0.5}, phases.seconds())

    def test_a_child_forked_inside_a_step_times_the_rest_of_it(self):
        # The trunk starts step 2 and forks the child one second into it;
        # the child arms its inject (step 2 of its own), hears of it once
        # the step is over, and the step (3 of its own) ends 2 s later.
        checker = _Checker()
        phases = phases_mod.Phases(prefix=4, checkers=[checker])
        phases.run_started(None, None)
        phases.step_started(_Step(2))
        self.tick(1.0)
        phases.branched(1, self.now[0])
        self.tick(2.0)
        checker.timings['tracker_agrees'] += 0.5
        phases.step_started(_Step(2, arms=True))
        phases.step_done(_Step(2, arms=True), None)
        phases.step_done(_Step(3), None)
        self.assertEqual({'reset': 0.0, 'prefix': 0.0, 'steps': 1.5,
                          'checks': 0.5, 'other': 0.0}, phases.seconds())

    def test_a_report_averages_the_phases_of_its_replays(self):
        report = explorer.Report('s')
        report.add_phases(dict.fromkeys(explorer.PHASES, 1.0))
        report.add_phases(dict.fromkeys(explorer.PHASES, 3.0))
        self.assertEqual('per replay: reset 2.00 s, prefix 2.00 s, steps '
                         '2.00 s, checks 2.00 s, other 2.00 s (mean of 2)',
                         report.per_replay())


class TestDeleteServiceCandidates(testing.TestCase):
    """The opt-in ``delete_service`` task's plan and the steps it injects."""

    points = TestCandidates.points

    def test_delete_service_is_opt_in_and_tried_on_one_host_at_a_time(self):
        plan = explorer.Explorer(tasks=['delete_service'],
                                 workers=1).candidates(self.points)
        deletes = [c for c in plan if c[0].task == 'delete_service']
        # Each point: the periodic's four orders, and the service delete
        # of the source or of the destination.
        self.assertEqual(2 * 4 + 2 * 2, len(plan))
        self.assertEqual([('source',), ('dest',)] * 2,
                         [c[0].hosts for c in deletes])

    def test_a_service_delete_is_sent_expecting_the_refusal(self):
        injection = explorer.Injection(self.points[0], 'delete_service',
                                       ('dest',))
        self.assertEqual(
            [{'inject': {'before': 'finish_resize',
                         'do': {'delete_service': 'dest'}, 'refused': True,
                         'server': 'vm1', 'at_host': 'dst'}}],
            injection.steps())

    def test_the_injected_service_delete_loads(self):
        # What a replay runs: the scenario with the injection before the
        # step that passes its point.
        head = ('name: resize\n'
                'hosts: {src: {driver: fake}, dst: {driver: fake}}\n'
                'flavors: {small: {vcpus: 1, ram: 512, disk: 1},\n'
                '          large: {vcpus: 2, ram: 1024, disk: 2}}\n'
                'steps:\n'
                '  - boot: {server: vm1, flavor: small, host: src}\n')
        raw = explorer.Injection(self.points[0], 'delete_service',
                                 ('source',)).steps()[0]
        loaded = scenario.load_file('s.yaml', head + '  - %s\n'
                                    '  - resize: {server: vm1, flavor: '
                                    'large}\n' % json.dumps(raw))[1][0]
        args = loaded.steps[1].args
        self.assertEqual(('delete_service', 'source'), args['do'])
        self.assertIs(True, args['refused'])
        self.assertEqual(('vm1', 'dst'), (args['server'], args['at_host']))


class TestBranchable(testing.TestCase):
    """Which replays can branch from one run of their scenario."""

    base = {'name': 's', 'hosts': {'a': {}}, 'steps': [{'boot': 'x'},
                                                       {'resize': 'x'},
                                                       {'delete': 'x'}]}

    def _job(self, steps, **changes):
        document = dict(self.base, steps=steps, **changes)
        return {'document': document, 'base': self.base, 'where': 'f',
                'reintroduce': None, 'invariants': True}

    def test_shared_steps_count_up_to_the_first_that_differs(self):
        inject = {'inject': {'before': 'p'}}
        steps = self.base['steps']
        self.assertEqual(3, explorer.branching.shared_steps(
            self.base, dict(self.base)))
        self.assertEqual(1, explorer.branching.shared_steps(
            self.base, dict(self.base, steps=steps[:1] + [inject]
                            + steps[1:])))
        self.assertEqual(0, explorer.branching.shared_steps(
            self.base, dict(self.base, steps=[inject] + steps)))

    def test_another_cloud_shares_nothing(self):
        self.assertIsNone(explorer.branching.shared_steps(
            self.base, dict(self.base, hosts={'b': {}})))
        self.assertFalse(explorer.branchable(
            [self._job(self.base['steps'], hosts={'b': {}})]))

    def test_jobs_of_one_scenario_branch_others_do_not(self):
        same = self._job(self.base['steps'])
        self.assertTrue(explorer.branchable([same, same]))
        self.assertFalse(explorer.branchable([]))
        other_bug = dict(same, reintroduce='1')
        self.assertFalse(explorer.branchable([same, other_bug]))
        no_base = dict(same, base=None)
        self.assertFalse(explorer.branchable([same, no_base]))


class TestForkedInsideTheStep(testing.TestCase):
    """Which replays fork inside the trunk's step, at their point."""

    head = ('name: resize\n'
            'hosts: {src: {driver: fake}, dst: {driver: fake}}\n'
            'flavors: {small: {vcpus: 1, ram: 512, disk: 1},\n'
            '          large: {vcpus: 2, ram: 1024, disk: 2}}\n'
            'steps:\n'
            '  - boot: {server: vm1, flavor: small, host: src}\n'
            '  - resize: {server: vm1, flavor: large}\n'
            '  - confirm: vm1\n')
    resize = explorer.Point(2, 'before', 'finish_resize', 'dst', 'vm1')
    confirm = explorer.Point(3, 'after', 'confirm_resize', 'src', 'vm1')

    def _load(self, *injections):
        trunk = scenario.load_file('s.yaml', self.head)[1][0]
        steps = explorer.injected_steps(trunk, injections)
        return trunk, scenario.parse(trunk.document(steps), 's.yaml',
                                     's.yaml')

    def _at(self, trunk, replay):
        return explorer._injected_at(
            trunk, replay, explorer.branching.shared_steps(
                trunk.document(), replay.document()))

    def test_injections_before_one_step_fork_at_their_points(self):
        # Both orders on both hosts: two inject steps before the resize.
        trunk, replay = self._load(explorer.Injection(
            self.resize, 'update_available_resource', ('source', 'dest')))
        self.assertEqual([('finish_resize', 'before', 'dst', 'vm1')] * 2,
                         self._at(trunk, replay))

    def test_injections_before_two_steps_fork_before_the_first(self):
        trunk, replay = self._load(
            explorer.Injection(self.resize, 'update_available_resource',
                               ('source',)),
            explorer.Injection(self.confirm, 'update_available_resource',
                               ('dest',)))
        self.assertIsNone(self._at(trunk, replay))

    def test_a_replay_without_a_step_forks_before_it(self):
        # A shrinking trial: the trunk's steps but the confirm.
        trunk = scenario.load_file('s.yaml', self.head)[1][0]
        trial = scenario.parse(
            trunk.document(explorer.injected_steps(trunk, ())[:2]),
            's.yaml', 's.yaml')
        self.assertIsNone(self._at(trunk, trial))
        self.assertIsNone(explorer._injected_at(trunk, trunk, 3))


class TestNested(testing.TestCase):
    """Which depth-2 pairs fork from a run of their first injection."""

    head = TestForkedInsideTheStep.head
    resize = TestForkedInsideTheStep.resize
    resize_later = explorer.Point(2, 'after', 'finish_resize', 'dst', 'vm1')
    confirm = TestForkedInsideTheStep.confirm
    confirm_later = explorer.Point(3, 'after', 'confirm_resize', 'dst',
                                   'vm1')

    def _jobs(self, pairs, nested=True):
        trunk = scenario.load_file('s.yaml', self.head)[1][0]
        explore = explorer.Explorer(workers=1, depth=2, nested=nested)
        return [explore._nesting(trunk, [
            explorer.Injection(at, 'update_available_resource', ('source',))
            for at in pair]) for pair in pairs]

    def test_pairs_into_a_later_step_nest_under_their_first(self):
        jobs = self._jobs([(self.resize, self.confirm),
                           (self.resize, self.confirm_later),
                           (self.resize_later, self.confirm)])
        single = jobs[0]['single']
        self.assertEqual(single, jobs[1]['single'])
        # The single: the trunk's steps with the first's inject step.
        self.assertEqual(
            ['boot', 'inject', 'resize', 'confirm'],
            [list(step)[0] for step in single['document']['steps']])
        self.assertEqual([1, 3, 4], single['steps_at'])
        # The first two share it; the third's first is alone.
        self.assertEqual([(single, [0, 1], [])], explorer._nests(jobs))

    def test_pairs_in_one_step_nest_where_steps_fork_inside(self):
        jobs = self._jobs([(self.resize, self.resize_later),
                           (self.resize, self.confirm),
                           (self.confirm, self.confirm_later)])
        single = jobs[0]['single']
        self.assertEqual(single, jobs[1]['single'])
        # The second's inject step before the first's: both before the
        # resize, in the order the pair's document has them.
        self.assertEqual(
            ['boot', 'inject', 'inject', 'resize', 'confirm'],
            [list(step)[0] for step in jobs[0]['document']['steps']])
        self.assertEqual([(single, [1], [0])], explorer._nests(jobs))
        # Where no fork is taken inside a step, one pair is left.
        self.assertEqual([], explorer._nests(jobs, same_step=False))

    def test_pairs_not_nested_do_not(self):
        plain = self._jobs([(self.resize, self.confirm),
                            (self.resize, self.confirm_later)],
                           nested=False)
        self.assertEqual([], explorer._nests(plain))

    def test_a_single_that_is_not_the_pairs_first_nests_nothing(self):
        # Its document is not the pair's up to its own inject step.
        jobs = self._jobs([(self.resize, self.confirm),
                           (self.resize, self.confirm_later)])
        for job in jobs:
            job['single'] = dict(jobs[0]['single'], document=dict(
                job['base'], steps=job['base']['steps'][:1] + [
                    {'inject': {'before': 'resize_instance', 'run':
                                'update_available_resource',
                                'on': 'dest'}}] + job['base']['steps'][1:]))
        self.assertEqual([], explorer._nests(jobs))


class _MappingExplorer(explorer.Explorer):
    """Notes each ``_map`` (the jobs of one trunk run), answers by job."""

    def __init__(self, **options):
        super().__init__(workers=1, **options)
        self.mapped = []

    def _map(self, jobs, done=None):
        self.mapped.append([_injected(job) for job in jobs])
        return [{'for': _injected(job)} for job in jobs]


def _injected(job):
    """The ``on`` roles of a job's inject steps, in its document's order."""
    return tuple(step['inject']['on'] for step in job['document']['steps']
                 if 'inject' in step)


class TestOneHostFirst(testing.TestCase):
    """At depth 1 the singles run first; results come in plan order."""

    head = TestForkedInsideTheStep.head
    points = [TestForkedInsideTheStep.resize, TestForkedInsideTheStep.confirm]

    def _plan(self, explore):
        trunk = scenario.load_file('s.yaml', self.head)[1][0]
        candidates = explore.candidates(self.points)
        return explorer.Plan(trunk, {}, len(candidates),
                             explorer.runnable(candidates))

    def test_depth_one_runs_one_host_first_then_both(self):
        explore = _MappingExplorer()
        plan = self._plan(explore)
        indexes = range(len(plan.runnable))
        results = explore.replay_plan(plan, indexes)
        # Each point's four orders (``ORDERS``): source, dest, then both
        # either way round. Two trunk runs: the two points' singles,
        # then their pairs of hosts.
        singles = [('source',), ('dest',)] * 2
        both = [('source', 'dest'), ('dest', 'source')] * 2
        self.assertEqual([singles, both], explore.mapped)
        # Results in plan order, each its own interleaving's.
        self.assertEqual([(('source',), ('dest',), ('source', 'dest'),
                           ('dest', 'source'))[i % 4] for i in indexes],
                         [result['for'] for result in results])

    def test_just_after_a_selecting_save_first_of_each_kind(self):
        # Between the resize's finish_resize and the confirm, the save of
        # the instance's new host: its singles run before the other
        # points' singles, its pairs of hosts before theirs; four trunk
        # runs. Results still in plan order.
        explore = _MappingExplorer()
        resize, confirm = self.points
        moved = explorer.Point(2, 'after', 'instance.host', 'src', 'vm1')
        candidates = explore.candidates([resize, moved, confirm])
        plan = explorer.Plan(scenario.load_file('s.yaml', self.head)[1][0],
                             {}, len(candidates),
                             explorer.runnable(candidates))
        results = explore.replay_plan(plan, range(len(plan.runnable)))
        singles = [('source',), ('dest',)]
        both = [('source', 'dest'), ('dest', 'source')]
        self.assertEqual([singles, singles * 2, both, both * 2],
                         explore.mapped)
        self.assertEqual(
            [[str(resize)] * 4, [str(moved)] * 4, [str(confirm)] * 4],
            [[str(c[0].at) for c in plan.runnable[i:i + 4]]
             for i in (0, 4, 8)])
        self.assertEqual([(('source',), ('dest',), ('source', 'dest'),
                           ('dest', 'source'))[i % 4] for i in range(12)],
                         [result['for'] for result in results])

    def test_a_share_of_the_plan_keeps_its_order(self):
        # A shard's indexes: the results in the order asked for.
        explore = _MappingExplorer()
        plan = self._plan(explore)
        # 6: the confirm's source then dest; 2: the resize's; 1: the
        # resize's dest alone.
        results = explore.replay_plan(plan, [6, 2, 1])
        self.assertEqual(
            [[('dest',)], [('source', 'dest'), ('source', 'dest')]],
            explore.mapped)
        self.assertEqual([('source', 'dest'), ('source', 'dest'),
                          ('dest',)],
                         [result['for'] for result in results])

    def test_depth_two_runs_in_plan_order(self):
        # Its pairs nest by their first injection (``_nests``): one run.
        explore = _MappingExplorer(depth=2)
        plan = self._plan(explore)
        explore.replay_plan(plan, range(len(plan.runnable)))
        self.assertEqual(1, len(explore.mapped))
        self.assertEqual(16, len(explore.mapped[0]))

    def test_the_rank_of_an_interleaving(self):
        resize, confirm = self.points
        one = explorer.Injection(resize, 'update_available_resource',
                                 ('source',))
        both = explorer.Injection(confirm, 'update_available_resource',
                                  ('dest', 'source'))
        self.assertEqual(0, explorer.one_host_first((one,)))
        self.assertEqual(1, explorer.one_host_first((both,)))
        self.assertEqual(1, explorer.one_host_first((one, both)))
        # Neither point is just after a save: each kind's second rank.
        self.assertEqual(1, explorer.depth_one_rank((one,)))
        self.assertEqual(3, explorer.depth_one_rank((both,)))

    def test_which_points_are_just_after_a_selecting_save(self):
        def rank(when, point):
            return explorer.after_a_selecting_save((explorer.Injection(
                explorer.Point(2, when, point, 'src', 'vm1'),
                'update_available_resource', ('source',)),))
        # What update_available_resource selects by: the instance's host,
        # a migration's status.
        self.assertEqual(0, rank('after', 'instance.host'))
        self.assertEqual(0, rank('after', 'migration.status=finished'))
        self.assertEqual(0, rank('after', 'migration.status=confirmed'))
        # Before the save the periodic counts what it did before it.
        self.assertEqual(1, rank('before', 'instance.host'))
        self.assertEqual(1, rank('before', 'migration.status=finished'))
        # RPC calls and the tracker's own methods are no such save.
        self.assertEqual(1, rank('after', 'finish_resize'))
        self.assertEqual(1, rank('after', 'tracker.drop_move_claim_at_dest'))


class TestShrinkingTrials(testing.TestCase):
    """Which removals a shrinking round replays."""

    head = TestForkedInsideTheStep.head
    resize = TestForkedInsideTheStep.resize

    def _trials(self, *injections):
        trunk = scenario.load_file('s.yaml', self.head)[1][0]
        steps = explorer.injected_steps(trunk, injections)
        shrinker = shrinking.Shrinker(trunk, replay=None)
        return [[list(step)[0] for step in document['steps']]
                if document else None
                for document in (
                    shrinker.trial(steps[:position] + steps[position + 1:])
                    for position in range(len(steps)))]

    def test_dropping_the_only_injection_is_not_replayed(self):
        trials = self._trials(explorer.Injection(
            self.resize, 'update_available_resource', ('source',)))
        # Boot, inject, resize, confirm. Without the inject: the recorded
        # run's steps, which passed. Without the confirm: replayed.
        self.assertIsNone(trials[1])
        self.assertEqual(['boot', 'inject', 'resize'], trials[3])
        # Refused by the loader: a resize of no server, a confirm of no
        # move.
        self.assertEqual([None, None], [trials[0], trials[2]])

    def test_dropping_one_of_two_injections_is_replayed(self):
        trials = self._trials(explorer.Injection(
            self.resize, 'update_available_resource', ('source', 'dest')))
        self.assertEqual(['boot', 'inject', 'resize', 'confirm'], trials[1])
        self.assertEqual(trials[1], trials[2])

    def test_a_prefix_of_the_recorded_steps_is_not_replayed(self):
        # No injection: without the confirm, the recorded boot and resize.
        self.assertIsNone(self._trials()[2])


class TestDeclaredBreaks(testing.TestCase):
    """A replay expects the declared breaks at its own steps."""

    document = {
        'name': 's', 'bugs': [1848343],
        'known_open_bug': {'bug': 1848343, 'breaks': [
            {'check': 'nothing_leaks', 'subject': 'vm1', 'step': 2},
            {'check': 'tracker_agrees', 'subject': 'host src, *'}]},
        'hosts': {'src': {'driver': 'fake'}, 'dst': {'driver': 'fake'}},
        'flavors': {'small': {'vcpus': 1, 'ram': 512, 'disk': 1}},
        'steps': [{'boot': {'server': 'vm1', 'flavor': 'small',
                            'host': 'src'}},
                  {'migrate': 'vm1'},
                  {'delete': 'vm1'}]}

    def _scenario(self, document=None):
        return scenario.parse(document or self.document, 's.yaml', 's.yaml')

    def _steps(self, parsed):
        return [one.step for one in parsed.known_open_bug.breaks]

    def test_an_injection_moves_the_breaks_after_it(self):
        parsed = self._scenario()
        at = explorer.Point(2, 'before', 'prep_resize', 'dst', 'vm1')
        injections = (explorer.Injection(at, 'update_available_resource',
                                         ('source', 'dest')),)
        # Two inject steps before the migration: it is the replay's 4th.
        self.assertEqual([1, 4, 5], explorer._steps_at(parsed, injections))
        job = explorer.Explorer()._job(parsed, injections)
        self.assertEqual([4, None], self._steps(explorer._parse(job)))
        # The trunk's steps are the scenario's.
        self.assertIsNone(explorer._steps_at(parsed, ()))
        self.assertEqual([2, None], self._steps(explorer._parse(
            explorer.Explorer()._job(parsed, ()))))

    def test_a_shrinking_expects_them_at_any_step(self):
        other = problems.Problem('nothing_leaks', 'vm2')
        document = explorer._at_any_step(self._scenario().document(), other)
        self.assertEqual([None, None], self._steps(self._scenario(document)))
        # Only the declarations change.
        self.assertEqual(self.document['steps'], document['steps'])

    def test_but_the_break_it_shrinks(self):
        # The failure shrunk is a declared break found at another step:
        # it must still fail the shrunk documents.
        found = problems.Problem('tracker_agrees', 'host src, vcpus_used')
        document = explorer._at_any_step(self._scenario().document(), found)
        self.assertEqual(
            [('nothing_leaks', 'vm1', None)],
            [(one.check, one.subject, one.step) for one in
             self._scenario(document).known_open_bug.breaks])
        leak = problems.Problem('nothing_leaks', 'vm1')
        self.assertNotIn('known_open_bug', explorer._at_any_step(
            document, leak))
