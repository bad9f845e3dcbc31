"""Which Nova is under test, and what a bug's ``fixed_in`` says about it.

No Nova needed: a source tree is made in a temp dir, versions are tuples.
"""

import glob
import os
import re
from unittest import mock

import fixtures
import yaml

from harness import bugs
from harness.cloud import install
from harness.core import errors
from harness.runners import reproduce
from harness import testing

BUG = """
bug:
  id: 1234567
  title: t
  fix: f
  story: s
  fixed_in: %s
scenarios:
  - name: boot one
    bugs: [1234567]
    hosts: {h: {driver: fake}}
    flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
    steps:
      - boot: {server: vm1, flavor: small}
"""


class TestSourceTree(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(fixtures.TempDir()).path
        self.package = os.path.join(self.tree, 'nova')
        os.makedirs(self.package)
        open(os.path.join(self.package, '__init__.py'), 'w').close()
        open(os.path.join(self.tree, 'setup.cfg'), 'w').close()

    def paste(self):
        etc = os.path.join(self.tree, 'etc', 'nova')
        os.makedirs(etc)
        path = os.path.join(etc, 'api-paste.ini')
        open(path, 'w').close()
        return path

    def test_a_tree_has_api_paste_next_to_the_package(self):
        self.paste()
        self.assertEqual(self.tree, install.source_tree(self.package))

    def test_a_wheels_site_packages_is_no_tree(self):
        self.assertIsNone(install.source_tree(self.package))

    def test_etc_linked_into_site_packages_makes_no_tree(self):
        # benchmarks/compare_nova.py --link-api-paste does that.
        self.paste()
        os.remove(os.path.join(self.tree, 'setup.cfg'))
        self.assertIsNone(install.source_tree(self.package))

    def test_the_tree_wins_over_the_wheel_metadata(self):
        path = self.paste()
        with mock.patch.object(install, 'nova_package_dir',
                               return_value=self.package), \
                mock.patch.object(install.metadata, 'distribution') as dist:
            self.assertEqual(path, install.nova_api_paste_ini())
        dist.assert_not_called()

    def test_neither_tree_nor_wheel_file_is_a_clear_error(self):
        wheel = mock.Mock(version='35.0.0.dev12', files=[])
        with mock.patch.object(install, 'nova_package_dir',
                               return_value=self.package), \
                mock.patch.object(install.metadata, 'distribution',
                                  return_value=wheel):
            error = self.assertRaises(errors.SetupError,
                                      install.nova_api_paste_ini)
        self.assertIn(self.package, str(error))
        self.assertIn('pip install -e', str(error))

    def test_no_nova_at_all(self):
        with mock.patch.object(install.importlib.util, 'find_spec',
                               return_value=None):
            self.assertIsNone(install.nova_package_dir())
            self.assertIsNone(install.source_tree())


class TestVersions(testing.TestCase):

    def test_parse(self):
        for text, version in (('34.0.0', (34, 0, 0)),
                              ('33.0.2', (33, 0, 2)),
                              ('35.0.0.0rc1', (35, 0, 0)),
                              ('35.1.0.dev12', (35, 1, 0)),
                              ('32', (32, 0, 0))):
            self.assertEqual(version, install.parse_version(text), text)
        self.assertRaises(errors.SetupError, install.parse_version, 'dev')

    def test_installed(self):
        self.assertEqual(3, len(install.nova_version()))


class TestFixedIn(testing.TestCase):

    def load(self, fixed_in):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'lp1234567.yaml')
        with open(path, 'w') as target:
            target.write(BUG % fixed_in)
        # The reintroduction module is looked up next to bugs/ only.
        with mock.patch.object(bugs.importlib.util, 'find_spec',
                               return_value=object()):
            return bugs.load(path)

    def test_one_release(self):
        bug = self.load('32.0.0')
        self.assertEqual(((32, 0, 0),), bug.fixed_in)
        self.assertFalse(bug.fixed_on((31, 3, 1)))
        self.assertTrue(bug.fixed_on((32, 0, 0)))
        self.assertTrue(bug.fixed_on((34, 0, 0)))

    def test_backports_count_in_their_series_only(self):
        bug = self.load('[31.2.0, 32.0.0]')
        self.assertEqual('31.2.0, 32.0.0', bug.fixed_in_text)
        self.assertFalse(bug.fixed_on((31, 1, 0)))
        self.assertTrue(bug.fixed_on((31, 2, 0)))
        self.assertTrue(bug.fixed_on((31, 3, 1)))
        self.assertFalse(bug.fixed_on((30, 9, 0)))
        self.assertTrue(bug.fixed_on((33, 0, 2)))

    def test_a_series_between_backports_lacks_it(self):
        bug = self.load('[30.5.0, 32.0.0]')
        self.assertFalse(bug.fixed_on((31, 3, 1)))

    def test_not_a_release(self):
        error = self.assertRaises(errors.ScenarioError, self.load, '32.0')
        self.assertIn('field "bug.fixed_in": expected a Nova release', str(
            error))

    def test_two_of_one_series(self):
        error = self.assertRaises(errors.ScenarioError, self.load,
                                  '[32.0.0, 32.1.0]')
        self.assertIn('32.0.0 and 32.1.0 are of one series', str(error))

    def test_empty_list(self):
        error = self.assertRaises(errors.ScenarioError, self.load, '[]')
        self.assertIn('field "bug.fixed_in"', str(error))

    def test_registered_bugs_say_where_they_were_fixed(self):
        bug = bugs.get('2144660')
        self.assertEqual(((34, 0, 0),), bug.fixed_in)
        self.assertFalse(bug.fixed_on((33, 0, 2)))
        self.assertTrue(bugs.get('2115905').fixed_on((31, 2, 0)))
        self.assertFalse(bugs.get('2115905').fixed_on((31, 1, 0)))


class TestReleasePython(testing.TestCase):

    def test_found_in_the_tox_work_dir(self):
        work = self.useFixture(fixtures.TempDir()).path
        bin_dir = os.path.join(work, 'functional-nova33', 'bin')
        os.makedirs(bin_dir)
        python = os.path.join(bin_dir, 'python')
        open(python, 'w').close()
        self.assertEqual(python, reproduce.release_python(
            33, {'TOX_WORK_DIR': work}))

    def test_missing_env_says_how_to_make_it(self):
        work = self.useFixture(fixtures.TempDir()).path
        with mock.patch.object(reproduce, 'HARNESS_ROOT', work), \
                mock.patch.object(reproduce.os, 'getcwd', return_value=work):
            error = self.assertRaises(
                errors.SetupError, reproduce.release_python, 29,
                {'TOX_WORK_DIR': work})
        self.assertIn('tox -e functional-nova29 --notest', str(error))

    def test_the_cli_takes_the_release(self):
        from harness.runners import cli
        args = cli.build_parser().parse_args(
            ['reproduce', '2144660', '--nova-release', '33'])
        self.assertEqual(33, args.nova_release)
        with mock.patch.object(reproduce, 'on_release',
                               return_value=0) as on_release:
            self.assertEqual(0, cli.cmd_reproduce(args, None))
        on_release.assert_called_once_with(
            33, ['reproduce', '2144660'], None)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class TestMatrix(testing.TestCase):
    """Every release with a constraints file has its tox env and Zuul job."""

    def releases(self):
        names = glob.glob(os.path.join(ROOT, 'constraints', 'nova*.txt'))
        return sorted(re.search(r'nova(\d+)\.txt$', name).group(1)
                      for name in names)

    def test_each_release_is_a_factor_of_the_tox_env(self):
        with open(os.path.join(ROOT, 'tox.ini')) as source:
            text = source.read()
        [factors] = re.findall(r'^\[testenv:functional-nova\{([\d,]+)\}\]',
                               text, re.M)
        self.assertEqual(self.releases(), sorted(factors.split(',')))
        for release in self.releases():
            self.assertIn('nova%s: -r{toxinidir}/constraints/nova%s.txt'
                          % (release, release), text)

    def test_each_release_has_a_zuul_job_in_a_pipeline(self):
        with open(os.path.join(ROOT, '.zuul.yaml')) as source:
            config = yaml.safe_load(source)
        jobs = {item['job']['name']: item['job'] for item in config
                if 'job' in item}
        [project] = [item['project'] for item in config if 'project' in item]
        run = set()
        for pipeline in project.values():
            run.update(pipeline['jobs'])
        for release in self.releases():
            name = 'nova-harness-tox-functional-nova%s' % release
            self.assertEqual('functional-nova%s' % release,
                             jobs[name]['vars']['tox_envlist'])
            self.assertIn(name, run)
