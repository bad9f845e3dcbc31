"""Nova's regression tests as data: ``harness/bugs/corpus.yaml``.

The shipped corpus must list exactly the regression test modules of the
Nova installed (the release it names), each tied to what the harness
makes of it; a malformed entry is one ``ScenarioError`` naming the file,
the entry and the field.
"""

import os

import fixtures

from harness import bugs
from harness.bugs import corpus
from harness.cloud import install
from harness.core import errors
from harness import testing

HEAD = 'nova: 34.0.0\ntests:\n'


class TestShippedCorpus(testing.TestCase):

    def test_lists_every_regression_module_of_the_installed_nova(self):
        shipped = corpus.load()
        # A new Nova release brings new regression tests: the corpus must
        # be brought up to it (and name it) before this passes again.
        self.assertEqual(shipped.release,
                         '.'.join(map(str, install.nova_version())))
        self.assertEqual(corpus.installed_modules(), shipped.modules)

    def test_every_written_bug_names_its_nova_test_in_the_corpus(self):
        shipped = corpus.load()
        written = {entry.bug.id for entry in shipped.entries
                   if entry.status == 'bug'}
        self.assertEqual(
            sorted(bug.id for bug in bugs.known() if bug.nova_test),
            sorted(written))


class TestCorpusEntries(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def _write(self, text):
        path = os.path.join(self.directory, 'corpus.yaml')
        with open(path, 'w') as target:
            target.write(text)
        return path

    def _refused(self, entries, registry=None):
        path = self._write(HEAD + entries)
        error = self.assertRaises(errors.ScenarioError, corpus.load, path,
                                  registry=registry or {})
        self.assertIn(path, str(error))
        return str(error)

    def _bug(self, module='test_bug_1234567', reintroducible=True):
        return bugs.Bug(
            id='1234567', title='t', fix='f', story='s', path='p',
            nova_test=bugs.NovaTest(module, 'usage') if module else None,
            no_reintroduction='' if reintroducible else 'a migration')

    def test_statuses_and_counts(self):
        path = self._write(HEAD + (
            '  - {module: test_bug_1000001, not_accounting: tags}\n'
            '  - {module: test_bug_1000002, missing: vDPA ports}\n'
            '  - {module: test_bug_1000003, pending: a resize}\n'
            '  - {module: test_bug_1234567, bug: 1234567}\n'
            '  - {module: test_bug_2000000, unreviewed: not read}\n'))
        loaded = corpus.load(path, registry={'1234567': self._bug()})
        self.assertEqual(
            ['not_accounting', 'missing', 'pending', 'bug', 'unreviewed'],
            [entry.status for entry in loaded.entries])
        self.assertEqual(3, loaded.count(lambda e: e.accounting))
        self.assertEqual(1, loaded.count(lambda e: e.whole))
        self.assertEqual(1, loaded.count(lambda e: e.bites))
        self.assertEqual('vDPA ports', loaded.entries[1].text)
        self.assertIn('/tag/34.0.0/nova/tests/functional/regressions/'
                      'test_bug_1000001.py', loaded.source('test_bug_1000001'))

    def test_written_in_part_and_without_reintroduction(self):
        path = self._write(HEAD + (
            '  - {module: test_bug_1234567, bug: 1234567, part: no '
            'volumes}\n'))
        loaded = corpus.load(path, registry={
            '1234567': self._bug(reintroducible=False)})
        entry = loaded.entries[0]
        self.assertEqual(('no volumes', False, False, True),
                         (entry.part, entry.whole, entry.bites,
                          entry.accounting))

    def test_one_status_per_module(self):
        self.assertIn('field "tests[1]": test_bug_1000001 needs exactly one '
                      'of bug, missing, not_accounting, pending, unreviewed,'
                      ' got missing, pending', self._refused(
                          '  - {module: test_bug_1000001, missing: a, '
                          'pending: b}\n'))
        self.assertIn('got none', self._refused(
            '  - {module: test_bug_1000001}\n'))

    def test_unregistered_bug(self):
        self.assertIn('field "tests[1].bug": LP#7654321 is not a registered '
                      'bug', self._refused(
                          '  - {module: test_bug_7654321, bug: 7654321}\n'))

    def test_bug_must_name_the_module(self):
        self.assertIn('lp1234567.yaml must say bug.nova_test.module: '
                      "test_bug_1234567 (it says 'test_bug_1')", self._refused(
                          '  - {module: test_bug_1234567, bug: 1234567}\n',
                          registry={'1234567': self._bug('test_bug_1')}))

    def test_part_only_for_a_written_test(self):
        self.assertIn('field "tests[1].part": only a module written',
                      self._refused('  - {module: test_bug_1000001, '
                                    'missing: a, part: b}\n'))

    def test_sorted_without_repeats(self):
        self.assertIn('field "tests[2].module": test_bug_1000001 is listed '
                      'twice or out of order', self._refused(
                          '  - {module: test_bug_1000002, pending: a}\n'
                          '  - {module: test_bug_1000001, pending: a}\n'))

    def test_empty_text(self):
        self.assertIn('field "tests[1].missing": expected text',
                      self._refused('  - {module: test_bug_1000001, '
                                    'missing: ""}\n'))

    def test_release_named(self):
        path = self._write('nova: 34\ntests: []\n')
        self.assertIn('field "nova": expected a Nova release',
                      str(self.assertRaises(errors.ScenarioError,
                                            corpus.load, path, registry={})))


class TestScenarioAsserts(testing.TestCase):

    def test_names_keys_steps_and_invariants(self):
        bug = bugs.get('1821594')    # leaves tracker_agrees off
        text = corpus.scenario_asserts(bug.scenarios[0], bug)
        self.assertIn('invariants: all but tracker_agrees', text)
        self.assertIn('expect: ', text)
