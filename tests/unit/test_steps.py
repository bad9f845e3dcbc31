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
NEW_UNIT = '''
from harness.core.steps import base


class Pause(base.ServerOperation):
    name = 'pause'
    resting = {'status': 'PAUSED'}

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], ('active',), 'pause')
        return args

    def run(self, cloud, args):
        cloud.servers.pause(args['server'])


KIND = Pause()
'''


class TestRegistry(testing.TestCase):

    def test_the_twelve_kinds_are_units(self):
        self.assertEqual(KINDS, set(steps.names()))
        for name in steps.names():
            unit = steps.get(name)
            self.assertIsInstance(unit, base.StepKind)
            self.assertEqual(name, unit.name)

    def test_operations_declare_a_resting_state(self):
        self.assertEqual({'boot', 'resize', 'confirm', 'revert', 'migrate',
                          'live_migrate', 'delete'}, set(steps.operations()))
        for name in steps.operations():
            if name != 'delete':   # a deleted server has no state
                self.assertIn('status', steps.get(name).resting, name)

    def test_moves_name_both_roles_and_their_points(self):
        self.assertEqual({'resize', 'migrate', 'live_migrate', 'confirm',
                          'revert'}, set(steps.moves()))
        for name in steps.moves():
            unit = steps.get(name)
            self.assertEqual(names.ROLES, unit.roles)
            for point in unit.points:
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
        error = self.assertRaises(errors.ScenarioError, steps.get, 'reboot')
        self.assertIn("unknown step kind 'reboot'", str(error))


class TestAddingAKind(testing.TestCase):
    """A new operation is one module: the loader takes it as it stands."""

    def test_a_module_in_the_package_is_a_new_step_kind(self):
        unit_dir = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(unit_dir, 'pause.py'), 'w') as out:
            out.write(NEW_UNIT)
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.steps.__path__',
            list(steps.__path__) + [unit_dir]))
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.steps._REGISTRY', {}))
        self.addCleanup(_forget_module, 'harness.core.steps.pause')
        loaded = scenario.parse({
            'name': 'pause', 'hosts': {'h': {'driver': 'fake'}},
            'flavors': {'f': {'vcpus': 1, 'ram': 512, 'disk': 1}},
            'steps': [{'boot': {'server': 'vm1', 'flavor': 'f'}},
                      {'pause': 'vm1'}]}, 'inline')
        step = loaded.steps[1]
        self.assertEqual(('pause', 'pause vm1', {'status': 'PAUSED'}),
                         (step.kind, step.label, step.unit.resting))
        self.assertIn('pause', steps.operations())
        # What it needs of the scenario's state is its own rule.
        error = self.assertRaises(errors.ScenarioError, scenario.parse, {
            'name': 'pause', 'hosts': {'h': {'driver': 'fake'}},
            'steps': [{'pause': 'vm1'}]}, 'inline')
        self.assertIn("step 1, field \"pause.server\": no server 'vm1' to "
                      'pause', str(error))


def _forget_module(name):
    sys.modules.pop(name, None)
