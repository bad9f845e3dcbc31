"""``harness.core.frames``: every thread's frame, the collector off meanwhile.

The deadlock it avoids (CPython gh-106883) needs a collection and a
thread's exit to meet inside one call; these tests prove what the
workaround promises: the frames, and the collector as it was.
"""

import gc
import sys
import threading

from harness.core import frames
from harness import testing


class TestCurrentFrames(testing.TestCase):

    def test_every_thread_s_frame(self):
        real = _os_threading()
        done = real.Event()
        other = real.Thread(target=done.wait, name='waits')
        other.start()
        self.addCleanup(other.join)
        self.addCleanup(done.set)
        got = frames.current_frames()
        here = real.get_ident()
        self.assertIn(here, got)
        self.assertIn(other.ident, got)
        # the calling thread is seen inside the call
        self.assertIs(sys._getframe(), got[here].f_back)

    def test_the_collector_is_off_during_the_call(self):
        seen = []
        real = sys._current_frames

        def spy():
            seen.append(gc.isenabled())
            return real()

        self.addCleanup(setattr, sys, '_current_frames', real)
        sys._current_frames = spy
        self.assertTrue(gc.isenabled())
        frames.current_frames()
        self.assertEqual([False], seen)
        self.assertTrue(gc.isenabled())

    def test_a_collector_turned_off_stays_off(self):
        gc.disable()
        self.addCleanup(gc.enable)
        frames.current_frames()
        self.assertFalse(gc.isenabled())


def _os_threading():
    """``threading`` with OS threads, even where eventlet patched it.

    The unit tests' process may run under eventlet (``tox -e py3``),
    whose green threads ``sys._current_frames()`` does not list.
    """
    patcher = sys.modules.get('eventlet.patcher')
    if patcher is not None and patcher.is_monkey_patched('thread'):
        return patcher.original('threading')
    return threading
