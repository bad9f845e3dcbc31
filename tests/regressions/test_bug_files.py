"""The bug registry: a bug is its two files, checked, and Nova-free.

Needs no Nova: these read files and check messages. A malformed bug file
must be one ``ScenarioError`` naming the file and the field.
"""

import os
import subprocess
import sys

import fixtures

from harness import bugs
from harness.core import errors
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

SCENARIOS = """
scenarios:
  - name: boot one
    bugs: [%(bugs)s]
    hosts: {h: {driver: fake}}
    flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
    steps:
      - boot: {server: vm1, flavor: small}
"""


class TestBugFiles(testing.TestCase):

    def test_every_bug_module_has_its_file(self):
        """A fixture module with no bug file would never be registered."""
        modules = sorted(
            name[:-len('.py')] for name in os.listdir(bugs.BUG_DIR)
            if name.startswith('lp') and name.endswith('.py'))
        self.assertEqual(
            modules, ['lp%s' % bug.id for bug in bugs.known()
                      if bug.reintroducible])

    def test_listing_bugs_imports_no_nova(self):
        # In a process of its own: this one may have imported Nova.
        code = ('import sys; from harness import bugs; '
                'found = bugs.known(); '
                'print(len(found), sorted(m for m in sys.modules '
                'if m == "nova" or m.startswith(("nova.", "eventlet"))))')
        out = subprocess.run(
            [sys.executable, '-c', code], cwd=ROOT, check=True,
            env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
            text=True).stdout.split(None, 1)
        self.assertEqual([str(len(bugs.paths())), '[]'],
                         [out[0], out[1].strip()])

    def test_get_accepts_launchpad_forms(self):
        bug = bugs.get('1944759')
        for form in ('LP#1944759', 'lp1944759', '#1944759', 1944759):
            self.assertIs(bug, bugs.get(form))
        error = self.assertRaises(errors.UnknownName, bugs.get, '1')
        self.assertIn('1944759 (%s)' % bug.title, str(error))

    def test_invariants_off_come_with_their_reason(self):
        bug = bugs.get('1821594')
        self.assertIn('tracker_agrees', bug.invariants_off)
        self.assertNotIn('tracker_agrees', bug.invariants)
        self.assertIn('periodics_idempotent', bug.invariants)
        self.assertEqual({}, bugs.get('1944759').invariants_off)


class TestMalformedBugFiles(testing.TestCase):

    def _load(self, text, name='lp1234567.yaml'):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, name)
        with open(path, 'w') as target:
            target.write(text)
        error = self.assertRaises(errors.ScenarioError, bugs.load, path)
        self.assertIn(path, str(error))
        return str(error)

    def _file(self, header, bug_ids='1234567'):
        return header + SCENARIOS % {'bugs': bug_ids}

    def test_no_header(self):
        self.assertIn('field "bug": missing', self._load(
            SCENARIOS % {'bugs': '1234567'}))

    def test_id_must_match_the_file_name(self):
        self.assertIn('field "bug.id": 1234568 does not match the file '
                      'name lp1234567.yaml', self._load(self._file(
                          'bug: {id: 1234568, title: t, fix: f, story: s}')))

    def test_missing_title(self):
        self.assertIn('field "bug.title": missing', self._load(self._file(
            'bug: {id: 1234567, fix: f, story: s}')))

    def test_empty_story(self):
        self.assertIn('field "bug.story": expected text', self._load(
            self._file('bug: {id: 1234567, title: t, fix: f, story: ""}')))

    def test_unknown_field(self):
        self.assertIn('field "bug.fixed": unknown field', self._load(
            self._file('bug: {id: 1234567, title: t, fix: f, story: s, '
                       'fixed: yes}')))

    def test_unknown_invariant_turned_off(self):
        self.assertIn('unknown invariant \'tracker_agree\'', self._load(
            self._file('bug: {id: 1234567, title: t, fix: f, story: s, '
                       'invariants_off: {tracker_agree: why}}')))

    def test_invariant_turned_off_without_reason(self):
        self.assertIn(
            'field "bug.invariants_off.tracker_agrees": expected text',
            self._load(self._file(
                'bug: {id: 1234567, title: t, fix: f, story: s, '
                'invariants_off: {tracker_agrees: }}')))

    def test_scenario_must_list_the_bug(self):
        self.assertIn('[1], field "bugs": a scenario of LP#1234567 must '
                      'list 1234567', self._load(self._file(
                          'bug: {id: 1234567, title: t, fix: f, story: s}',
                          bug_ids='1944759')))

    def test_reintroduction_module_missing(self):
        self.assertIn('no reintroduction module harness.bugs.lp1234567',
                      self._load(self._file(
                          'bug: {id: 1234567, title: t, fix: f, '
                          'story: s}')))

    def test_file_name(self):
        self.assertIn('a bug file is named lp<ID>.yaml', self._load(
            self._file('bug: {id: 1234567, title: t, fix: f, story: s}'),
            name='bug_1234567.yaml'))

    def test_no_reintroduction_needs_its_reason(self):
        self.assertIn('field "bug.no_reintroduction": expected text',
                      self._load(self._file(
                          'bug: {id: 1234567, title: t, fix: f, story: s, '
                          'no_reintroduction: ""}')))

    def test_no_reintroduction_while_the_module_puts_it_back(self):
        self.assertIn(
            'field "bug.no_reintroduction": lp1944759.py puts the bug back',
            self._load(self._file(
                'bug: {id: 1944759, title: t, fix: f, story: s, '
                'no_reintroduction: why}', bug_ids='1944759'),
                name='lp1944759.yaml'))

    def test_nova_test_names_a_module(self):
        self.assertIn('field "bug.nova_test.module": expected the name of a '
                      'module of nova/tests/functional/regressions',
                      self._load(self._file(
                          'bug: {id: 1234567, title: t, fix: f, story: s, '
                          'no_reintroduction: why, nova_test: {module: '
                          'test_bug_1234567.py, asserts: a}}')))

    def test_nova_test_says_what_it_asserts(self):
        self.assertIn('field "bug.nova_test.asserts": missing',
                      self._load(self._file(
                          'bug: {id: 1234567, title: t, fix: f, story: s, '
                          'no_reintroduction: why, nova_test: {module: '
                          'test_bug_1234567}}')))


class TestBugWithoutReintroduction(testing.TestCase):

    def test_loads_and_refuses_to_put_the_bug_back(self):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'lp1234567.yaml')
        with open(path, 'w') as target:
            target.write(
                'bug: {id: 1234567, title: t, fix: f, story: s, '
                'no_reintroduction: the fix is a database migration, '
                'nova_test: {module: test_bug_1234567, asserts: usage}}'
                + SCENARIOS % {'bugs': '1234567'})
        bug = bugs.load(path)
        self.assertFalse(bug.reintroducible)
        self.assertEqual(bugs.NovaTest('test_bug_1234567', 'usage'),
                         bug.nova_test)
        error = self.assertRaises(errors.UnknownName, bug.reintroduce)
        self.assertEqual('LP#1234567 cannot be put back into Nova: the fix '
                         'is a database migration', str(error))
