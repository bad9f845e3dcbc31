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


class _Named(object):
    def __init__(self, name):
        self.name = name

    def call(self, inner):
        return inner()


class _Unwired(object):
    def call(self, inner):
        return inner()


class TestNearest(testing.TestCase):

    classes = ((_Named, lambda obj: obj.name),
               (_Unwired, lambda obj: obj.missing))

    def test_the_nearest_self_names_it(self):
        def inner():
            return frames.nearest(sys._getframe(), self.classes)
        outer = _Named('outer')
        self.assertEqual('inner', outer.call(lambda: _Named('inner').call(
            inner)))
        self.assertEqual('outer', outer.call(inner))

    def test_an_object_not_wired_up_is_passed_over(self):
        def inner():
            return frames.nearest(sys._getframe(), self.classes)
        self.assertEqual('outer', _Named('outer').call(
            lambda: _Unwired().call(inner)))

    def test_none_on_the_stack_is_none(self):
        self.assertIsNone(frames.nearest(sys._getframe(), self.classes))
