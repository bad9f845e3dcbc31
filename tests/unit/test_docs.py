"""The docs: generated from the registries, so they name everything.

``doc/source/_exts/harness_reference.py`` makes the reference pages from
the step registry, the expectation keys and invariants, the bug
registry, the host profiles, tox.ini and the CLI's parsers. These tests
call its plain functions (no Sphinx needed) and check that every step
kind documents itself, that every example loads, and that the pages
name every kind, key, invariant, bug and option there is.
"""

import configparser
import importlib.util
import os
import re

from harness import bugs
from harness.bugs import corpus
from harness.core import errors
from harness.core import expect
from harness.core import invariants
from harness.core import profiles
from harness.core import scenario
from harness.core import steps
from harness.core.steps import base
from harness.runners import cli
from harness.runners.determinism import cli as determinism
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(ROOT, 'doc', 'source')


def _extension():
    # Loaded from its file, as Sphinx loads it; not put on sys.path.
    spec = importlib.util.spec_from_file_location(
        'harness_reference',
        os.path.join(DOC, '_exts', 'harness_reference.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _extension()
UNKNOWN = 'zz_not_a_field'


def _kinds():
    return [steps.get(name) for name in steps.names()]


class TestStepKindsDocumentThemselves(testing.TestCase):

    def test_every_kind_declares_summary_fields_and_example(self):
        for unit in _kinds():
            self.assertIsInstance(unit.summary, str, unit.name)
            self.assertTrue(unit.summary.strip(), unit.name)
            self.assertNotIn('\n', unit.summary, unit.name)
            self.assertIsInstance(unit.fields, dict, unit.name)
            self.assertTrue(unit.fields, unit.name)
            for field, declared in unit.fields.items():
                where = '%s.%s' % (unit.name, field)
                self.assertEqual(2, len(declared), where)
                kind, meaning = declared
                self.assertTrue(kind.strip(), where)
                self.assertTrue(meaning.strip(), where)
            self.assertIsInstance(unit.example, str, unit.name)

    def test_every_example_loads_in_the_example_scenario(self):
        for unit in _kinds():
            document = ref.example_document(unit)
            try:
                loaded = scenario.parse(document, 'example of %s'
                                        % unit.name)
            except errors.ScenarioError as exc:
                self.fail('the example of %s does not load: %s'
                          % (unit.name, exc))
            self.assertIn(unit.name, [step.kind for step in loaded.steps],
                          'the example of %s has no %s step'
                          % (unit.name, unit.name))

    def test_the_fields_a_kind_accepts_are_the_fields_it_documents(self):
        # Each step of the kind in its example, given one field more: the
        # loader refuses it and lists the fields it accepts there.
        for unit in _kinds():
            document = ref.example_document(unit)
            for position, step in enumerate(document['steps']):
                if unit.name not in step:
                    continue
                value = step[unit.name]
                probe = dict(value if isinstance(value, dict) else {},
                             **{UNKNOWN: 1})
                steps_probed = list(document['steps'])
                steps_probed[position] = dict(step, **{unit.name: probe})
                exc = self.assertRaises(
                    errors.ScenarioError, scenario.parse,
                    dict(document, steps=steps_probed), 'probe')
                found = re.search(r'unknown field; expected one of: (.*)$',
                                  str(exc))
                self.assertIsNotNone(found, '%s: %s' % (unit.name, exc))
                accepted = found.group(1).split(', ')
                self.assertLessEqual(set(accepted), set(unit.fields),
                                     '%s accepts fields it does not '
                                     'document' % unit.name)

    def test_a_kind_that_checks_its_fields_documents_them_in_order(self):
        # Where parse checks the keys against ``fields``, the error lists
        # them in the documented order: one list, not two.
        unit = steps.get('boot')
        document = ref.example_document(unit)
        document['steps'][0]['boot'][UNKNOWN] = 1
        exc = self.assertRaises(errors.ScenarioError, scenario.parse,
                                document, 'probe')
        self.assertIn('expected one of: %s' % ', '.join(unit.fields),
                      str(exc))


class TestReference(testing.TestCase):

    def test_step_kinds_page_names_every_kind_and_field(self):
        text = ref.step_kinds_rst(steps.registry(), steps.names(),
                                  base.ANY_POINT)
        for unit in _kinds():
            self.assertIn('.. _step-%s:' % unit.name, text)
            self.assertIn('``%s``\n---' % unit.name, text)
            self.assertIn(':ref:`%s <step-%s>`' % (unit.name, unit.name),
                          text)
            for field in unit.fields:
                self.assertIn('* - ``%s``' % field, text, unit.name)
        self.assertIn('``finish_resize``', text)
        self.assertIn('Race points it can pass: any (a periodic task',
                      text)

    def test_the_checks_page_names_every_key_and_invariant(self):
        # As the docs build makes it: from the check registry.
        text = ref._checks_text()
        for key in expect.EXPECT_KEYS:
            self.assertIn('``%s``' % key, text)
        for name in invariants.INVARIANTS:
            self.assertIn('``%s' % name, text)

    def test_fallback_separates_a_term_from_the_paragraph_above(self):
        lines = ref._blank_before_terms(
            ['Some text.', '``devices``', '    what it is', '``pci``',
             '    what that is'])
        self.assertEqual(['Some text.', '', '``devices``', '    what it is',
                          '``pci``', '    what that is'], lines)

    def test_check_registry_page_renders_each_unit(self):
        class Unit(object):
            """Long text, from the unit's docstring."""

            def __init__(self, name, accounting, shape=None, example=None):
                self.name = name
                self.accounting = accounting
                self.summary = 'what %s checks' % name
                self.shape = shape
                self.example = example

        expectations = {'pinned_cpus': Unit(
            'pinned_cpus', True, shape='{host: n | [cpu ids]}',
            example='pinned_cpus: {src: 2}')}
        found = {'nothing_leaks': Unit('nothing_leaks', True),
                 'within_reason': Unit('within_reason', False)}
        text = ref.checks_rst(expectations, found)
        self.assertIn('.. _expect-pinned_cpus:', text)
        self.assertIn(':ref:`pinned_cpus <expect-pinned_cpus>`', text)
        self.assertIn('what pinned_cpus checks', text)
        self.assertIn('   {host: n | [cpu ids]}', text)
        self.assertIn('   pinned_cpus: {src: 2}', text)
        self.assertIn('Long text, from the unit\'s docstring.', text)
        for name in found:
            self.assertIn('.. _invariant-%s:' % name, text)
        self.assertIn('- An accounting check.', text)
        self.assertIn('- Not an accounting check.', text)
        # Invariants have no shape or example to show.
        self.assertEqual(1, text.count('Shape:'))

    def test_bug_table_names_every_bug(self):
        known = bugs.known()
        text = ref.bugs_rst(known)
        for bug in known:
            self.assertIn('`LP#%s <%s>`__' % (bug.id, bug.link), text)
            if bug.reintroducible:
                self.assertIn('yes (``harness.bugs.lp%s``)' % bug.id, text)
            else:
                # A bug file that says why its fix cannot be put back
                # shows that reason instead.
                self.assertIn('no: ' + ref.escape(' '.join(
                    bug.no_reintroduction.split())), text)
            for item in bug.scenarios:
                self.assertIn(ref.escape(item.name), text)

    def test_bug_table_says_when_a_reintroduction_is_missing(self):
        bug = bugs.get('1944759')
        text = ref.bugs_rst([bug], module_exists=lambda name: False)
        self.assertIn('     - no\n', text)
        self.assertIn('22.4.0, 23.2.0, 24.1.0, 25.0.0', text)

    def test_corpus_table_names_every_nova_test(self):
        shipped = corpus.load()
        text = ref.corpus_rst(shipped)
        for entry in shipped.entries:
            self.assertIn('`%s <%s>`__' % (
                entry.module, shipped.source(entry.module)), text)
        self.assertIn('Nova 34.0.0 has %d regression test modules'
                      % len(shipped.entries), text)

    def test_cli_page_names_every_subcommand_and_option(self):
        parser = cli.build_parser()
        text = ref.cli_rst(parser, determinism.build_parser())
        for name, sub, _ in ref._subparsers(parser):
            self.assertIn('.. program:: harness %s' % name, text)
            if name == 'determinism':
                sub = determinism.build_parser()
            for action in sub._actions:
                for option in action.option_strings:
                    if option in ('-h', '--help'):
                        continue
                    self.assertIn(option, text, name)
        self.assertIn('.. option:: --hash-seeds S1,S2,...', text)
        self.assertIn('.. option:: --reintroduce BUG', text)

    def test_profiles_page_names_every_shipped_profile(self):
        text = ref.profiles_rst([profiles.load_profile(name) for name in
                                 profiles.known_profiles()])
        for name in profiles.known_profiles():
            self.assertIn('* - ``%s``' % name, text)

    def test_tox_page_names_every_env(self):
        path = os.path.join(ROOT, 'tox.ini')
        text = ref.tox_envs_rst(path)
        tox = configparser.ConfigParser(interpolation=None)
        tox.read(path, encoding='utf-8')
        envs = [section.split(':', 1)[1] for section in tox.sections()
                if section.startswith('testenv:')]
        self.assertIn('docs', envs)
        for env in envs + ['py3']:
            self.assertIn('``tox -e %s``' % env, text)

    def test_every_generator_is_on_a_page(self):
        pages = []
        for folder, _, names in os.walk(DOC):
            for name in names:
                if name.endswith('.rst'):
                    with open(os.path.join(folder, name),
                              encoding='utf-8') as page:
                        pages.append(page.read())
        for directive in ref.TEXTS:
            self.assertTrue(any('.. %s::' % directive in page
                                for page in pages), directive)


class TestReadme(testing.TestCase):

    def test_the_readme_is_a_front_page(self):
        with open(os.path.join(ROOT, 'README.rst'),
                  encoding='utf-8') as readme:
            text = readme.read()
        self.assertLess(len(text.splitlines()), 200)
        # The two commands, as CI runs the second (.ci/run).
        self.assertIn('tox -e reproduce -- 1944759', text)
        self.assertIn('tox -e pep8,py3,functional', text)
        # Figures and their dates live on the benchmarks page.
        self.assertNotRegex(text, r'(?i)\bsession\b')
        self.assertNotRegex(text, r'Figures of \d{4}-')
