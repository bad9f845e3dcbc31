"""Waits for the resource tracker's fair lock are seen, as plain ones are.

``Activity.wait_parked`` lets an operation go on once a request sent at a
race point waits for a lock held elsewhere. Nova's tracker takes
``compute_resources`` through ``synchronized(..., fair=True)``, a fasteners
ReaderWriterLock rather than a semaphore; no Nova service runs here: the
test takes the same kind of lock through Nova's own ``synchronized``.
"""

# Nova's eventlet patching first (threads below are greenthreads then).
from harness.cloud import nova_env  # noqa: F401,I100

import threading  # noqa: E402

from oslo_concurrency import lockutils  # noqa: E402
from oslo_context import context as oslo_context  # noqa: E402

# Nova's synchronized, as the resource tracker uses it.
from nova import utils  # noqa: E402

from harness.cloud import activity  # noqa: E402
from harness.core import errors  # noqa: E402
from harness import testing  # noqa: E402

LOCK = 'harness-test-fair-lock'
TIMEOUT = 10


class TestFairLockWaits(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.activity = self.useFixture(activity.Activity())

    def _taker(self, request_id, took):
        """A thread that serves ``request_id`` and takes the fair lock."""

        @utils.synchronized(LOCK, fair=True)
        def locked():
            took.append(request_id)

        def serve():
            oslo_context.RequestContext(request_id=request_id)
            locked()

        thread = threading.Thread(target=serve)
        self.addCleanup(thread.join, TIMEOUT)
        return thread

    def test_wait_for_a_held_fair_lock_parks(self):
        took = []
        task = activity.Task('terminate', 'req-waits')
        with lockutils.lock(LOCK, fair=True):
            thread = self._taker('req-waits', took)
            thread.start()
            # Returns once the taker waits for the lock held here.
            self.activity.wait_parked([task], TIMEOUT, lambda: 'state')
            self.assertEqual([], took)
        thread.join(TIMEOUT)
        self.assertEqual(['req-waits'], took)
        # Its wait ended with the lock its own.
        self.assertFalse(self.activity._parked(task))

    def test_free_fair_lock_is_no_wait(self):
        took = []
        thread = self._taker('req-free', took)
        thread.start()
        thread.join(TIMEOUT)
        self.assertEqual(['req-free'], took)
        # Never counted as waiting: a task that is not done is not parked.
        self.assertRaises(
            errors.OperationTimeout, self.activity.wait_parked,
            [activity.Task('terminate', 'req-free')], 0.01, lambda: 'state')

    def test_reentry_is_no_wait(self):
        # Nova's tracker re-enters its lock (a locked method calling
        # another): no wait, and no deadlock.
        with lockutils.lock(LOCK, fair=True):
            with lockutils.lock(LOCK, fair=True):
                self.assertEqual({}, self.activity._lock_waits)
