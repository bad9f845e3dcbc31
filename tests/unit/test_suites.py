"""``build_tests`` and ``build_bug_tests``: scenario files as test suites.

Built from files written here; no test built here is run but those
whose scenario never loaded (their one ``test_load`` fails without a
cloud), so no Nova: a fresh interpreter proves that building imports
none.
"""

import json
import os
import subprocess
import sys
import textwrap
import unittest

import fixtures
import testtools

import harness
from harness import bugs
from harness.core import errors
from harness.core import shapes
from harness import testing

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

ONE_HOST = '''
  hosts: {h1: {driver: fake}}
  flavors: {f: {vcpus: 1, ram: 64, disk: 1}}
  steps:
    - boot: {server: vm1, flavor: f}
'''
TWO_HOSTS = ONE_HOST.replace('{h1: {driver: fake}}',
                             '{h1: {driver: fake}, h2: {driver: fake}}')
# Three scenarios of two shapes, the second of the other shape.
THREE = ('- name: one' + ONE_HOST + '- name: Two hosts' + TWO_HOSTS
         + '- name: three' + ONE_HOST)
# One scenario of the first shape, tied to a bug.
TIED = '- name: four\n  bugs: [1944759]' + ONE_HOST
BROKEN = ('- name: broken\n' + ONE_HOST.replace('flavor: f}',
                                                'flavor: nope}'))


def _ids(suite):
    return [case.id() for case in testtools.iterate_tests(suite)]


class _Folder(testing.TestCase):
    """A folder of scenario files: a.yaml, b.yaml, c_d.yaml (broken)."""

    def setUp(self):
        super().setUp()
        self.folder = self.useFixture(fixtures.TempDir()).path
        for name, text in (('a', THREE), ('b', TIED), ('c_d', BROKEN)):
            self.write(name + '.yaml', text)

    def write(self, name, text):
        path = os.path.join(self.folder, name)
        with open(path, 'w') as target:
            target.write(text)
        return path


class TestBuildTests(_Folder):

    def test_a_class_per_file_a_test_per_scenario(self):
        suite = testing.build_tests(self.folder, test_loader_name='mine',
                                    shape_order=False)
        # Files in name order; a file's scenarios with those of one shape
        # together, numbered so (two hosts, the second, is the third);
        # the scenario's bugs in its name; the broken file one test.
        self.assertEqual(
            ['mine.A.test_1_a__one', 'mine.A.test_2_a__three',
             'mine.A.test_3_a__two_hosts', 'mine.B.test_1_b__four_bug_1944759',
             'mine.CD.test_load'], _ids(suite))
        self.assertEqual(['A', 'B', 'CD'], sorted(suite.classes))
        self.assertTrue(issubclass(suite.classes['A'],
                                   testing.ScenarioTestCase))
        # Test N runs the class's scenarios[N - 1].
        self.assertEqual(['one', 'three', 'Two hosts'],
                         [s.name for s in suite.classes['A'].scenarios])
        for case in testtools.iterate_tests(suite):
            scenario = testing.scenario_of(case)
            if case.id().endswith('test_load'):
                self.assertIsNone(scenario)
            else:
                self.assertTrue(case.id().endswith('_' + scenario.id))

    def test_shapes_together_across_files(self):
        suite = testing.build_tests(self.folder, test_loader_name='mine')
        # The broken file's test first; then a shape's tests in a row:
        # b's scenario has a's first shape.
        self.assertEqual(
            ['mine.CD.test_load', 'mine.A.test_1_a__one',
             'mine.A.test_2_a__three', 'mine.B.test_1_b__four_bug_1944759',
             'mine.A.test_3_a__two_hosts'], _ids(suite))
        self.assertIsInstance(suite, testing.OrderedSuite)
        shapes_in_order = [
            repr(shapes.cloud_shape(testing.scenario_of(case)))
            for case in list(testtools.iterate_tests(suite))[1:]]
        self.assertEqual(shapes_in_order[0], shapes_in_order[2])
        self.assertNotEqual(shapes_in_order[2], shapes_in_order[3])
        # testtools keeps the order: it sorts only plain suites.
        self.assertEqual(_ids(suite), _ids(testtools.testsuite.sorted_tests(
            unittest.TestSuite([suite]))))

    def test_the_bug_id_selects_its_tests(self):
        suite = testing.build_tests(self.folder, test_loader_name='mine')
        # What ``stestr run 1944759`` does: a regex search of the IDs.
        self.assertEqual(['mine.B.test_1_b__four_bug_1944759'],
                         [i for i in _ids(suite) if '1944759' in i])

    def test_a_file_that_does_not_load_is_a_failing_test(self):
        suite = testing.build_tests(self.folder, test_loader_name='mine')
        result = testtools.TestResult()
        suite.classes['CD']('test_load').run(result)
        (failure,) = [text for _, text in result.failures]
        self.assertIn('AssertionError: %s, step 1, field "boot.flavor": '
                      "unknown flavor 'nope'"
                      % os.path.join(self.folder, 'c_d.yaml'), failure)
        self.assertTrue(issubclass(suite.classes['CD'], testing.TestCase))

    def test_the_module_name_is_the_callers_by_default(self):
        suite = testing.build_tests(os.path.join(self.folder, 'b.yaml'))
        self.assertEqual(['%s.B.test_1_b__four_bug_1944759' % __name__],
                         _ids(suite))

    def test_the_loader_given_makes_the_cases(self):
        loader = unittest.TestLoader()
        loader.testMethodPrefix = 'test_load'
        self.assertEqual(['mine.CD.test_load'], _ids(testing.build_tests(
            self.folder, loader, 'mine')))

    def test_a_base_class_of_ones_own(self):

        class Unchecked(testing.ScenarioTestCase):
            periodic_idempotence = False

        suite = testing.build_tests(self.folder, test_loader_name='mine',
                                    base=Unchecked)
        self.assertTrue(issubclass(suite.classes['A'], Unchecked))
        self.assertFalse(suite.classes['A'].periodic_idempotence)

    def test_built_once_while_the_file_does_not_change(self):
        first = testing.build_tests(self.folder, test_loader_name='mine')
        again = testing.build_tests(self.folder, test_loader_name='mine')
        self.assertEqual(first.classes, again.classes)
        # New cases each time, as a loader makes them.
        self.assertNotEqual(
            {id(case) for case in testtools.iterate_tests(first)},
            {id(case) for case in testtools.iterate_tests(again)})
        self.write('b.yaml', TIED.replace('four', 'five'))
        changed = testing.build_tests(self.folder, test_loader_name='mine')
        self.assertIsNot(first.classes['B'], changed.classes['B'])
        self.assertIs(first.classes['A'], changed.classes['A'])
        self.assertIn('mine.B.test_1_b__five_bug_1944759', _ids(changed))

    def test_what_is_no_scenario_folder_is_one_clean_error(self):
        missing = os.path.join(self.folder, 'missing')
        error = self.assertRaises(errors.ScenarioError,
                                  testing.build_tests, missing)
        self.assertEqual('%s: no such folder or scenario file' % missing,
                         str(error))
        empty = self.useFixture(fixtures.TempDir()).path
        error = self.assertRaises(errors.ScenarioError,
                                  testing.build_tests, empty)
        self.assertEqual('%s: no scenario files (*.yaml) in this folder'
                         % empty, str(error))

    def test_two_files_of_one_class_name_are_refused(self):
        self.write('c-d.yaml', TIED)
        error = self.assertRaises(errors.ScenarioError,
                                  testing.build_tests, self.folder)
        self.assertEqual('%s and %s both make the test class CD: rename one'
                         % (os.path.join(self.folder, 'c-d.yaml'),
                            os.path.join(self.folder, 'c_d.yaml')),
                         str(error))

    def test_public(self):
        # That it resolves, without Nova: tests/unit/test_layers.py.
        self.assertIn('build_tests', harness.__all__)


class TestBuildBugTests(_Folder):

    def test_a_class_per_bug_a_test_per_scenario(self):
        suite = testing.build_bug_tests(test_loader_name='mine',
                                        shape_order=False)
        known = bugs.known()
        self.assertEqual(['TestBug%s' % bug.id for bug in known],
                         list(suite.classes))
        bug = bugs.get('1944759')
        cls = suite.classes['TestBug1944759']
        self.assertEqual(bug.invariants, cls.invariants)
        self.assertEqual(list(bug.scenarios), list(cls.scenarios))
        ids = [i for i in _ids(suite) if '.TestBug1944759.' in i]
        self.assertEqual(len(bug.scenarios), len(ids))
        for number, (test_id, scenario) in enumerate(
                zip(ids, bug.scenarios), 1):
            self.assertTrue(test_id.startswith(
                'mine.TestBug1944759.test_bug_1944759_%d_' % number),
                test_id)
        for case in testtools.iterate_tests(suite):
            # Tied to its bug (the ID is in its name, the link on
            # failure).
            method = getattr(case, case.id().rsplit('.', 1)[1])
            self.assertEqual(type(case).__name__[len('TestBug'):],
                             method.related_bug)
            self.assertIs(testing.scenario_of(case),
                          type(case).scenarios[
                              int(case.id().split('_')[3]) - 1])

    def test_a_bug_file_that_does_not_load_is_a_failing_test(self):
        path = self.write('lp999.yaml', THREE)
        suite = testing.build_bug_tests(test_loader_name='mine',
                                        paths=[path])
        self.assertEqual(['mine.TestBug999.test_load'], _ids(suite))
        result = testtools.TestResult()
        suite.run(result)
        (failure,) = [text for _, text in result.failures]
        self.assertIn(path, failure)


# Builds the project's own suites and a folder's in a fresh interpreter
# (this one may hold Nova, from another test of the worker).
_NOVA_FREE = textwrap.dedent('''
    import json
    import sys
    import harness
    from harness import testing
    from tests.functional import test_scenarios
    from tests.regressions import test_regressions
    testing.build_tests(sys.argv[1], test_loader_name='mine')
    testing.build_bug_tests(test_loader_name='mine')
    print(json.dumps([m for m in ('nova', 'eventlet') if m in sys.modules]))
''')


class TestNovaFree(_Folder):

    def test_building_imports_no_nova(self):
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            [REPO] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep)
                      if p])
        result = subprocess.run(
            [sys.executable, '-c', _NOVA_FREE, self.folder], cwd=REPO,
            env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual([], json.loads(result.stdout.splitlines()[-1]))


class TestTheProjectsSuites(testing.TestCase):
    """The checkout's scenario and regression tests are built here."""

    def test_the_modules_hold_the_classes_load_tests_gives(self):
        from tests.functional import test_scenarios
        from tests.regressions import test_regressions
        loader = unittest.TestLoader()
        for module in (test_scenarios, test_regressions):
            suite = module.load_tests(loader, None, None)
            for name, cls in suite.classes.items():
                self.assertIs(cls, getattr(module, name))
                self.assertEqual(module.__name__, cls.__module__)
            self.assertEqual(sorted(_ids(suite)), sorted(_ids(
                loader.loadTestsFromNames(
                    '%s.%s' % (module.__name__, name)
                    for name in suite.classes))))
