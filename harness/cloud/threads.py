"""Chains of work across Nova's native threads (threading mode only).

``harness.cloud.activity.Activity`` lets one chain of work run at a time:
the test's own, and one per executor task. Under eventlet a chain is a
greenthread's work, and a request ID follows it through RPC. Under
native threads the work of one chain crosses threads Nova does not
spawn through its executors, and the chain must cross with it:

- an RPC call's handler runs in a worker of the receiving service's RPC
  server while its caller waits for the reply: the handler is the caller's
  chain (noted when the fake transport delivers the message, taken up
  when the server's worker processes it), and it runs at the chain's
  next turn: a call is where other chains in line get theirs, as other
  greenthreads run while a caller waits for its reply under eventlet;
- work handed to a futurist executor by other code (oslo.service's
  looping calls, which Nova's libvirt driver waits on) runs in the
  submitter's chain, which waits for it;
- a chain that waits for a future of another chain (Nova's scatter-gather
  over cells, a build waiting for its network allocation, the update of
  several nodes), or sleeps, is parked while it waits, as it is when it
  waits for a lock: the others run meanwhile, one at a time.
"""

import concurrent.futures
import threading
import time
import weakref

import fixtures
import futurist
from futurist import waiters
from oslo_messaging._drivers import base as driver_base
from oslo_messaging._drivers import impl_fake
from oslo_messaging.rpc import server as rpc_server

from harness.cloud import activity as activity_mod


class ThreadChains(fixtures.Fixture):
    """Carry ``activity``'s chains across RPC, executors and futures."""

    def __init__(self, activity):
        super().__init__()
        self.activity = activity

    def _setUp(self):
        # What a forked child must start anew (after_fork): the executors
        # work was handed to, and the RPC servers' listeners.
        self._executors = weakref.WeakSet()
        self._listeners = weakref.WeakSet()
        self._carry_through_rpc()
        self._carry_through_executors()
        self._park_future_waits()
        self._park_sleeps()

    def after_fork(self):
        """In a child forked at rest: threads of its own for the parent's.

        The child has none of the parent's threads but its own
        (``harness.cloud.forking``).
        Idle workers held no lock and had no work (nothing was in flight);
        each executor starts new ones as work comes. Each listener polls
        again in a thread of its own.
        """
        for executor in list(self._executors):
            executor._workers = [worker for worker in executor._workers
                                 if worker.is_alive()]
            # The parent's idle workers waited for work on the queue: in
            # the child their waits are still its conditions' waiters,
            # first in line, with no thread to take them. A put wakes one
            # waiter (notify), a dead one, and the child's own worker
            # then saw its work only when its wait timed out (a second
            # per hand-over: forked replays ran ten times slower). The
            # child has no thread but this one yet: none of them is its.
            work_queue = executor._work_queue
            for condition in (work_queue.not_empty, work_queue.not_full,
                              work_queue.all_tasks_done):
                condition._waiters.clear()
        for listener in list(self._listeners):
            if listener._started and not listener._listen_thread.is_alive():
                listener._listen_thread = threading.Thread(
                    target=listener._runner, daemon=True)
                listener._listen_thread.start()

    def _carry_through_rpc(self):
        # Message (by identity) -> the chain and host of its sender, from
        # delivery until a server's worker takes it up.
        sent = {}
        guard = threading.Lock()
        real_deliver = impl_fake.FakeExchange.deliver_message
        real_process = rpc_server.RPCServer._process_incoming
        activity = self.activity

        def deliver_message(exchange, topic, ctxt, message, *args, **kw):
            chain = activity.chain()
            with guard:
                sent[id(message)] = (message, chain)
            if chain is not None:
                # The caller waits for the reply: in line, at the back,
                # for the handler to run; a chain in line before it (a
                # lock's taker, a spawned task) runs first, as a ready
                # greenthread does while a caller waits under eventlet.
                activity.park(chain)
            return real_deliver(exchange, topic, ctxt, message, *args, **kw)

        def process_incoming(server, incoming):
            message = incoming[0].message
            with guard:
                _message, chain = sent.pop(id(message), (None, None))
            if chain is not None:
                activity.await_turn(chain, 'RPC %s' % message.get('method'))
            with activity_mod.in_chain(chain):
                return real_process(server, incoming)

        real_send = impl_fake.FakeDriver._send

        def send(driver, *args, **kwargs):
            chain = activity.chain()
            try:
                return real_send(driver, *args, **kwargs)
            finally:
                if chain is not None:
                    activity.leave_line(chain)

        self.useFixture(fixtures.MockPatchObject(
            impl_fake.FakeDriver, '_send', send))
        real_start = driver_base.PollStyleListenerAdapter.start
        listeners = self._listeners

        def start(listener, *args, **kwargs):
            listeners.add(listener)
            return real_start(listener, *args, **kwargs)

        self.addCleanup(sent.clear)
        self.useFixture(fixtures.MockPatchObject(
            driver_base.PollStyleListenerAdapter, 'start', start))
        self.useFixture(fixtures.MockPatchObject(
            impl_fake.FakeExchange, 'deliver_message', deliver_message))
        self.useFixture(fixtures.MockPatchObject(
            rpc_server.RPCServer, '_process_incoming', process_incoming))

    def _carry_through_executors(self):
        real_submit = futurist.ThreadPoolExecutor.submit
        activity = self.activity

        executors = self._executors

        def submit(executor, fn, *args, **kwargs):
            executors.add(executor)
            chain = activity.chain()
            host = activity_mod.acting_host()

            def in_submitters_chain(*a, **k):
                with activity_mod.in_chain(chain), \
                        activity_mod.acting_as(host):
                    return fn(*a, **k)

            return real_submit(executor, in_submitters_chain, *args,
                               **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            futurist.ThreadPoolExecutor, 'submit', submit))

    def _park_future_waits(self):
        activity = self.activity

        def in_line_until(real, done):
            def wait(first, *args, **kwargs):
                if done is not one_done:
                    # Looked at more than once below: a generator would be
                    # spent.
                    first = list(first)
                chain = activity.chain()
                if chain is not None and not done(first):
                    # In line until the future is done (its task ran to its
                    # end); Nova's own wait then returns at once.
                    activity.await_turn(chain, 'a future',
                                        ready=lambda: done(first))
                return real(first, *args, **kwargs)
            return wait

        def one_done(future):
            return future.done()

        def all_done(futures):
            return all(future.done() for future in futures)

        def any_done(futures):
            return any(future.done() for future in futures)

        for owner, name, done in (
                (concurrent.futures.Future, 'result', one_done),
                (concurrent.futures.Future, 'exception', one_done),
                (concurrent.futures, 'wait', all_done),
                (waiters, 'wait_for_all', all_done),
                (waiters, 'wait_for_any', any_done)):
            self.useFixture(fixtures.MockPatchObject(
                owner, name, in_line_until(getattr(owner, name), done)))

    def _park_sleeps(self):
        """A chain that sleeps is parked, and goes on at its turn after.

        Nova's polling loops (the libvirt driver's live-migration monitor,
        the fake driver's live migration, retries) sleep between looks:
        under eventlet a green sleep lets the others run; here the others
        run while it sleeps, one at a time. ``time.sleep(0)`` (oslo.db's
        yield at every check-in) is no wait and changes nothing.
        """
        activity = self.activity
        real_sleep = time.sleep

        def sleep(seconds):
            chain = activity.chain()
            if chain is None or seconds <= 0:
                return real_sleep(seconds)
            slept = []
            activity.park(chain, lambda: bool(slept))
            try:
                real_sleep(seconds)
            finally:
                with activity._cond:
                    slept.append(True)
                    activity._cond.notify_all()
                activity.await_turn(chain, 'a sleep')

        self.useFixture(fixtures.MockPatchObject(time, 'sleep', sleep))
