"""The leak check fails a test for each kind of thing it leaves behind.

Each case runs a deliberately leaky test (``Leaky``) inside itself, as
stestr would run it, and reads the failure the leak check gave it. The
leak check undoes what it can (attributes, CONF, greenthreads, temp
entries), so the outer test, itself leak-checked, stays clean; what it
cannot undo (a thread, a file in the working directory) the outer test
undoes itself.
"""

import os
import socket
import tempfile
import threading

import fixtures
from oslo_config import cfg
import testtools

from harness.core import errors
from harness import testing
from harness.testing import leaks


class _Eventlet(object):
    """eventlet, imported on first use, by the tests that use it.

    The functional suite's processes run Nova in native threading, where
    importing eventlet is refused (``nova.monkey_patch.poison_eventlet``),
    and their test discovery imports this module too; these tests run in
    the unit suite's processes, which import no Nova.
    """

    def __getattr__(self, name):
        import eventlet
        import eventlet.tpool  # noqa: F401
        return getattr(eventlet, name)


eventlet = _Eventlet()
GROUP = 'harness_leaks_test'
PROBE_OPT = cfg.StrOpt('probe', default='as shipped')
# Registered at import, as real options are, so that no test registers it.
cfg.CONF.register_opt(PROBE_OPT, group=GROUP)

#: A module global a leaky test rebinds (``tests.*`` modules are watched).
PROBE = 'as imported'

_RELEASE = threading.Event()
#: Greenthreads the leaky tests leave (the check reports, never kills).
_LEFT = []


class Leaky(testing.TestCase):
    """Tests that leave one thing behind each (no ``test_`` methods)."""

    def nothing(self):
        pass

    def patch_and_restore(self):
        # Put back by its own clean-up, which runs before the leak check.
        self.useFixture(fixtures.MonkeyPatch(
            'socket.getfqdn', lambda *a: 'patched'))
        self.useFixture(fixtures.MonkeyPatch(
            'tests.unit.test_leaks.PROBE', 'patched'))
        cfg.CONF.set_override('probe', 'patched', group=GROUP)
        self.addCleanup(cfg.CONF.clear_override, 'probe', group=GROUP)

    def conf_override(self):
        cfg.CONF.set_override('probe', 'left over', group=GROUP)

    def conf_default(self):
        cfg.CONF.set_default('probe', 'new default', group=GROUP)

    def conf_register(self):
        cfg.CONF.register_opt(cfg.StrOpt('late'), group=GROUP)

    def module_global(self):
        global PROBE
        PROBE = 'left over'

    def stdlib_function(self):
        socket.getfqdn = lambda *a: 'left over'

    def class_attribute(self):
        errors.HarnessError.probe = 'left over'

    def environment(self):
        os.environ['HARNESS_LEAKS_PROBE'] = 'left over'

    def thread(self):
        threading.Thread(target=_RELEASE.wait, name='leaky-thread',
                         daemon=True).start()

    def greenthread(self):
        _LEFT.append(eventlet.spawn(eventlet.sleep, 60))
        eventlet.sleep(0)

    def greenthread_not_started(self):
        _LEFT.append(eventlet.spawn_after(60, _parked))

    def greenthread_started_in_the_grace(self):
        _LEFT.append(eventlet.spawn(_parked))

    def greenthread_that_ends(self):
        # Still running at the end of the test, done within the grace.
        eventlet.spawn(eventlet.sleep, 0.05)
        eventlet.sleep(0)

    def tpool_first_use(self):
        eventlet.tpool.execute(lambda: None)

    def temp_dir(self):
        tempfile.mkdtemp(prefix='leaky-')

    def temp_file(self):
        fd, _path = tempfile.mkstemp(prefix='leaky-')
        os.close(fd)

    def sqlite_in_tempdir(self):
        open(os.path.join(tempfile.gettempdir(), 'leaky.sqlite'),
             'w').close()

    def sqlite_in_cwd(self):
        open('leaky.db', 'w').close()

    def chdir(self):
        os.chdir(tempfile.gettempdir())

    def eventlet_patch(self):
        eventlet.patcher.already_patched['harness-leaks-probe'] = True

    def two_things(self):
        self.conf_override()
        self.module_global()

    def pool_keeps(self):
        # What a kept cloud's stand-up does (harness.cloud.reuse), inside
        # pool_changing: the pool's, not the test's.
        global PROBE
        with leaks.pool_changing():
            PROBE = 'kept'
            cfg.CONF.set_override('probe', 'kept', group=GROUP)
            os.environ['HARNESS_LEAKS_PROBE'] = 'kept'
            fd, _path = tempfile.mkstemp(prefix='kept-')
            os.close(fd)
            _LEFT.append(eventlet.spawn(_parked))
            eventlet.sleep(0)

    def leaks_around_pool_change(self):
        global PROBE
        socket.getfqdn = lambda *a: 'before the change'
        with leaks.pool_changing():
            PROBE = 'kept'
        cfg.CONF.set_override('probe', 'after the change', group=GROUP)

    def pool_gives_up(self):
        # The test that made the pool's state set PROBE (see the case).
        global PROBE
        with leaks.pool_changing():
            PROBE = 'as imported'


def _parked():
    eventlet.sleep(60)


def _kill_left():
    while _LEFT:
        _LEFT.pop().kill()


class TestLeakCheck(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(_kill_left)

    def run_leaky(self, name):
        """Run ``Leaky.<name>``; return the leak check's message or None."""
        result = testtools.TestResult()
        Leaky(name).run(result)
        self.assertEqual([], result.errors)
        if result.wasSuccessful():
            return None
        self.assertEqual(1, len(result.failures))
        text = result.failures[0][1]
        self.assertIn('harness.testing.leaks.LeakError', text)
        return text[text.index('LeakError: ') + len('LeakError: '):]

    def assertLeaks(self, name, *expected):
        message = self.run_leaky(name)
        self.assertIsNotNone(message, '%s leaked nothing' % name)
        self.assertIn('left %d thing(s) behind' % len(expected), message)
        for text in expected:
            self.assertIn('\n  ' + text, message)
        return message

    def test_clean_test_passes(self):
        self.assertIsNone(self.run_leaky('nothing'))

    def test_what_the_test_restores_is_no_leak(self):
        self.assertIsNone(self.run_leaky('patch_and_restore'))
        self.assertEqual('as imported', PROBE)

    def test_conf_override(self):
        self.assertLeaks(
            'conf_override', "CONF: [%s] probe override is 'left over' "
            "(was (unset))" % GROUP)
        self.assertEqual('as shipped', cfg.CONF[GROUP].probe)

    def test_conf_default(self):
        self.assertLeaks(
            'conf_default', "CONF: [%s] probe default is 'new default' "
            "(was (unset))" % GROUP)
        self.assertEqual('as shipped', cfg.CONF[GROUP].probe)

    def test_conf_registered_option(self):
        self.addCleanup(cfg.CONF.unregister_opt, cfg.StrOpt('late'),
                        group=GROUP)
        self.assertLeaks('conf_register',
                         'CONF: option [%s] late registered' % GROUP)

    def test_module_global(self):
        self.assertLeaks(
            'module_global', "monkeypatch: tests.unit.test_leaks.PROBE is "
            "'left over' (was 'as imported')")
        self.assertEqual('as imported', PROBE)

    def test_stdlib_function(self):
        real = socket.getfqdn
        self.assertLeaks('stdlib_function',
                         'monkeypatch: socket.getfqdn is <')
        self.assertIs(real, socket.getfqdn)

    def test_class_attribute(self):
        self.assertLeaks('class_attribute',
                         "monkeypatch: harness.core.errors.HarnessError.probe "
                         "added ('left over')")
        self.assertNotIn('probe', vars(errors.HarnessError))

    def test_environment(self):
        self.assertLeaks('environment', "environment: HARNESS_LEAKS_PROBE "
                         "is 'left over' (was (unset))")
        self.assertNotIn('HARNESS_LEAKS_PROBE', os.environ)

    def test_thread(self):
        self.addCleanup(_RELEASE.clear)
        try:
            message = self.assertLeaks('thread', "thread 'leaky-thread'")
        finally:
            _RELEASE.set()
            for thread in threading.enumerate():
                if thread.name == 'leaky-thread':
                    thread.join()
        self.assertIn('still running', message)

    def test_greenthread(self):
        self.assertLeaks('greenthread', 'greenthread GreenThread running '
                         '<eventlet.greenthread.sleep>\n')

    def test_greenthread_not_started(self):
        self.assertLeaks('greenthread_not_started',
                         'greenthread GreenThread spawned but not started '
                         '(<tests.unit.test_leaks._parked>)')

    def test_greenthread_spawned_without_a_yield(self):
        self.assertLeaks('greenthread_started_in_the_grace',
                         'greenthread GreenThread running '
                         '<tests.unit.test_leaks._parked>, in _parked() at '
                         'tests/unit/test_leaks.py:')

    def test_greenthread_that_ends_within_the_grace_is_no_leak(self):
        self.assertIsNone(self.run_leaky('greenthread_that_ends'))

    def test_eventlet_thread_pool_is_the_process_s(self):
        self.assertIsNone(self.run_leaky('tpool_first_use'))

    def test_temp_dir(self):
        self.assertLeaks('temp_dir', 'temp dir %s%sleaky-' % (
            tempfile.gettempdir(), os.sep))
        self.assertEqual([], [name for name in os.listdir(
            tempfile.gettempdir()) if name.startswith('leaky-')])

    def test_temp_file(self):
        self.assertLeaks('temp_file', 'temp file %s%sleaky-' % (
            tempfile.gettempdir(), os.sep))

    def test_sqlite_file_in_tempdir(self):
        self.assertLeaks('sqlite_in_tempdir', 'sqlite file %s' % (
            os.path.join(tempfile.gettempdir(), 'leaky.sqlite')))

    def test_sqlite_file_in_cwd(self):
        cwd = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(cwd)
        self.assertLeaks('sqlite_in_cwd', 'sqlite file %s' % (
            os.path.join(cwd, 'leaky.db')))

    def test_working_directory(self):
        here = os.getcwd()
        self.assertLeaks('chdir', 'working directory is %s (was %s)' % (
            tempfile.gettempdir(), here))
        self.assertEqual(here, os.getcwd())

    def test_eventlet_monkey_patching(self):
        # Patching for real cannot be undone; the check reads eventlet's
        # record of what it patched, so a pretend entry stands for it.
        self.addCleanup(eventlet.patcher.already_patched.pop,
                        'harness-leaks-probe', None)
        self.assertLeaks('eventlet_patch', 'eventlet monkey-patched the '
                         'process (harness-leaks-probe): import what')

    def test_one_message_names_each_thing(self):
        self.assertLeaks(
            'two_things', 'CONF: [%s] probe override' % GROUP,
            'monkeypatch: tests.unit.test_leaks.PROBE')

    def test_allowlisted_leak_does_not_fail(self):
        allowed = dict(leaks.ALLOWED)
        allowed[('monkeypatch', 'tests.unit.test_leaks.PROBE')] = 'a test'
        self.useFixture(fixtures.MonkeyPatch(
            'harness.testing.leaks.ALLOWED', allowed))
        self.assertIsNone(self.run_leaky('module_global'))
        self.assertEqual('as imported', PROBE)

    def test_temp_dir_is_private_to_the_process(self):
        self.assertIn('harness-%d-' % os.getpid(), tempfile.gettempdir())
        self.assertEqual(tempfile.gettempdir(), os.environ['TMPDIR'])

    def test_cost_is_counted(self):
        checks, seconds = leaks.cost()
        self.run_leaky('nothing')
        self.assertEqual(checks + 1, leaks.cost()[0])
        self.assertGreater(leaks.cost()[1], seconds)

    def _forget_kept(self):
        global PROBE
        PROBE = 'as imported'
        cfg.CONF.clear_override('probe', group=GROUP)
        os.environ.pop('HARNESS_LEAKS_PROBE', None)
        for name in os.listdir(tempfile.gettempdir()):
            if name.startswith('kept-'):
                os.remove(os.path.join(tempfile.gettempdir(), name))

    def test_what_a_kept_cloud_changes_is_the_pool_s(self):
        self.addCleanup(self._forget_kept)
        self.assertIsNone(self.run_leaky('pool_keeps'))
        # Not undone: the pool keeps it for the next test.
        self.assertEqual('kept', PROBE)
        self.assertEqual('kept', cfg.CONF[GROUP].probe)

    def test_leaks_on_either_side_of_a_pool_change_are_the_test_s(self):
        real = socket.getfqdn
        self.addCleanup(self._forget_kept)
        self.assertLeaks(
            'leaks_around_pool_change', 'monkeypatch: socket.getfqdn is <',
            "CONF: [%s] probe override is 'after the change' (was "
            "(unset))" % GROUP)
        self.assertIs(real, socket.getfqdn)
        self.assertEqual('kept', PROBE)

    def test_what_a_pool_gives_up_is_no_leak(self):
        global PROBE
        self.addCleanup(self._forget_kept)
        PROBE = 'kept'
        self.assertIsNone(self.run_leaky('pool_gives_up'))
        self.assertEqual('as imported', PROBE)
