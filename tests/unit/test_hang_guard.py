"""A hung test fails with every thread's stack (harness.testing.hang_guard).

The hangs are real waits nothing ends (an ``Event`` never set), each in
a process of its own under native threads; the guard's limit is a
second, its grace a second, so each proof takes about two.
"""

import json
import os
import subprocess
import sys
import textwrap

import fixtures

from harness.core import errors
from harness import testing
from harness.testing import hang_guard


class TestHangGuard(testing.TestCase):

    def test_a_hung_test_fails_with_every_stack(self):
        # In a process of its own: the unit tests' process may run under
        # eventlet, whose green threads a real wait would stall.
        out = _python('''
            import json, threading, testtools
            from harness.testing import hang_guard
            done = threading.Event()
            # a second thread parked, as a Nova worker would be
            helper = threading.Thread(target=done.wait, name='stuck-helper')
            helper.start()
            class T(testtools.TestCase):
                def test(self):
                    self.useFixture(hang_guard.HangGuard(self, 1, grace=30))
                    threading.Event().wait()
            result = testtools.TestResult()
            T('test').run(result)
            done.set()
            print(json.dumps([[text, sorted(test.getDetails()),
                               test.getDetails().get('threads').as_text()]
                              for test, text in result.errors]))
        ''')
        self.assertEqual(0, out.returncode, out.stderr)
        errors_seen = json.loads(out.stdout)
        self.assertEqual(1, len(errors_seen))
        text, details, stacks = errors_seen[0]
        self.assertIn('TestHung', text)
        self.assertIn('still running after 1 s', text)
        self.assertIn('HARNESS_TEST_TIMEOUT', text)
        self.assertIn('threads', details)
        self.assertIn('stuck-helper', stacks)
        self.assertIn('MainThread', stacks)

    def test_unset_or_zero_is_no_limit(self):
        self.useFixture(_limit(None))
        self.assertEqual(0, hang_guard.limit())
        self.useFixture(_limit('0'))
        self.assertEqual(0, hang_guard.limit())
        self.useFixture(_limit('900'))
        self.assertEqual(900, hang_guard.limit())

    def test_a_limit_that_is_not_seconds_is_refused(self):
        for bad in ('ten', '-1', '1.5'):
            self.useFixture(_limit(bad))
            e = self.assertRaises(errors.HarnessError, hang_guard.limit)
            self.assertIn('HARNESS_TEST_TIMEOUT=%r' % bad, str(e))

    def test_a_main_thread_deaf_to_the_alarm_ends_the_process(self):
        # SIGALRM blocked: the main thread cannot fail the test, so the
        # process dumps every stack and exits after the grace.
        out = _python('''
            import signal, threading, testtools
            from harness.testing import hang_guard
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            class T(testtools.TestCase):
                def test(self):
                    self.useFixture(hang_guard.HangGuard(self, 1, grace=1))
                    threading.Event().wait()
            T('test').run(testtools.TestResult())
            print('not reached')
        ''')
        self.assertNotEqual(0, out.returncode)
        self.assertNotIn('not reached', out.stdout)
        self.assertIn('Timeout', out.stderr)
        self.assertIn('most recent call first', out.stderr)

    def test_a_thread_that_holds_the_exit_ends_the_process(self):
        # A thread nobody made a daemon, waiting for good: the interpreter
        # would wait for it at exit forever.
        out = _python('''
            import threading
            from harness.testing import hang_guard
            threading.Thread(target=threading.Event().wait,
                             name='holds-exit').start()
            hang_guard.guard_exit(1)
            print('tests done')
        ''')
        self.assertIn('tests done', out.stdout)
        self.assertNotEqual(0, out.returncode)
        self.assertIn('most recent call first', out.stderr)


def _limit(value):
    return fixtures.EnvironmentVariable(hang_guard.TIMEOUT_ENV, value)


def _python(source):
    # The guard ends a hung process itself; the timeout here only keeps a
    # broken guard from hanging this suite.
    return subprocess.run(
        [sys.executable, '-c', textwrap.dedent(source)],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, HARNESS_CONCURRENCY='threading'))
