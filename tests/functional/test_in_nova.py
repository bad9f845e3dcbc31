"""The docs' example test in Nova's tree runs with Nova's runner.

``doc/source/user/examples/test_with_harness_fixtures.py`` (profiled
computes, a race point with a periodic and with a dying compute, a
Placement fault, the virtual clock) is copied to a temporary directory
and run there with ``python -m testtools.run`` on Nova's own test base
classes, in this process's concurrency mode (Nova's test package reads
``OS_NOVA_DISABLE_EVENTLET_PATCHING``), as the export proofs run Nova's
tests (tests/export): ``api-paste.ini`` linked under a temporary
``state_path``. One of the proofs (``tox -e functional-proofs``): a whole
Nova test run in a process of its own.
"""

import os
import shutil
import subprocess
import sys

import fixtures

import harness
from harness.cloud import install
from harness.core import concurrency
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(harness.__file__)))
EXAMPLE = os.path.join(ROOT, 'doc', 'source', 'user', 'examples',
                       'test_with_harness_fixtures.py')


class TestExampleInNovasRunner(testing.TestCase):

    def test_example_passes_with_novas_runner(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        etc = os.path.join(tmp, 'state', 'etc', 'nova')
        os.makedirs(etc)
        os.symlink(install.nova_api_paste_ini(),
                   os.path.join(etc, 'api-paste.ini'))
        shutil.copy(EXAMPLE, tmp)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join((tmp, ROOT)),
                   OS_DEFAULT__STATE_PATH=os.path.join(tmp, 'state'),
                   OS_NOVA_DISABLE_EVENTLET_PATCHING=(
                       'true' if concurrency.running_mode()
                       == concurrency.THREADING else 'false'))
        env.pop(concurrency.ENV, None)
        run = subprocess.run(
            [sys.executable, '-m', 'testtools.run',
             'test_with_harness_fixtures'], cwd=tmp, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True)
        self.assertEqual(0, run.returncode, run.stdout[-6000:])
        self.assertIn('Ran 4 tests', run.stdout)
