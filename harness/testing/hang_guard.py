"""``HangGuard``: a test that hangs fails with every thread's stack.

Under native threading a wait that nothing will end (a thread parked for
a turn that never comes, a lock never released) hangs the test, and a
gate job then runs until its own time limit with nothing to say why.
With ``TIMEOUT_ENV`` set to a number of seconds, a test still running
after that long

- fails, in the test's main thread, with the stack of every thread of
  the process attached as the ``threads`` detail (``SIGALRM``; a wait on
  a lock or a condition is interrupted by it);
- if the main thread cannot take the signal (stuck inside C code), the
  process writes every thread's stack to stderr and exits ``GRACE``
  seconds later (``faulthandler``): the worker dies, the run goes red
  with the stacks in its log, and the job does not wait out its limit.

And once the process's tests are done, the same two-step limit covers
its exit: a thread nobody stops that the interpreter waits for at exit
dumps every stack and ends the process, instead of hanging the job.

Off when ``TIMEOUT_ENV`` is unset or 0 (a developer debugging a test
interactively); the functional tox envs set it.
"""

import faulthandler
import os
import signal
import sys
import threading
import traceback

import fixtures
import testtools
from testtools import content

from harness.core import errors
from harness.core import frames

#: Seconds a test may run before it fails as hung (unset or 0: no limit).
TIMEOUT_ENV = 'HARNESS_TEST_TIMEOUT'
#: Seconds after the limit before a process that did not fail the test
#: dumps every stack and exits.
GRACE = 60

_EXIT_GUARD = []


class TestHung(Exception):
    """A test ran past ``TIMEOUT_ENV`` seconds."""


def limit():
    """The limit ``TIMEOUT_ENV`` sets, in seconds (0: none)."""
    raw = os.environ.get(TIMEOUT_ENV, '').strip()
    if not raw:
        return 0
    try:
        seconds = int(raw)
    except ValueError:
        seconds = -1
    if seconds < 0:
        raise errors.HarnessError(
            '%s=%r: say a whole number of seconds (0: no limit)'
            % (TIMEOUT_ENV, raw))
    return seconds


def stacks():
    """Every thread's stack, as text, the calling thread's included."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sorted(frames.current_frames().items()):
        out.append('--- thread %s (%s)\n' % (names.get(ident, '?'), ident))
        out.extend(traceback.format_stack(frame))
    return ''.join(out)


class HangGuard(fixtures.Fixture):
    """Fail the test (then end the process) if it runs ``seconds``."""

    def __init__(self, test, seconds, grace=GRACE):
        super().__init__()
        self._test = test
        self._seconds = seconds
        self._grace = grace

    def _setUp(self):
        if not self._seconds or threading.current_thread() is not \
                threading.main_thread():
            return
        guard_exit(self._seconds + self._grace)
        previous = signal.signal(signal.SIGALRM, self._hung)
        signal.alarm(self._seconds)
        faulthandler.dump_traceback_later(self._seconds + self._grace,
                                          exit=True)
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        self.addCleanup(signal.alarm, 0)
        self.addCleanup(faulthandler.cancel_dump_traceback_later)

    def _hung(self, signum, frame):
        text = stacks()
        self._test.addDetail('threads', content.text_content(text))
        raise TestHung('%s still running after %d s (%s); every thread\'s '
                       'stack is in its "threads" detail'
                       % (self._test.id(), self._seconds, TIMEOUT_ENV))


def guard_exit(seconds):
    """Bound the interpreter's wait for threads at exit (once).

    After ``seconds``, every stack is dumped and the process exits.
    """
    if _EXIT_GUARD:
        return
    _EXIT_GUARD.append(seconds)
    # threading's own exit hook runs before the interpreter joins the
    # threads nobody made daemons (atexit runs after: too late). It is
    # private, but it is how concurrent.futures stops its workers too.
    register = getattr(threading, '_register_atexit', None)
    if register is not None:
        register(_bound_exit, seconds)


def _bound_exit(seconds):
    # The dump ends the process with os._exit: what the tests wrote and
    # Python still buffers (a subunit stream's last result) goes out now.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    faulthandler.dump_traceback_later(seconds, exit=True)


def guarded(test):
    """Put ``HangGuard`` on ``test`` (a ``testtools.TestCase``)."""
    assert isinstance(test, testtools.TestCase)
    return test.useFixture(HangGuard(test, limit()))
