"""A replay in a worker process is bounded as a forked one is (no Nova).

``run_in_workers`` (``harness.runners.workers``) runs stand-in worker
processes here (``tests.unit.stand_in_worker``: ``workers.serve`` with
no cloud, each job a few words on what its replay does). A job that
waits on a FIFO nobody writes must end the run once it has run its
bound, with ``WorkerHung`` naming it, its bound and the file its stacks
(which show that wait) are in, every worker process killed; jobs that
end in time, however long their worker runs in all, change nothing.

Without the bound ``run_in_workers`` waits for the hung worker for good.
"""

import os
import re
import time

import fixtures

from harness.runners import branching
from harness.runners import workers
from harness import testing
from tests.unit import stand_in_worker

MODULE = stand_in_worker.__name__
#: The bound given: long enough for a stand-in worker to start and reach
#: its FIFO on a loaded machine, short for the gate.
BOUND = 3.0
#: Where the hung job waits, as Python formats a stack.
WAITS = 'in wait_forever\n    with open(fifo) as never_written:\n'


class TestHungJob(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.out = os.path.join(self.tmp, 'explored')

    def _fifo(self, name):
        path = os.path.join(self.tmp, name)
        os.mkfifo(path)
        # If the test fails with its workers still waiting: a writer
        # opened and closed ends their wait.
        self.addCleanup(stand_in_worker.release, path)
        return path

    def test_a_hung_job_ends_the_run_with_its_stacks(self):
        never = self._fifo('never')
        first, second = self._fifo('first'), self._fifo('second')
        hung_pid = os.path.join(self.tmp, 'hung-pid')
        other_pid = os.path.join(self.tmp, 'other-pid')
        # Two workers: the first gets jobs 0 and 2, the second 1 and 3.
        # Jobs 0 and 1 meet (both workers are up), then 1 and 2; 2 waits
        # for good, and so does 3, which starts once 1 has ended: after
        # 2 started, so 2's bound comes first.
        jobs = [
            {'name': 'meets', 'meet': first},
            {'name': 'meets twice', 'met': first, 'meet': second},
            {'name': 'hung', 'pid_to': hung_pid, 'met': second,
             'wait_on': never},
            {'name': 'hung later', 'pid_to': other_pid, 'wait_on': never},
        ]
        ended = []
        started = time.monotonic()
        error = self.assertRaises(
            workers.WorkerHung, workers.run_in_workers, MODULE, jobs, 2,
            done=lambda failed: ended.append(failed), timeout=BOUND,
            dump_dir=self.out, describe=lambda number: 'job %d (%s)' % (
                number, jobs[number]['name']))
        took = time.monotonic() - started
        # Not before its bound; after it, at the first look (it falls
        # due), and the worker ended on its signal: not given up on
        # after DUMP_GRACE.
        self.assertGreaterEqual(took, BOUND)
        self.assertLess(took, BOUND + branching.DUMP_GRACE)
        self.assertEqual([False, False], ended)
        # A hung replay, as a forked one is: callers catch either alike.
        self.assertIsInstance(error, branching.ChildHung)
        self.assertEqual(('job 2 (hung)', BOUND, None, ()),
                         (error.replay, error.seconds, error.status,
                          error.forked_by))
        self.assertEqual(_pid(hung_pid), error.pid)
        self.assertEqual([os.path.basename(error.stacks)],
                         os.listdir(self.out))
        self.assertEqual(
            'a replay in an explorer worker process was still running '
            'after 3 s (--replay-timeout), and was killed with the '
            'workers: job 2 (hung) (pid %d); its stacks are in %s'
            % (error.pid, error.stacks), str(error))
        with open(error.stacks) as dump:
            stacks = dump.read()
        self.assertTrue(stacks.startswith(
            'job 2 (hung) (pid %d), in an explorer worker process of pid '
            '%d, was still running after 3 s (--replay-timeout); its '
            'stacks then:\n\n' % (error.pid, os.getpid())), stacks[:500])
        # faulthandler's, from the signal handler itself, and Python's,
        # from its handler, which then ended the worker.
        self.assertRegex(stacks, r'File "%s", line \d+ in wait_forever'
                         % re.escape(stand_in_worker.__file__))
        self.assertIn(WAITS, stacks)
        # Both workers are gone: the hung one and the other, killed.
        for pid in (error.pid, _pid(other_pid)):
            self.assertRaises(ProcessLookupError, os.kill, pid, 0)

    def test_jobs_that_end_in_time_change_nothing(self):
        # Two workers; the first runs three jobs, longer in all than the
        # bound: each job has it, not the worker. Results in job order.
        jobs = [{'name': 'first', 'lasts': BOUND / 3},
                {'name': 'second', 'failed': True},
                {'name': 'third', 'lasts': BOUND / 3, 'failed': True},
                {'name': 'fourth'},
                {'name': 'fifth', 'lasts': BOUND / 3}]
        ended = []
        results = workers.run_in_workers(
            MODULE, jobs, 2, done=lambda failed: ended.append(failed),
            timeout=BOUND, dump_dir=self.out)
        self.assertEqual(
            [{'name': job['name'], 'failed': job.get('failed', False)}
             for job in jobs], results)
        self.assertEqual([False, False, False, True, True], sorted(ended))
        self.assertFalse(os.path.exists(self.out))


class TestError(testing.TestCase):

    def test_it_pickles_as_itself(self):
        import pickle
        error = pickle.loads(pickle.dumps(workers.WorkerHung(
            'the replay that puts in X', 2.5, '/out/hung-replay-9-a.txt',
            9)))
        self.assertIsInstance(error, workers.WorkerHung)
        self.assertEqual(
            ('the replay that puts in X', 2.5, '/out/hung-replay-9-a.txt',
             9, None, ()),
            (error.replay, error.seconds, error.stacks, error.pid,
             error.status, error.forked_by))


def _pid(path):
    with open(path) as note:
        return int(note.read())
