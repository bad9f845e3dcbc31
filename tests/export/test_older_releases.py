"""Exported Nova tests fail on the release before their bug's fix.

Issue 46's proof for the bugs fixed after 31.0.0: for each bug whose
scenario file ``harness export nova-test`` translates, the release before
its fix in the release matrix (``constraints/nova<N>.txt``) is the newest
whose Nova predates the fix (``Bug.fixed_on``); there, the exported test
(plain: it imports no harness) run with that release's Nova from its
installed tree with Nova's runner must fail, at the step where the
harness's run of the scenario fails on that release (its own
expectations, as ``tests/regressions`` expects the bug on a release that
predates the fix). A bug whose fix every matrix release carries has no
such release (``test_bugs_fixed_on_every_release``).

The older Novas are virtualenvs in the folder named by
``HARNESS_OLDER_NOVAS`` (``nova<N>``, made by ``older_novas.py``; tox -e
export-proofs builds them in its env). The harness's verdict comes from a
process of that venv's Python with this checkout on its path
(``scenario_steps``), so it is that release's code that fails.

The runner names Nova's functional test package before the exported
module (``python -m testtools.run nova.tests.functional MODULE``): in
Nova's tree the module is ``nova.tests.functional.regressions.<MODULE>``,
so that package's ``__init__`` (which monkey-patches for eventlet on
Nova 33, Nova's default mode before 34) runs before the module's own
imports. Run as a top-level module, ``nova.context`` would be imported
before the patching and the live migration's monitor would fail on
oslo.db's transaction state (``TypeError: Can't upgrade a READER
transaction to a WRITER mid-transaction``), not on the bug.
"""

import glob
import json
import os
import re
import subprocess

import fixtures

from harness import bugs
from harness.export import nova_test
from harness.export import refusal
from harness import testing
from tests.export import scenario_steps
from tests.export import test_nova_proofs

ROOT = test_nova_proofs.ROOT
OLDER_NOVAS_ENV = 'HARNESS_OLDER_NOVAS'


def matrix():
    """Venv name (``nova33``) -> the Nova release its pins name."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, 'constraints',
                                              'nova*.txt'))):
        with open(path) as f:
            for line in f:
                match = re.match(r'^nova==(\d+)\.(\d+)\.(\d+)\s*$', line)
                if match:
                    found[os.path.basename(path)[:-len('.txt')]] = tuple(
                        int(part) for part in match.groups())
    return found


def release_before_fix(bug, releases=None):
    """(venv name, version) of the newest release predating the fix.

    None when every release of the matrix has the fix (or the bug
    records none: ``Bug.fixed_on`` takes it as fixed).
    """
    releases = matrix() if releases is None else releases
    older = [(version, name) for name, version in releases.items()
             if not bug.fixed_on(version)]
    if not older:
        return None
    version, name = max(older)
    return name, version


def exported_bugs():
    """Bug id -> the bug, for those whose scenarios export."""
    found = {}
    for bug in bugs.known():
        try:
            nova_test.export(bug.path)
        except refusal.Refused:
            continue
        found[bug.id] = bug
    return found


def _text(version):
    return '.'.join(str(part) for part in version)


def failing_line(source, module, output, method):
    """The line of test method ``method`` where Nova's runner saw it fail.

    The last of its lines in the traceback of its failure.
    """
    numbers = re.findall(r'File "[^"]*%s\.py", line (\d+), in %s\n'
                         % (module, method), output)
    return source.splitlines()[int(numbers[-1]) - 1]


def fixed_after(bug, version=(31, 0, 0)):
    return any(first > version for first in bug.fixed_in)


class ExportedTestsOnOlderReleases(testing.TestCase):

    def test_which_bugs_have_a_release_before_the_fix(self):
        # LP#1758086 was fixed in 33.0.0 only; LP#2140631, LP#2144660 and
        # LP#2153425 in 34.0.0. LP#2098496 (32.0.0, 31.1.0) is fixed
        # after 31.0.0 too but does not export (a compute node record's
        # pci_pools): see test_nova_proofs.
        found = {}
        for bug in exported_bugs().values():
            before = release_before_fix(bug)
            if before is not None:
                found[bug.id] = _text(before[1])
        self.assertEqual({'1758086': '32.2.1', '2140631': '33.0.2',
                          '2144660': '33.0.2', '2153425': '33.0.2'}, found)

    def test_bugs_fixed_on_every_release(self):
        # Fixed after 31.0.0, and backported to each series of the matrix
        # (31.3.1, 32.2.1, 33.0.2) from the release that fixed it: no
        # matrix release shows them.
        self.assertEqual(['2085135', '2115905'], sorted(
            bug.id for bug in exported_bugs().values()
            if fixed_after(bug) and release_before_fix(bug) is None))

    def test_release_before_fix_reads_fixed_in(self):
        releases = {'nova31': (31, 3, 1), 'nova32': (32, 2, 1),
                    'nova33': (33, 0, 2)}
        self.assertEqual(('nova33', (33, 0, 2)), release_before_fix(
            bugs.get('2153425'), releases))
        self.assertEqual(('nova32', (32, 2, 1)), release_before_fix(
            bugs.get('1758086'), releases))
        self.assertIsNone(release_before_fix(bugs.get('2085135'), releases))
        self.assertEqual(releases, matrix())

    def older_nova(self, name):
        """The python of venv ``name`` and its Nova's api-paste.ini."""
        folder = os.environ.get(OLDER_NOVAS_ENV)
        venv = os.path.join(folder or '', name)
        python = os.path.join(venv, 'bin', 'python')
        if not folder or not os.path.exists(python):
            self.fail('no %s venv in %s=%s: build it with `python '
                      'tests/export/older_novas.py DIR %s` and set %s=DIR '
                      '(tox -e export-proofs does)'
                      % (name, OLDER_NOVAS_ENV, folder or '(unset)',
                         name[len('nova'):], OLDER_NOVAS_ENV))
        paste = os.path.join(venv, 'etc', 'nova', 'api-paste.ini')
        self.assertTrue(os.path.exists(paste), paste)
        return python, paste

    def run_exported(self, python, paste, module, source):
        """Nova's runner on the exported module, in that venv."""
        tmp = self.useFixture(fixtures.TempDir()).path
        etc = os.path.join(tmp, 'state', 'etc', 'nova')
        os.makedirs(etc)
        os.symlink(paste, os.path.join(etc, 'api-paste.ini'))
        with open(os.path.join(tmp, module + '.py'), 'w') as f:
            f.write(source)
        env = dict(os.environ, PYTHONPATH=tmp,
                   OS_DEFAULT__STATE_PATH=os.path.join(tmp, 'state'))
        for name in ('HARNESS_REINTRODUCE',
                     'OS_NOVA_DISABLE_EVENTLET_PATCHING'):
            env.pop(name, None)
        run = subprocess.run(
            [python, '-m', 'testtools.run', 'nova.tests.functional', module],
            cwd=tmp, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, universal_newlines=True)
        return run.returncode, run.stdout

    def harness_steps(self, python, path):
        """The harness's verdict on ``path`` in that venv (scenario_steps)."""
        env = dict(os.environ, PYTHONPATH=ROOT)
        # Nova in the mode its release deploys, as tox -e
        # functional-nova<N> runs it.
        for name in ('HARNESS_CONCURRENCY', 'HARNESS_REINTRODUCE',
                     'OS_NOVA_DISABLE_EVENTLET_PATCHING'):
            env.pop(name, None)
        run = subprocess.run(
            [python, '-m', 'tests.export.scenario_steps', path], cwd=ROOT,
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True)
        self.assertEqual(0, run.returncode, run.stdout[-3000:])
        lines = [line for line in run.stdout.splitlines()
                 if line.startswith(scenario_steps.MARK)]
        self.assertEqual(1, len(lines), run.stdout[-3000:])
        return json.loads(lines[0][len(scenario_steps.MARK):])

    def prove(self, bug_id):
        bug = bugs.get(bug_id)
        name, version = release_before_fix(bug)
        python, paste = self.older_nova(name)
        verdict = self.harness_steps(python, bug.path)
        self.assertEqual(_text(version), verdict['nova'])
        # The harness shows the bug on that release.
        self.assertNotEqual([], [step for step in verdict['steps'].values()
                                 if step is not None], verdict)
        source = nova_test.export(bug.path)
        module = 'test_bug_%s' % bug.id
        code, output = self.run_exported(python, paste, module, source)
        self.assertEqual(1, code, 'bug %s on Nova %s:\n%s'
                         % (bug.id, verdict['nova'], output[-3000:]))
        self.assertIn('AssertionError', output.replace(
            'MismatchError', 'AssertionError'))
        names = nova_test.method_names(list(verdict['steps']))
        for scenario, step in verdict['steps'].items():
            method = names[scenario]
            failed = re.search(r'\n(FAIL|ERROR): %s\.\w+\.%s\n'
                               % (module, method), output)
            if step is None:
                self.assertIsNone(failed, '%s passes in the harness on '
                                  'Nova %s' % (scenario, verdict['nova']))
                continue
            self.assertEqual('FAIL', failed and failed.group(1), scenario)
            self.assertEqual(step, test_nova_proofs.failing_step(
                source, module, output, method + '\n'),
                '%s on Nova %s' % (scenario, verdict['nova']))
            # On one of the step's expectations, as the harness's run: not
            # on its operation (a helper that timed out waiting for it).
            # A request the API must refuse is one (exc = assertRaises).
            self.assertRegex(failing_line(source, module, output, method),
                             r'^\s+(exc = )?self\.assert', scenario)


def _proof(bug_id, name):
    def test(self):
        self.prove(bug_id)
    test.__name__ = 'test_bug_%s_fails_on_%s' % (bug_id, name)
    test.__doc__ = ('The exported test of bug %s fails on %s at the '
                    "harness's step." % (bug_id, name))
    return test


# One test a bug, named after the release it runs on.
for _bug in exported_bugs().values():
    _before = release_before_fix(_bug)
    if _before is not None:
        _test = _proof(_bug.id, _before[0])
        setattr(ExportedTestsOnOlderReleases, _test.__name__, _test)
