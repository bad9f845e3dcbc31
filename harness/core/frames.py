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
