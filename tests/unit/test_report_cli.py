"""The CLI's output options: where logs go, where reports go (no Nova)."""

import os
import subprocess
import sys
import types

import fixtures

from harness.runners import cli
from harness import testing


class TestOutputOptions(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cache = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable('XDG_CACHE_HOME',
                                                     self.cache))

    def test_logs_go_to_the_cache_and_the_oldest_are_removed(self):
        logs = cli.log_dir()
        self.assertEqual(os.path.join(self.cache, 'harness', 'logs'), logs)
        os.makedirs(logs)
        for n in range(cli.KEEP_LOGS + 3):
            with open(os.path.join(logs, 'harness-2026%04d.log' % n), 'w'):
                pass
        path = cli._log_path(types.SimpleNamespace(log=None))
        self.assertEqual(logs, os.path.dirname(path))
        kept = sorted(os.listdir(logs))
        # With the new one (not created yet), KEEP_LOGS in all.
        self.assertEqual(cli.KEEP_LOGS - 1, len(kept))
        self.assertEqual('harness-2026%04d.log' % 4, kept[0])

    def test_a_chosen_log_is_taken_as_given(self):
        path = cli._log_path(types.SimpleNamespace(log='x/y.log'))
        self.assertEqual(os.path.abspath('x/y.log'), path)

    def test_report_dir_from_the_option_only(self):
        parser = cli.build_parser()
        # The suite's variable is not the CLI's: a test running the CLI
        # must not write into the suite's reports.
        self.useFixture(fixtures.EnvironmentVariable('HARNESS_REPORT_DIR',
                                                     'env'))
        for verb in (['run', 'a.yaml'], ['reproduce', '1944759'],
                     ['explore', 'a.yaml']):
            args = parser.parse_args(verb + ['--report', 'out'])
            self.assertEqual('out', cli._report_dir(args))
            self.assertIsNone(cli._report_dir(parser.parse_args(verb)))

    def test_verbose_and_log_on_every_verb_but_determinism(self):
        parser = cli.build_parser()
        args = parser.parse_args(['bugs', '--verbose', '--log', 'l.log'])
        self.assertTrue(args.verbose)
        self.assertEqual('l.log', args.log)

    def test_a_log_that_cannot_be_written_is_bad_input(self):
        # As the program (no argv): it owns its output only then.
        code = ('import sys; from harness.runners import cli; '
                'sys.argv = ["harness", "bugs", "--log", %r]; '
                'sys.exit(cli.main())' % os.path.join(self.cache, 'no', 'x'))
        result = subprocess.run([sys.executable, '-c', code],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(cli.EXIT_BAD_INPUT, result.returncode)
        self.assertIn('harness: the log file: ', result.stderr)
        self.assertEqual('', result.stdout)
