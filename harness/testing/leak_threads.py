"""Threads and greenthreads for the leak check: which run, where each is.

Part of ``harness.testing.leaks``: eventlet's hub and thread pool (the
process's, never counted), greenthreads spawned but not started, a short
yield that lets what is ending end, and how a left thread is described
(its name and the first frame of interest on its stack).
"""

import os
import sys
import time

import greenlet

from harness.core import frames

#: What ``show`` says is not set (the leak check's own marker).
MISSING = object()


# -- greenlets ----------------------------------------------------------------

def _hub():
    hubs = sys.modules.get('eventlet.hubs')
    if hubs is None:
        return None
    return getattr(hubs._threadlocal, 'hub', None)


def hub_greenlet():
    hub = _hub()
    return None if hub is None else hub.greenlet


def tpool_idents():
    """eventlet's thread pool: started on first use, kept for the process.

    Like the hub, it is the process's, not a test's: the libvirt driver
    calls through it, and stopping it under a test hangs the next call.
    """
    tpool = sys.modules.get('eventlet.tpool')
    if tpool is None:
        return set()
    return {thread.ident for thread in list(tpool._threads)}


def tpool_greenlet():
    tpool = sys.modules.get('eventlet.tpool')
    return None if tpool is None else tpool._coro


def pending_greenlets():
    """Greenlets the hub's timers will switch to (spawned, not started)."""
    hub = _hub()
    if hub is None:
        return []
    result = []
    for _when, timer in list(hub.timers) + list(hub.next_timers):
        tpl = getattr(timer, 'tpl', None)
        if tpl is None or timer.called:
            continue
        target = getattr(tpl[0], '__self__', None)
        if isinstance(target, greenlet.greenlet) and not target.dead:
            result.append(target)
    return result


def pause(seconds):
    eventlet = sys.modules.get('eventlet')
    if eventlet is not None and _hub() is not None:
        eventlet.sleep(seconds)
    else:
        time.sleep(seconds)


# -- descriptions -------------------------------------------------------------

def show(value, limit=80):
    if value is MISSING:
        return '(unset)'
    name = getattr(value, '__qualname__', None)
    module = getattr(value, '__module__', None)
    if name and module and callable(value):
        text = '<%s.%s>' % (module, name)
    else:
        try:
            text = repr(value)
        except Exception:
            text = '<%s object>' % type(value).__name__
    if len(text) > limit:
        text = text[:limit - 3] + '...'
    return text


def _where(frame):
    code = frame.f_code
    return '%s() at %s:%d' % (code.co_name, _short(code.co_filename),
                              frame.f_lineno)


def _short(path):
    for marker in ('site-packages' + os.sep, os.getcwd() + os.sep):
        index = path.find(marker)
        if index >= 0:
            return path[index + len(marker):]
    return path


def _frames(frame):
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


def _interesting(frames):
    """Frames that are not eventlet's, greenlet's or threading's own."""
    skip = (os.sep + 'eventlet' + os.sep, os.sep + 'greenlet' + os.sep,
            os.sep + 'threading.py', os.sep + 'futurist' + os.sep,
            os.sep + 'queue.py')
    return [f for f in frames
            if not any(s in f.f_code.co_filename for s in skip)]


def _describe_frames(frames):
    useful = _interesting(frames)
    if not useful:
        return ''
    outer, inner = useful[-1], useful[0]
    if outer is inner:
        return ', in %s' % _where(inner)
    return ', started in %s, now in %s' % (_where(outer), _where(inner))


def describe_greenlet(g):
    name = type(g).__name__
    frame = g.gr_frame
    if frame is None:
        return '%s spawned but not started (%s)' % (
            name, show(_scheduled_function(g) or getattr(g, 'run', None)))
    frames = _frames(frame)
    # GreenThread.main(function, args, kwargs) runs what was spawned.
    function = frames[-1].f_locals.get('function')
    if function is None:
        function = getattr(g, 'run', None)
    what = (show(function) if function is not None
            else _where(frames[-1]))
    return '%s running %s%s' % (name, what, _describe_frames(frames))


def _scheduled_function(g):
    """What a not yet started greenthread will run, from the hub's timer."""
    hub = _hub()
    if hub is None:
        return None
    for _when, timer in list(hub.timers) + list(hub.next_timers):
        tpl = getattr(timer, 'tpl', None)
        if tpl is not None and getattr(tpl[0], '__self__', None) is g:
            args = tpl[1]
            return args[0] if args and callable(args[0]) else None
    return None


def describe_thread(thread):
    target = getattr(thread, '_target', None)
    text = '%r' % thread.name
    if target is not None:
        text += ' (target %s)' % show(target)
    frame = frames.current_frames().get(thread.ident)
    if frame is not None:
        text += _describe_frames(_frames(frame))
    return text + ' still running'


def describe_os_thread(ident, frames):
    frame = frames.get(ident)
    text = 'ident %d still running' % ident
    if frame is not None:
        text += _describe_frames(_frames(frame))
    return text
