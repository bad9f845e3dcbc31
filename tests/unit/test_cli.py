"""The command line's answers to bad input, and its listings (no Nova)."""

import argparse
import io
import os
import subprocess
import sys

import fixtures

from harness.runners import cli
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUGS = os.path.join(ROOT, 'harness', 'bugs')


class CliTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.stderr = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', self.stderr))
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def run_cli(self, *argv):
        out = io.StringIO()
        code = cli.main(list(argv), out=out)
        return code, out.getvalue(), self.stderr.getvalue()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return path


class TestBadInput(CliTestCase):

    def test_unknown_bug_lists_the_known_ones(self):
        code, _, err = self.run_cli('reproduce', '999999')
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertIn("unknown bug '999999'", err)
        self.assertIn('1944759', err)

    def test_missing_scenario_file(self):
        code, _, err = self.run_cli('run', os.path.join(self.tmp, 'no.yaml'))
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertIn('no.yaml: no such scenario file', err)

    def test_malformed_scenario_names_file_step_and_field(self):
        path = self.write('bad.yaml', (
            'name: bad\nhosts: {h1: {driver: fake}}\n'
            'flavors: {f: {vcpus: 1, ram: 64, disk: 1}}\n'
            'steps:\n  - boot: {server: vm1, flavor: nope}\n'))
        code, _, err = self.run_cli('run', path)
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertIn('bad.yaml, step 1, field "boot.flavor"', err)
        self.assertIn("unknown flavor 'nope'", err)
        # One clean line of our own, no traceback.
        self.assertNotIn('Traceback', err)

    def test_both_modes_only_for_run(self):
        path = self.write('one.yaml', (
            'name: one\nhosts: {h1: {driver: fake}}\n'
            'steps:\n  - run_periodic: update_available_resource\n'))
        code, _, err = self.run_cli('explore', '--concurrency', 'both', path)
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertEqual('harness: --concurrency both: only "harness run" '
                         'compares the modes\n', err)

    def test_merge_takes_the_shards_options(self):
        # Given again, an option could differ from the shards' own; the
        # merge refuses them all before reading a file.
        code, _, err = self.run_cli(
            'explore', '--merge', '--nested', '--prune', '--depth', '2',
            os.path.join(self.tmp, 'shard-0-of-1.json'))
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertEqual('harness: --merge explores with the shards\' '
                         'options; drop --depth, --nested, --prune\n', err)

    def test_a_mode_other_than_the_running_one_is_refused(self):
        from harness.core import concurrency
        self.useFixture(fixtures.EnvironmentVariable(concurrency.ENV))
        self.useFixture(fixtures.MockPatchObject(
            concurrency, '_RUNNING', [concurrency.EVENTLET]))
        code, _, err = self.run_cli('reproduce', '--concurrency',
                                    'threading', '1944759')
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertIn('already runs Nova in eventlet mode', err)

    def test_a_mode_is_set_for_this_process_and_its_children(self):
        from harness.core import concurrency
        self.useFixture(fixtures.EnvironmentVariable(concurrency.ENV))
        self.useFixture(fixtures.MockPatchObject(concurrency, '_RUNNING',
                                                 []))
        # Refused for an unknown bug after the mode is chosen: no Nova.
        code, _, _err = self.run_cli('reproduce', '--concurrency',
                                     'eventlet', '999999')
        self.assertEqual(cli.EXIT_BAD_INPUT, code)
        self.assertEqual('eventlet', os.environ[concurrency.ENV])

    def test_an_unknown_mode_is_a_usage_error(self):
        exc = self.assertRaises(SystemExit, cli.main,
                                ['run', '--concurrency', 'greenlet', 'x'])
        self.assertEqual(cli.EXIT_BAD_INPUT, exc.code)
        self.assertIn("invalid choice: 'greenlet'", self.stderr.getvalue())

    def test_no_command_is_a_usage_error(self):
        exc = self.assertRaises(SystemExit, cli.main, [])
        self.assertEqual(cli.EXIT_BAD_INPUT, exc.code)

    def test_unknown_option_is_a_usage_error(self):
        argv = ['run', '--frobnicate', 'x.yaml']
        exc = self.assertRaises(SystemExit, cli.main, argv)
        self.assertEqual(cli.EXIT_BAD_INPUT, exc.code)
        self.assertIn('--frobnicate', self.stderr.getvalue())

    def test_bad_input_does_not_import_nova(self):
        # Nova's import is what starts eventlet patching and takes seconds;
        # refusing bad input must not need it. Run in a clean interpreter.
        path = self.write('bad.yaml', 'name: [unclosed\n')
        code = ('import sys; from harness.runners import cli; '
                'rc = cli.main(["run", %r]); '
                'sys.exit(10 + rc if "nova" in sys.modules else rc)' % path)
        result = subprocess.run([sys.executable, '-c', code],
                                capture_output=True, text=True)
        self.assertEqual(cli.EXIT_BAD_INPUT, result.returncode,
                         result.stderr)
        self.assertIn('not valid YAML', result.stderr)


class TestBugs(CliTestCase):

    def test_lists_bug_title_link_and_fix(self):
        code, out, _ = self.run_cli('bugs')
        self.assertEqual(cli.EXIT_PASS, code)
        self.assertIn('LP#1944759  Store old_flavor already on source host '
                      'during resize', out)
        self.assertIn('https://bugs.launchpad.net/nova/+bug/1944759', out)
        self.assertIn('b841e553214be9a732703e2dfed6c97698ef9b71', out)


class TestRunChecksOfBugFiles(testing.TestCase):
    """``harness run`` checks a bug file as its regression tests do."""

    def checker(self, path, **flags):
        from harness.core import scenario as scenario_mod
        args = argparse.Namespace(**dict(
            {'no_invariants': False, 'no_periodic_check': False,
             'capacity_probe': None}, **flags))
        [scenario] = scenario_mod.load(path)[:1]
        [checks] = cli._checks_of(args)(scenario)
        return getattr(checks, 'checker', checks)

    def test_a_bug_file_s_invariants_off_stay_off(self):
        # LP#1896463's file leaves tracker_agrees off, and says why.
        path = os.path.join(BUGS, 'lp1896463.yaml')
        self.assertNotIn('tracker_agrees', self.checker(path).enabled)
        self.assertIn('nothing_leaks', self.checker(path).enabled)

    def test_other_files_get_every_invariant(self):
        path = os.path.join(BUGS, 'lp1944759.yaml')
        self.assertIn('tracker_agrees', self.checker(path).enabled)
        path = os.path.join(ROOT, 'tests', 'functional', 'scenarios',
                            'boot.yaml')
        self.assertIn('tracker_agrees', self.checker(path).enabled)

    def test_no_invariants_still_means_none(self):
        path = os.path.join(BUGS, 'lp1896463.yaml')
        from harness.core import scenario as scenario_mod
        [scenario] = scenario_mod.load(path)[:1]
        args = argparse.Namespace(no_invariants=True,
                                  no_periodic_check=False,
                                  capacity_probe=None)
        self.assertEqual([], cli._checks_of(args)(scenario))


class TestHashSeed(testing.TestCase):
    """The program pins Python's hash seed: Nova's choices follow it."""

    def _pin(self, environ):
        calls = []
        cli.pin_hash_seed(environ, lambda *args: calls.append(args))
        return calls

    def test_unset_runs_the_same_command_again_with_seed_0(self):
        calls = self._pin({'PATH': '/bin'})
        self.assertEqual(1, len(calls))
        executable, argv, env = calls[0]
        self.assertEqual(sys.executable, executable)
        self.assertEqual([sys.executable] + sys.orig_argv[1:], argv)
        self.assertEqual({'PATH': '/bin', 'PYTHONHASHSEED': '0'}, env)

    def test_a_seed_set_stays(self):
        self.assertEqual([], self._pin({'PYTHONHASHSEED': '7'}))
        self.assertEqual([], self._pin({'PYTHONHASHSEED': 'random'}))

    def test_the_program_runs_pinned(self):
        env = {k: v for k, v in os.environ.items()
               if k != 'PYTHONHASHSEED'}
        # As the console script does (argv None): pinned, then it runs.
        code = ('import sys, os; from harness.runners import cli; '
                'sys.argv = ["harness", "bugs"]; '
                'print("seed", os.environ.get("PYTHONHASHSEED"), '
                'sys.flags.hash_randomization, flush=True); cli.main()')
        out = subprocess.run([sys.executable, '-c', code], env=env,
                             capture_output=True, text=True, timeout=120)
        seeds = [line for line in out.stdout.splitlines()
                 if line.startswith('seed ')]
        # Once unpinned, then again pinned (hash randomization off).
        self.assertEqual(['seed None 1', 'seed 0 0'], seeds, out.stderr)
        self.assertEqual(0, out.returncode, out.stderr)
