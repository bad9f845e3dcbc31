"""A wheel built from the checkout works on its own, from any directory.

Host profiles and the bugs' scenarios are data the harness reads at run
time; if the wheel left them out, everything would still pass from the
checkout (where the files lie next to the code, or in its top-level
``fixtures/``) and fail only once installed. So the wheel is built,
installed in a directory of its own and run from an unrelated working
directory, with only the installed copy on the path, on this
interpreter (which has Nova and Placement).

The wheel is built from a copy of the checkout: setuptools writes
``build/`` and ``*.egg-info`` into the tree it builds, and a stale
``build/lib`` left in a checkout would slip into the wheel.
"""

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import zipfile

import fixtures

import harness
from harness import testing

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# Stand-alone scenario file that names its hosts' profiles (not paths).
SCENARIO = os.path.join(REPO, 'tests', 'functional', 'scenarios',
                        'boot.yaml')
NOT_SOURCE = shutil.ignore_patterns(
    '.git', '.tox', '.stestr', '.venv', 'build', 'dist', '*.egg-info',
    '__pycache__', '*.pyc', 'cover')
# A reproduce is two runs of the bug's scenarios on new clouds.
TIMEOUT = 900


def data_files(parts, pattern, inside=None):
    """Package data files of the checkout, as paths inside the wheel.

    ``parts`` is the checkout's folder, ``inside`` where the build puts
    it in the wheel (the same path unless pyproject.toml maps it).
    """
    folder = os.path.join(REPO, *parts)
    return sorted('/'.join((inside or parts) + (name,))
                  for name in os.listdir(folder)
                  if fnmatch.fnmatchcase(name, pattern))


class TestWheel(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def pip(self, *args):
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK='1')
        result = subprocess.run(
            [sys.executable, '-m', 'pip'] + list(args) + ['--no-index'],
            capture_output=True, text=True, env=env, timeout=TIMEOUT)
        self.assertEqual(0, result.returncode, '%s\n%s' % (
            result.stdout[-3000:], result.stderr[-3000:]))

    def build_wheel(self):
        source = os.path.join(self.tmp, 'source')
        shutil.copytree(REPO, source, ignore=NOT_SOURCE)
        out = os.path.join(self.tmp, 'wheels')
        self.pip('wheel', '--no-deps', '--no-build-isolation', '-w', out,
                 source)
        wheels = os.listdir(out)
        self.assertEqual(['nova_harness-%s-py3-none-any.whl'
                          % harness.__version__], wheels)
        return os.path.join(out, wheels[0])

    def installed_run(self, site, cwd, *argv):
        """Run ``argv`` with only the installed wheel's harness on the path.

        Returns (exit code, stdout and stderr as one text).
        """
        env = dict(os.environ, PYTHONPATH=site)
        result = subprocess.run(list(argv), capture_output=True, text=True,
                                cwd=cwd, env=env, timeout=TIMEOUT)
        return result.returncode, result.stdout + result.stderr

    def test_wheel_carries_the_package_and_its_data(self):
        with zipfile.ZipFile(self.build_wheel()) as wheel:
            names = set(wheel.namelist())
            entry_points = wheel.read(
                'nova_harness-%s.dist-info/entry_points.txt'
                % harness.__version__).decode()
        # The profiles of the checkout's top-level fixtures/hosts, in the
        # package the build maps that folder to.
        hosts = data_files(('fixtures', 'hosts'), '*.yaml',
                           inside=('harness', '_fixtures', 'hosts'))
        bugs = data_files(('harness', 'bugs'), 'lp*.yaml')
        # Not vacuous: the checkout has both kinds of data.
        self.assertIn('harness/_fixtures/hosts/dev-1s-8c-smt2.yaml', hosts)
        self.assertIn('harness/bugs/lp1944759.yaml', bugs)
        self.assertEqual([], sorted(set(hosts + bugs) - names))
        self.assertIn('harness/__init__.py', names)
        self.assertIn('harness/core/scenario.py', names)
        # The harness and its metadata only: no tests, no benchmarks.
        self.assertEqual({'harness', 'nova_harness-%s.dist-info'
                          % harness.__version__},
                         {name.split('/')[0] for name in names})
        self.assertIn('harness = harness.runners.cli:main', entry_points)

    def test_installed_wheel_reproduces_and_runs_from_anywhere(self):
        wheel = self.build_wheel()
        site = os.path.join(self.tmp, 'site')
        self.pip('install', '--no-deps', '--target', site, wheel)
        elsewhere = os.path.join(self.tmp, 'elsewhere')
        os.mkdir(elsewhere)

        # The installed copy is the one imported, at the wheel's version,
        # and its host profiles are the wheel's: this interpreter's venv
        # holds the checkout's editable install too, whose profiles
        # (fixtures/hosts) must not stand in for missing ones.
        code, out = self.installed_run(
            site, elsewhere, sys.executable, '-c',
            'import harness, importlib.metadata, json; '
            'from harness.core import profiles; print(json.dumps(['
            'harness.__file__, harness.__version__, '
            'importlib.metadata.version("nova-harness"), '
            'profiles.PROFILE_DIR, profiles.known_profiles()]))')
        self.assertEqual(0, code, out)
        where, version, installed, profile_dir, known = json.loads(
            out.splitlines()[-1])
        self.assertTrue(where.startswith(site + os.sep), where)
        self.assertEqual([harness.__version__] * 2, [version, installed])
        self.assertEqual(os.path.join(site, 'harness', '_fixtures', 'hosts'),
                         profile_dir)
        checkout = sorted(name[:-len('.yaml')] for name in os.listdir(
            os.path.join(REPO, 'fixtures', 'hosts'))
            if name.endswith('.yaml'))
        self.assertIn('dev-1s-8c-smt2', checkout)
        self.assertEqual(checkout, known)

        # The console script the wheel declares.
        code, out = self.installed_run(
            site, elsewhere, os.path.join(site, 'bin', 'harness'), 'bugs')
        self.assertEqual(0, code, out)
        self.assertIn('LP#1944759', out)

        # A bug's scenario read from the package, with its profiles.
        code, out = self.installed_run(
            site, elsewhere, sys.executable, '-m', 'harness.runners.cli',
            'reproduce', '1944759')
        self.assertEqual(0, code, out[-5000:])
        self.assertIn('verdict: reproduced', out)
        # Nothing from the checkout's harness/ or fixtures/ (tox's venv may
        # live in the checkout, so its other paths can show up in warnings).
        self.assertNotIn(os.path.join(REPO, 'harness') + os.sep, out)
        self.assertNotIn(os.path.join(REPO, 'fixtures') + os.sep, out)

        # A scenario file of the user's own, naming profiles.
        scenario = os.path.join(elsewhere, 'mine.yaml')
        shutil.copy(SCENARIO, scenario)
        with open(scenario, encoding='utf-8') as source:
            self.assertIn('profile: dev-1s-8c-smt2', source.read())
        code, out = self.installed_run(
            site, elsewhere, sys.executable, '-m', 'harness.runners.cli',
            'run', 'mine.yaml')
        self.assertEqual(0, code, out[-5000:])
        # Nothing from the checkout's harness/ or fixtures/ (tox's venv may
        # live in the checkout, so its other paths can show up in warnings).
        self.assertNotIn(os.path.join(REPO, 'harness') + os.sep, out)
        self.assertNotIn(os.path.join(REPO, 'fixtures') + os.sep, out)
