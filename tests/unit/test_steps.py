"""The step registry: every kind is one unit, found by walking the package.

These tests read the registry's declarations; that the race points a
step passes are among those its kind declares is checked on every
scenario test's run (``harness.testing.ScenarioTestCase``).
"""

import os
import sys

import fixtures

from harness.core import errors
from harness.core import names
from harness.core import scenario
from harness.core import steps
from harness.core.steps import base
from harness import testing

# The twelve kinds the scenario language had before the registry.
KINDS = {'boot', 'resize', 'confirm', 'revert', 'migrate', 'live_migrate',
         'delete', 'run_periodic', 'advance_clock', 'inject',
         'stop_compute', 'start_compute'}
# Kinds added since, each as one module: faults, compute services, ...
ADDED = {'fault', 'disable_compute', 'enable_compute', 'force_down',
         'force_up', 'delete_service'}
NEW_UNIT = '''
from harness.core.steps import base


class Hibernate(base.ServerOperation):
    name = 'hibernate'
    resting = {'status': 'HIBERNATED'}

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], ('active',), 'hibernate')
        return args

    def run(self, cloud, args):
        cloud.servers.hibernate(args['server'])


KIND = Hibernate()
'''


class TestRegistry(testing.TestCase):

    def test_every_kind_is_a_unit(self):
        self.assertLessEqual(KINDS | ADDED, set(steps.names()))
        for name in steps.names():
            unit = steps.get(name)
            self.assertIsInstance(unit, base.StepKind)
            self.assertEqual(name, unit.name)

    def test_operations_declare_a_resting_state(self):
        self.assertLessEqual({'boot', 'resize', 'confirm', 'revert',
                              'migrate', 'live_migrate', 'delete',
                              'delete_service'}, set(steps.operations()))
        for name in steps.operations():
            unit = steps.get(name)
            # A deleted server has no state; a service step acts on no
            # server (an operation only so that it may say error:).
            if isinstance(unit, base.ServerOperation) and name != 'delete':
                self.assertIn('status', unit.resting, name)

    def test_moves_name_their_roles_and_their_points(self):
        self.assertEqual({'resize', 'migrate', 'live_migrate', 'confirm',
                          'revert', 'evacuate', 'rebuild', 'unshelve'},
                         set(steps.moves()))
        for name in steps.moves():
            unit = steps.get(name)
            self.assertTrue(unit.roles, name)
            self.assertLessEqual(set(unit.roles), set(names.ROLES), name)
            for point in unit.points:
                self.assertRegex(point, names.POINT_NAME)

    def test_tracker_points_are_the_tracker_methods_a_move_passes(self):
        # A step kind names a tracker point only if the race points wrap
        # that method (names.TRACKER_STEPS), and each one is passed by
        # some move (else no scenario could inject there).
        passed = set()
        for name in steps.moves():
            passed |= {point for point in steps.get(name).points
                       if point.startswith('tracker.')}
        self.assertLessEqual(passed, set(names.TRACKER_POINTS))
        self.assertEqual(set(names.TRACKER_POINTS), passed)
        self.assertIn('tracker.drop_move_claim_at_dest',
                      steps.get('revert').points)
        # Every rebuild ends in finish_evacuation, an evacuation's and a
        # rebuild on its own host alike (ComputeManager._do_rebuild_
        # instance).
        for name in ('evacuate', 'rebuild'):
            self.assertIn('tracker.finish_evacuation',
                          steps.get(name).points, name)
        for point in names.TRACKER_POINTS:
            self.assertRegex(point, names.POINT_NAME)

    def test_the_periodic_and_a_start_reconcile_their_hosts(self):
        running = {'a', 'b'}
        self.assertEqual(running, steps.get('run_periodic').reconciles(
            {'task': names.RECONCILE, 'hosts': []}, running))
        self.assertEqual(set(), steps.get('run_periodic').reconciles(
            {'task': '_poll_unconfirmed_resizes', 'hosts': []}, running))
        self.assertEqual({'a'}, steps.get('start_compute').reconciles(
            {'host': 'a'}, running))
        self.assertEqual(set(), steps.get('boot').reconciles(
            {'server': 'vm1'}, running))

    def test_an_unknown_kind_is_a_scenario_error(self):
        error = self.assertRaises(errors.ScenarioError, steps.get,
                                  'teleport')
        self.assertIn("unknown step kind 'teleport'", str(error))


class TestAddingAKind(testing.TestCase):
    """A new operation is one module: the loader takes it as it stands."""

    def test_a_module_in_the_package_is_a_new_step_kind(self):
        unit_dir = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(unit_dir, 'hibernate.py'), 'w') as out:
            out.write(NEW_UNIT)
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.steps.__path__',
            list(steps.__path__) + [unit_dir]))
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.steps._REGISTRY', {}))
        self.addCleanup(_forget_module, 'harness.core.steps.hibernate')
        loaded = scenario.parse({
            'name': 'hibernate', 'hosts': {'h': {'driver': 'fake'}},
            'flavors': {'f': {'vcpus': 1, 'ram': 512, 'disk': 1}},
            'steps': [{'boot': {'server': 'vm1', 'flavor': 'f'}},
                      {'hibernate': 'vm1'}]}, 'inline')
        step = loaded.steps[1]
        self.assertEqual(('hibernate', 'hibernate vm1',
                          {'status': 'HIBERNATED'}),
                         (step.kind, step.label, step.unit.resting))
        self.assertIn('hibernate', steps.operations())
        # What it needs of the scenario's state is its own rule.
        error = self.assertRaises(errors.ScenarioError, scenario.parse, {
            'name': 'hibernate', 'hosts': {'h': {'driver': 'fake'}},
            'steps': [{'hibernate': 'vm1'}]}, 'inline')
        self.assertIn("step 1, field \"hibernate.server\": no server 'vm1' "
                      'to hibernate', str(error))


def _forget_module(name):
    sys.modules.pop(name, None)
