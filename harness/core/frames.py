"""Every thread's current frame, without CPython 3.11's deadlock.

``sys._current_frames()`` holds the interpreter's list of threads while
it builds its dict; on CPython before 3.11.9 and 3.12.3 a garbage
collection started by that dict's allocation can deadlock against a
thread that is exiting (https://github.com/python/cpython/issues/106883,
fixed by turning the collector off around the call). Under native
threading Nova's pool workers exit all the time, and the leak check asked
for the frames at every kept cloud's change: a gate run hung there for
good. This does what the fix does, on every Python.
"""

import gc
import sys


def current_frames():
    """``sys._current_frames()``, with the collector off meanwhile."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        return sys._current_frames()
    finally:
        if was_on:
            gc.enable()


def nearest(frame, classes):
    """What the nearest method's ``self`` on the stack says, or None.

    Walks from ``frame`` outwards; ``classes`` is a sequence of ``(class,
    reader)``: the first frame whose ``self`` is an instance of a class
    gives ``reader(self)``. A reader that raises ``AttributeError`` (an
    object not wired up yet) passes the frame over.
    """
    while frame is not None:
        code = frame.f_code
        # Only methods have a self; skip the rest without building
        # their locals.
        if code.co_argcount and code.co_varnames[0] == 'self':
            obj = frame.f_locals.get('self')
            for cls, reader in classes:
                if isinstance(obj, cls):
                    try:
                        return reader(obj)
                    except AttributeError:
                        break
        frame = frame.f_back
    return None
