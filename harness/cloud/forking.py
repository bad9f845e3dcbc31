"""A copy of the whole running cloud, as a child process: ``fork()``.

The explorer's replays of one scenario run the same steps up to the
step where their injections go in. Forked there, a child process is
that cloud exactly: every database, tracker, hypervisor guest, cache,
queued cast and the checks' own state, with nothing to enumerate and
put back. Nova runs on eventlet, whose green threads all live in the
one real thread and so survive ``fork`` (eventlet's patching of
``threading`` says as much); what does not, ``fork`` mends
in the child:

- eventlet's epoll hub: the epoll set is a kernel object that a fork
  shares between parent and child, so a child registering its sockets
  would change what the parent waits on. The child gets an epoll set of
  its own with the same listeners.
- oslo.db's guard against a connection shared with a forked process:
  at its next checkout it would drop the engine's one connection, and
  with it the in-memory database, for a new, empty one. The child's
  engines take their connection as their own.
- eventlet's pool of real threads (``tpool``, through which Nova's
  libvirt driver calls its connection): the threads stay in the parent.
  The child closes its old socket pair, shared with the parent, and
  starts a pool of its own at its first call. Neither passes through
  eventlet's hub: ending the old pool's green thread with ``kill``, or
  ``tpool.setup`` as it is (it yields to the hub once), would let the
  other green threads run at a moment where the run without the fork
  does not, and a child forked inside a step would then take another
  turn (a live migration went on running before a restart injected
  there, where the run from the start did not).
- threading's after-fork clean-up, which takes every thread but the
  forking one for dead: eventlet 0.40 on (Nova 32's) makes it a no-op
  for green threads, 0.39 (Nova 31's) does not, and green threads then
  fail as they end in the child. Made a no-op before the fork there too.

Take the copy between steps, where the explorer's replays part, or at a
race point inside a step: green threads still at work there are copied
as they are, but a call a real thread of the pool had in hand would
never answer in the child, so not while one is in flight
(``Activity.native_calls``).
"""

import gc
import os
import threading
import warnings

from harness.cloud import mode
from harness.core import errors

if mode.EVENTLET:
    import eventlet
    from eventlet import hubs
    from eventlet import patcher
    from eventlet import tpool
    import greenlet

    _select = patcher.original('select')
    # eventlet's own, before a child puts its quiet one in place.
    _SETUP = tpool.setup


def safe_here(cloud):
    """Whether a fork here gives the child a cloud that can go on.

    Under eventlet: anywhere but while a real thread of eventlet's pool
    has a call in hand (it would never answer in the child). Under
    native threading only the forking thread lives on in the child: only
    from the test's own thread while Nova has nothing in flight (between
    steps); a replay that would fork inside a step runs from the start.
    """
    if mode.EVENTLET:
        return not cloud.activity.native_calls
    return (threading.current_thread() is threading.main_thread()
            and cloud.activity.idle())


def fork(cloud):
    """``os.fork()``, with the child's ``cloud`` mended; 0 in the child."""
    if not safe_here(cloud):
        raise errors.HarnessError(
            'the cloud cannot be forked here: %s' % (
                'a call of eventlet\'s thread pool is in flight'
                if mode.EVENTLET else
                'under native threading only from the test\'s thread, '
                'with nothing in flight'))
    # The objects the child starts with are the parent's pages: a
    # collection walking them would copy every page (copy on write).
    # Frozen, the child's collections leave them alone; the parent takes
    # them back once the child is on its way.
    if mode.EVENTLET:
        _keep_green_threads()
    gc.freeze()
    pid = None
    try:
        with warnings.catch_warnings():
            # eventlet warns at every fork that it may not work: what it
            # means is mended below.
            warnings.simplefilter('ignore', DeprecationWarning)
            pid = os.fork()
    finally:
        if pid != 0:
            gc.unfreeze()
    if pid == 0:
        if mode.EVENTLET:
            _mend_eventlet()
        else:
            # Nova's idle workers and the RPC servers' listeners stayed in
            # the parent: the child starts its own.
            cloud.thread_chains.after_fork()
        for _key, engine in cloud.env.engines:
            # A StaticPool's one connection record, made at its first use.
            record = vars(engine.pool).get('connection')
            if record is not None and 'pid' in record.info:
                record.info['pid'] = os.getpid()
    return pid


def _keep_green_threads():
    after_fork = getattr(threading, '_after_fork', None)
    if after_fork is None or after_fork.__code__.co_name == 'noop':
        return

    def noop():
        pass
    after_fork.__code__ = noop.__code__


def _mend_eventlet():
    hub = hubs.get_hub()
    if isinstance(getattr(hub, 'poll', None), _select.epoll):
        shared = hub.poll
        hub.poll = _select.epoll()
        for fileno in (set(hub.listeners[hub.READ])
                       | set(hub.listeners[hub.WRITE])):
            hub.register(fileno, new=True)
        shared.close()
    if tpool._setup_already:
        # The trampoline reads what the parent's threads answer: ended
        # here, with the sockets it read from (the parent keeps its own
        # ends of them).
        _end_here(tpool._coro)
        for sock in (tpool._rsock, tpool._wsock):
            if sock is not None:
                sock.close()
        del tpool._threads[:]
        tpool._rsock = tpool._wsock = tpool._coro = None
        tpool._reqq = tpool._rspq = None
        tpool._setup_already = False
    # The child's pool starts at its first call, as in any process, but
    # without the yield (a child of a fake driver's cloud never pays for
    # its threads).
    tpool.setup = _setup_thread_pool


def _end_here(green):
    """End a parked green thread; come back here, not to the hub."""
    if green is None or green.dead:
        return
    if not green:
        # Never started: it never will.
        green.run = lambda *args, **kwargs: None
        return
    green.parent = greenlet.getcurrent()
    green.throw(greenlet.GreenletExit)


def _setup_thread_pool():
    """``tpool.setup()``, without its one yield to the hub."""
    if tpool._setup_already:
        return
    real_sleep = eventlet.sleep
    eventlet.sleep = lambda seconds=0, result=None: result
    try:
        _SETUP()
    finally:
        eventlet.sleep = real_sleep
