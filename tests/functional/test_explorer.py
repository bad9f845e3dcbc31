"""A bounded exploration, as CI runs it: one scenario at depth 1.

With LP#1944759 put back, exploring a plain pinned resize and confirm
(no injection written anywhere) must find that a periodic on the source
before the destination's finish_resize loses the outbound migration's
pinned CPUs, and shrink it to a reproducer that fails as it stands.
"""

import os
import subprocess
import sys

import fixtures

from harness.cloud import race
from harness.core import scenario as scenario_mod
from harness.runners import explorer
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing

SCENARIO = os.path.join(os.path.dirname(__file__), 'explore',
                        'pinned_resize_confirm.yaml')
FAKE_MOVES = os.path.join(os.path.dirname(__file__), 'explore',
                          'moves_fake.yaml')


class TestExplore(testing.TestCase):

    def test_finds_and_shrinks_a_reintroduced_race(self):
        out = self.useFixture(fixtures.TempDir()).path
        bug = '1944759'
        # Replays in this process: stestr already runs a worker per core,
        # and replay processes of our own would share those cores with
        # the other workers' tests. TestWorkerProcesses covers them.
        found = explorer.Explorer(reintroduce=bug, out_dir=out,
                                  invariants=False, workers=1).explore(
            scenario_mod.load(SCENARIO)[0])
        self.assertGreater(found.tried, 10)
        lost_pins = [o for o in found.failed
                     if any(p.check == 'pinned_cpus' and p.subject == 'src'
                            for p in o.problems)]
        self.assertNotEqual([], lost_pins, found.summary())
        shrunk = [o for o in lost_pins if o.shrunk_path]
        self.assertEqual(1, len(shrunk))
        # What its shrinking kept to: the resize's expectation of pinned
        # CPUs on its source (src, named by its role in the move).
        self.assertEqual(('pinned_cpus', 'source', 'resize'),
                         shrunk[0].signature)
        # The reproducer fails as it stands (with the bug put back), and
        # no longer than the original scenario plus its injection.
        reproducer = scenario_mod.load(shrunk[0].shrunk_path)[0]
        self.assertLessEqual(len(reproducer.steps), 5)
        self.assertIn('inject', [step.kind for step in reproducer.steps])
        # Replayed as a user replays it: `harness run` in a fresh process.
        # (A replay that passed here once had been shrunk from a run where
        # a periodic deferred inside the tracker's lock ran late; deferred
        # periodics now run when the lock is released, every time: see
        # RacePoints.run_task.)
        replay = subprocess.run(
            [sys.executable, '-m', 'harness.runners.cli', 'run',
             '--no-invariants', '--reintroduce', bug,
             shrunk[0].shrunk_path],
            capture_output=True, text=True, timeout=300,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.abspath(__file__)))))
        self.assertEqual(1, replay.returncode, replay.stdout + replay.stderr)
        self.assertIn('pinned CPUs on src', replay.stdout)


class TestWorkerProcesses(testing.TestCase):
    """Replays in worker processes come back in job order.

    With LP#1944759 put back, the pinned resize and confirm fails when the
    source's update_available_resource runs before the destination's
    finish_resize (the outbound migration's pinned CPUs are dropped from
    the source's tracker) and passes without the injection. Three jobs on
    two processes: the first process gets jobs 1 and 3, the second job 2.
    """

    def test_results_in_job_order(self):
        scenario = scenario_mod.load(SCENARIO)[0]
        self.assertEqual('resize', scenario.steps[1].kind)
        explore = explorer.Explorer(reintroduce='1944759', invariants=False)
        plain = explore._job(scenario, ())
        injected = explore._job(scenario, ())
        injected['document']['steps'].insert(1, {'inject': {
            'before': 'finish_resize', 'run': 'update_available_resource',
            'on': 'src'}})
        results = explorer.run_in_workers([injected, plain, injected], 2)
        self.assertEqual([True, False, True],
                         [result['failed'] for result in results])
        self.assertEqual([], results[1]['problems'])
        for result in (results[0], results[2]):
            # Step 3 is the resize: boot, the injection, resize.
            self.assertEqual(3, result['step'], result)
            self.assertTrue(any(problem.check == 'pinned_cpus'
                                and problem.subject == 'src'
                                for problem in result['problems']), result)


class TestNotedRoles(testing.TestCase):
    """The roles noted at each point are those an injection there gets.

    The explorer leaves out the injections on a role no migration names
    at their point: noting must not change what the run passes, and what
    it rules out must be what a replay could not run.
    """

    def test_noting_changes_nothing_and_rules_out_what_cannot_run(self):
        scenario = scenario_mod.load(FAKE_MOVES)[0]
        self.assertEqual('resize then revert', scenario.name)
        explore = explorer.Explorer(invariants=False, workers=1)
        plain = explorer.replay(explore._job(scenario, ()), record=True)
        with race.noting_roles():
            noted = explorer.replay(explore._job(scenario, ()), record=True)
        self.assertEqual([point[:5] for point in plain['points']],
                         [point[:5] for point in noted['points']])
        self.assertEqual({None}, {point[5] for point in plain['points']})
        points = [explorer.Point(*point) for point in noted['points']]
        # Before the conductor makes the migration, no role names a host;
        # once the destination's prep_resize ran, both do.
        ruled_out = [p for p in points if p.roles == ()]
        named = [p for p in points if p.roles == ('source', 'dest')]
        self.assertNotEqual([], ruled_out)
        self.assertNotEqual([], named)
        for point, inapplicable in ((ruled_out[0], True),
                                    (named[0], False)):
            injection = explorer.Injection(
                point, 'update_available_resource', ('source',))
            result = explorer.replay(explore._job(scenario, (injection,)))
            self.assertEqual(inapplicable, result['inapplicable'],
                             str(point))


class TestRestartTask(testing.TestCase):
    """The opt-in ``restart`` task: a compute restarted at a race point.

    One point of a cold migration, before the source's resize_instance,
    each host restarted there. The source dies in that handler (the
    migration never leaves pre-migrating; at start-up init_host clears the
    instance's resize_prep task state, so it is ACTIVE on src again): the
    migrate step fails short of VERIFY_RESIZE. The destination, not
    running the point, restarts around it (its start-up counts the incoming
    migration) and the migration goes on to pass every check.
    """

    def test_a_restart_at_a_point_of_a_migration(self):
        scenario = scenario_mod.load(FAKE_MOVES)[1]
        self.assertEqual('cold migrate then confirm', scenario.name)
        explore = explorer.Explorer(tasks=['restart'], workers=1)
        with race.noting_roles():
            recorded = explorer.replay(explore._job(scenario, ()),
                                       record=True)
        points = [explorer.Point(*point) for point in recorded['points']
                  if point[1:3] == ('before', 'resize_instance')]
        self.assertEqual(1, len(points))
        plan = [c for c in explore.candidates(
            points, {step.index: step.unit.roles for step in scenario.steps})
            if c[0].task == 'restart']
        self.assertEqual([('source',), ('dest',)],
                         [c[0].hosts for c in plan])
        source, dest = [explorer.replay(explore._job(scenario, c))
                        for c in plan]
        self.assertFalse(source['inapplicable'])
        self.assertTrue(source['failed'])
        self.assertEqual('migrate vm1 to dst', source['label'])
        self.assertIn('migration status is pre-migrating',
                      str(source['problems'][0]))
        self.assertFalse(dest['failed'], dest['problems'])


class TestDeleteServiceTask(testing.TestCase):
    """The opt-in ``delete_service`` task: the API must refuse it.

    The first two points of a resize where a migration names both hosts:
    the destination's resize claim, before and after it saves the
    migration (the explorer's first point in the state the claim leaves,
    in which the source's resize_instance starts). At each, the source
    hosts the instance: its
    delete is refused (409) and the resize goes on unchanged. At the
    second, the migration (dest_compute saved) is in progress on the
    destination: refused too. At the first, the migration's record does
    not name the destination yet, and Nova's API deletes its service
    (findings/svcdelete_dest_before_its_claim.yaml): the replay fails as
    a request answered otherwise (not as an injection that could not
    run), and is shrunk to a reproducer.
    """

    def test_service_deletes_at_the_first_points_of_a_resize(self):
        out = self.useFixture(fixtures.TempDir()).path
        scenario = scenario_mod.load(FAKE_MOVES)[0]
        self.assertEqual('resize then revert', scenario.name)
        explore = explorer.Explorer(tasks=['delete_service'], workers=1,
                                    out_dir=out)
        with explore.kept():
            plan = explore.plan(scenario)
            deletes = [c for c in plan.runnable
                       if c[0].task == 'delete_service']
            # In the order the run passed them.
            points = []
            for candidate in deletes:
                if candidate[0].at not in points:
                    points.append(candidate[0].at)
            first, second = points[:2]
            self.assertEqual(('before', 'migration.status=pre-migrating',
                              'dst'), (first.when, first.point, first.host))
            self.assertEqual(('after', 'migration.status=pre-migrating',
                              'dst'), (second.when, second.point,
                                       second.host))
            plan.runnable = [c for c in deletes
                             if c[0].at in (first, second)]
            self.assertEqual([(first, ('source',)), (first, ('dest',)),
                              (second, ('source',)), (second, ('dest',))],
                             [(c[0].at, c[0].hosts) for c in plan.runnable])
            plan.candidates = len(plan.runnable)
            results = explore.replay_plan(plan, range(4))
            self.assertEqual([False] * 4,
                             [r['inapplicable'] for r in results])
            self.assertEqual([False, True, False, False],
                             [r['failed'] for r in results], results)
            deleted = results[1]['problems'][0]
            self.assertEqual('AnsweredOtherwise', deleted.actual)
            self.assertIn('it answered 204', deleted.text)
            report = explore.conclude(plan, results)
        self.assertEqual((5, 1, 1), (report.tried, len(report.failed),
                                     report.shrunk))
        reproducer = scenario_mod.load(report.failed[0].shrunk_path)[0]
        injected = [step for step in reproducer.steps
                    if step.kind == 'inject']
        self.assertEqual(1, len(injected))
        self.assertEqual(('delete_service', 'dest'), injected[0].args['do'])
        self.assertIs(True, injected[0].args['refused'])
