"""A forked cloud's child starts with threads of its own, and nobody waits.

Under native threading a child forked at rest has only the forking
thread; ``ThreadChains.after_fork`` starts the listeners anew and drops
the parent's executor workers. Those workers had been waiting for work
on their executor's queue: their waits stayed the queue's waiters in the
child. A put there wakes one waiter, a dead one, so the child's own
worker saw each task only when its wait timed out, a second per
hand-over (forked replays ran ten times slower than replays from the
start). The proof: in the child, no executor queue has a waiter left
from the parent, and the cloud goes on (a delete and a periodic). Under
eventlet the green threads are forked with the process
(``harness.cloud.forking``) and there is nothing to start anew.
"""

import os

from harness import Cloud
from harness.cloud import forking
from harness.cloud import mode
from harness import testing

# The child's exit statuses.
GOES_ON = 0
STALE_WAITERS = 3


class TestForkedChild(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(Cloud(test_id=self.id()))
        self.cloud.start_compute('h1')
        self.cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        # A build through the executors: their workers are idle, waiting
        # on their queues, when the cloud forks.
        self.cloud.servers.boot('vm1', 'small', host='h1')

    def test_the_child_waits_on_nothing_of_the_parents(self):
        if mode.EVENTLET:
            self.assertIsNone(self.cloud.thread_chains)
            return
        executors = list(self.cloud.thread_chains._executors)
        self.assertNotEqual([], executors)
        pid = forking.fork(self.cloud)
        if pid == 0:
            status = GOES_ON
            try:
                for executor in executors:
                    queue = executor._work_queue
                    if any(condition._waiters for condition in (
                            queue.not_empty, queue.not_full,
                            queue.all_tasks_done)):
                        status = STALE_WAITERS
                self.cloud.servers.delete('vm1')
                self.cloud.run_task('update_available_resource', 'h1')
            except BaseException:
                status = 1
            finally:
                # The child's clean-ups are its parent's.
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(GOES_ON, os.waitstatus_to_exitcode(status))
