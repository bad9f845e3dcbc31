"""The check registry: every expectation key and invariant is one unit.

Adding a check is adding one module: the tests below add one expectation
key and one invariant from a temporary directory put on the package's
path, as ``test_steps.TestAddingAKind`` does for step kinds, and see the
loader, the checks, the Checker and the derived lists take them as they
stand.
"""

import os
import sys

import fixtures

from harness.core import checks
from harness.core.checks import base
from harness.core import errors
from harness.core import expect
from harness.core import invariants
from harness.core import problems as problems_mod
from harness.core import scenario
from harness.core import snapshot
from harness import testing
from tests.unit import test_invariants as helpers

# The lists the core kept by hand before the registry, in their order:
# the units must give the same names, order and accounting.
EXPECT_KEYS = ('allocations', 'usages', 'tracker', 'pinned_cpus',
               'guest_cpus', 'servers', 'migrations', 'fault', 'action_events',
               'logs', 'providers', 'provider_traits', 'devices',
               'device_providers',
               'guest_devices',
               'compute_nodes', 'pci', 'hypervisors', 'domain', 'mdevs')
INVARIANTS = ('usages_add_up', 'allocations_where_server_is',
              'one_compute_node_per_consumer', 'tracker_agrees',
              'capacity_probe', 'periodics_idempotent',
              'node_stats_count_own_guests', 'nothing_leaks',
              'within_capacity', 'devices_agree', 'domain_agrees')
NOT_ACCOUNTING = {'servers', 'migrations', 'fault', 'action_events',
                  'logs', 'hypervisors', 'domain', 'domain_agrees',
                  'provider_traits'}

NEW_KEY = '''
from harness.core.checks import base
from harness.core.problems import Problem


class Consumers(base.Expectation):
    """Exactly the consumers that hold allocations in Placement."""

    name = 'consumers'
    accounting = %(accounting)s
    summary = 'Exactly the consumers that hold allocations.'
    shape = '[consumer, ...]'
    example = 'consumers: [vm1, migration(vm1)]'

    def parse(self, check, value, scenario, state):
        return sorted(check.string(consumer, '')
                      for consumer in check.sequence(value, ''))

    def check(self, want, snap, scenario):
        got = sorted(snap.allocations)
        if want == got:
            return []
        return [Problem(self.name, 'consumers', want, got)]


CHECK = Consumers()
'''

NEW_INVARIANT = '''
from harness.core.checks import base
from harness.core.problems import Problem


class NoServerInError(base.Invariant):
    """No server is in ERROR but one whose step was expected to fail."""

    name = 'no_server_in_error'
    accounting = False
    summary = 'No server is in ERROR unless a step expected it.'
    honours = ('no_server_in_error',)

    def windows(self, opened, context):
        # A server whose step said ``error:`` may stay in ERROR.
        excused = set(opened or ())
        if context.step.error is not None:
            excused.add(context.step.args['server'])
        return excused

    def check(self, context):
        excused = context.windows[self.name]
        return [Problem(self.name, name, 'not ERROR', server.status)
                for name, server in sorted(context.snapshot.servers.items())
                if server.status == 'ERROR' and name not in excused]


CHECK = NoServerInError()
'''


def _forget_module(name):
    """Out of sys.modules and off its package, as if never imported."""
    sys.modules.pop(name, None)
    package, _, attribute = name.rpartition('.')
    if hasattr(sys.modules[package], attribute):
        delattr(sys.modules[package], attribute)


class _NewUnit(testing.TestCase):
    """Puts a module in a check package from a temporary directory."""

    def add_module(self, package, name, source):
        unit_dir = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(unit_dir, name + '.py'), 'w') as out:
            out.write(source)
        dotted = 'harness.core.checks.%s' % package
        self.useFixture(fixtures.MonkeyPatch(
            dotted + '.__path__',
            list(sys.modules[dotted].__path__) + [unit_dir]))
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.checks._REGISTRY', {}))
        self.addCleanup(_forget_module, '%s.%s' % (dotted, name))


class TestRegistry(testing.TestCase):

    def test_the_units_give_the_lists_the_core_kept(self):
        self.assertEqual(EXPECT_KEYS, tuple(checks.expectations()))
        self.assertEqual(INVARIANTS, tuple(checks.invariants()))
        self.assertEqual(EXPECT_KEYS, expect.EXPECT_KEYS)
        self.assertEqual(EXPECT_KEYS, problems_mod.EXPECTATIONS)
        self.assertEqual(INVARIANTS, invariants.INVARIANTS)
        self.assertEqual(set(EXPECT_KEYS + INVARIANTS) - NOT_ACCOUNTING,
                         problems_mod.ACCOUNTING)
        self.assertEqual(checks.accounting(), problems_mod.ACCOUNTING)

    def test_every_unit_declares_what_the_docs_read(self):
        for name, unit in checks.registry().items():
            self.assertEqual(name, unit.name)
            self.assertIs(checks.get(name), unit)
            self.assertIsInstance(unit.accounting, bool, name)
            self.assertTrue(unit.summary, name)
            self.assertNotIn('\n', unit.summary, name)
            # The docstring is the unit's own (a class's is not inherited).
            self.assertTrue(type(unit).__doc__, name)
            if isinstance(unit, base.Expectation):
                self.assertTrue(unit.shape, name)
                self.assertTrue(unit.example, name)
            for honoured in getattr(unit, 'honours', ()):
                self.assertIn(honoured, checks.invariants(), name)

    def test_every_example_is_accepted_by_the_loader(self):
        for name, unit in checks.expectations().items():
            doc = scenario.safe_load(base.EXAMPLE_SCENARIO)
            entry = scenario.safe_load(unit.example)
            self.assertEqual([name], list(entry), unit.example)
            doc['steps'][-1]['expect'] = entry
            loaded = scenario.parse(doc, '%s example' % name)
            self.assertEqual([name], list(loaded.steps[-1].expect), name)

    def test_an_unknown_check_is_refused(self):
        error = self.assertRaises(ValueError, checks.get, 'no_such_check')
        self.assertIn("unknown check 'no_such_check'", str(error))

    def test_no_core_module_is_over_800_lines(self):
        core = os.path.dirname(os.path.dirname(checks.__file__))
        for root, _, files in os.walk(core):
            for name in files:
                if name.endswith('.py'):
                    with open(os.path.join(root, name)) as source:
                        self.assertLessEqual(
                            len(source.readlines()), 800,
                            os.path.join(root, name))


class TestAddingAnExpectationKey(_NewUnit):
    """A new expectation key is one module: nothing else changes."""

    def load(self, expected):
        return scenario.parse({
            'name': 'consumers', 'hosts': {'src': {'driver': 'fake'}},
            'flavors': {'f': {'vcpus': 1, 'ram': 512, 'disk': 1}},
            'steps': [{'boot': {'server': 'vm1', 'flavor': 'f'},
                       'expect': {'consumers': expected}}]}, 'inline')

    def test_a_module_in_the_package_is_a_new_key(self):
        self.add_module('expect', 'consumers',
                        NEW_KEY % {'accounting': True})
        loaded = self.load(['vm1'])
        want = loaded.steps[0].expect
        self.assertEqual({'consumers': ['vm1']}, want)
        # How its value is read is its own rule, in the loader's words.
        error = self.assertRaises(errors.ScenarioError, self.load, 'vm1')
        self.assertIn('step 1, field "expect.consumers": expected a list',
                      str(error))
        # Its check runs with the others; its problems carry its name.
        held = helpers.build({'vm1': {'src': helpers.SMALL}},
                             servers=[('vm1', 'ACTIVE', 'src')],
                             hosts=('src',))
        self.assertEqual([], expect.check(want, held, loaded))
        leaked = helpers.build({'vm1': {'src': helpers.SMALL},
                                'gone': {'src': helpers.SMALL}},
                               servers=[('vm1', 'ACTIVE', 'src')],
                               hosts=('src',))
        [problem] = expect.check(want, leaked, loaded)
        self.assertEqual(('consumers', 'consumers', ['vm1'],
                          ['gone', 'vm1']),
                         (problem.check, problem.subject, problem.expected,
                          problem.actual))
        # An expectation's failure kind is its key and subject.
        self.assertEqual('consumers consumers', problem.kind)
        self.assertTrue(problem.accounting)
        self.assertIn('consumers', expect.EXPECT_KEYS)
        self.assertIn('consumers', problems_mod.EXPECTATIONS)
        self.assertIn('consumers', problems_mod.ACCOUNTING)
        self.assertNotIn('consumers', invariants.INVARIANTS)

    def test_a_key_that_is_no_accounting_says_so(self):
        self.add_module('expect', 'consumers',
                        NEW_KEY % {'accounting': False})
        self.assertIn('consumers', problems_mod.EXPECTATIONS)
        self.assertNotIn('consumers', problems_mod.ACCOUNTING)
        loaded = self.load([])
        [problem] = expect.check(loaded.steps[0].expect, helpers.build(
            {'vm1': {'src': helpers.SMALL}}, hosts=('src',)), loaded)
        self.assertFalse(problem.accounting)

    def test_a_name_taken_twice_is_refused(self):
        self.add_module('expect', 'consumers', (
            NEW_KEY % {'accounting': True}).replace("'consumers'",
                                                    "'usages'"))
        error = self.assertRaises(RuntimeError, checks.registry)
        self.assertIn("check 'usages' is defined twice", str(error))


class TestAddingAnInvariant(_NewUnit):
    """A new invariant is one module: the Checker runs it as it stands."""

    def run_steps(self, checker, steps, scenario_=None):
        """Feed (step, snapshot) pairs as one run; problems per step."""
        scenario_ = scenario_ or helpers.Scenario()
        timeline = [helpers.Entry(helpers.build({}))]
        found = []
        for step, snap in steps:
            timeline.append(helpers.Entry(snap))
            found.append(checker(helpers.FakeCloud(snap), step, snap,
                                 timeline, scenario_))
        return found

    def steps(self):
        """vm1's boot expected to fail, then vm2's, which did not."""
        one = helpers.build({}, servers=[('vm1', 'ERROR', None)])
        both = helpers.build({}, servers=[('vm1', 'ERROR', None),
                                          ('vm2', 'ERROR', None)])
        return [(helpers.Step(1, 'boot', {'server': 'vm1'},
                              error='No valid host'), one),
                (helpers.Step(2, 'boot', {'server': 'vm2'}), both)]

    def test_a_module_in_the_package_is_a_new_invariant(self):
        self.add_module('invariant', 'no_server_in_error', NEW_INVARIANT)
        self.assertEqual(INVARIANTS + ('no_server_in_error',),
                         invariants.INVARIANTS)
        checker = invariants.Checker(periodic_idempotence=False)
        found = self.run_steps(checker, self.steps())
        # Its window (vm1's step said error:) is its own, kept by the
        # Checker from step to step.
        self.assertEqual([], found[0])
        [problem] = found[1]
        self.assertEqual(('no_server_in_error', 'vm2', 'ERROR'),
                         (problem.check, problem.subject, problem.actual))
        self.assertEqual('no_server_in_error', problem.kind)
        self.assertFalse(problem.accounting)
        self.assertNotIn('no_server_in_error', problems_mod.ACCOUNTING)
        self.assertIn('no_server_in_error', checker.timings)

    def test_enabled_and_expected_breaks_name_it(self):
        self.add_module('invariant', 'no_server_in_error', NEW_INVARIANT)
        checker = invariants.Checker(enabled={'no_server_in_error'})
        breaks = helpers.Scenario({'no_server_in_error': '1'})
        self.assertEqual([[], []], self.run_steps(checker, self.steps(),
                                                  breaks))
        self.assertEqual([(2, 'vm2')], [
            (step, problem.subject)
            for step, problem in checker.broken['no_server_in_error']])
        self.assertEqual([], checker.missing_breaks(breaks))


class TestWindowsHonoured(testing.TestCase):
    """An invariant reads the windows it honours, whoever owns them."""

    def test_devices_agree_honours_tracker_windows_on_its_own(self):
        # vm1 moved to dst before; deleted, dst's tracker may count it
        # until dst's periodic (``delete``'s window, tracker_agrees'), and
        # its PCI tracker may still hold its device meanwhile.
        moved = [('vm1', 'confirmed', 'src', 'dst', 'resize')]
        before = helpers.build({'vm1': {'dst': helpers.SMALL}},
                               servers=[('vm1', 'ACTIVE', 'dst')],
                               migrations=moved)
        after = helpers.build({}, migrations=moved, trackers={
            'dst': {'vcpus_used': 1, 'memory_mb_used': 1024,
                    'local_gb_used': 1}})
        after.devices = {'dst': {'0000:d8:00.0': snapshot.Device(
            'dst', '0000:d8:00.0', 'type-PCI', 0, 'allocated', 'vm1',
            None)}}

        def check(kind):
            checker = invariants.Checker(enabled={'devices_agree'})
            timeline = [helpers.Entry(before), helpers.Entry(after)]
            return checker(helpers.FakeCloud(after),
                           helpers.Step(2, kind, {'server': 'vm1'}), after,
                           timeline, helpers.Scenario())

        self.assertEqual([], check('delete'))
        # No window: a device held by a guest that is gone.
        self.assertEqual(['devices_agree'], [p.check for p in check('boot')])
