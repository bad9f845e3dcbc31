"""A replay in a worker process that neither ends nor dies ends the run.

``Explorer(branch=False)`` (and ``--cloud-per-replay``, and a system
without fork) replays each interleaving from the start in worker
processes (``harness.runners.workers``). One whose replay hangs inside
Nova must not hang the exploration: once the replay has run
``--replay-timeout`` seconds its worker's stacks are taken into ``--out``,
every worker is killed, and the exploration fails with ``WorkerHung``
(a ``branching.ChildHung``) naming the replay by what it puts in, its
bound, and the file its stacks are in, which shows where it waits.

The hang: ``tests.functional.hanging_worker``, the explorer's worker
whose replay of a job marked ``hang_on`` has Nova's API resize wait to
open a FIFO nothing ever writes (the replay's main thread, in either
mode). ``HUNG_AFTER`` leaves the worker's first replay room to stand its
cloud up and boot on a loaded machine before it reaches the resize.

Without the bound the exploration waits for that worker until the
test's time limit (``HARNESS_TEST_TIMEOUT``) fails it.
"""

import os
import re
import time

import fixtures

from harness.core import scenario as scenario_mod
from harness.runners import branching
from harness.runners import explorer
# Nova (in the process's mode, harness.cloud.mode) is loaded with this
# module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness.runners import workers
from harness import testing
from tests.functional import hanging_worker
from tests.functional import test_explorer
from tests.unit import stand_in_worker

SCENARIO = test_explorer.SCENARIO
HUNG_AFTER = 20
#: Where the replay waits, as Python formats a stack.
WAITS = 'in wait_forever\n    with open(fifo) as never_written:\n'
#: The inject step the hung replay puts in (after the boot).
INJECTION = {'inject': {'before': 'finish_resize',
                        'run': 'update_available_resource', 'on': 'src'}}


class TestHungWorkerReplay(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        real = workers.run_in_workers

        def run_in_workers(module, *args, **kwargs):
            # The explorer's workers, but for the hung replay.
            self.assertEqual(explorer.__name__, module)
            return real(hanging_worker.__name__, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.workers.run_in_workers', run_in_workers))

    def test_a_hung_replay_in_a_worker_ends_the_exploration(self):
        never = os.path.join(self.tmp, 'never')
        os.mkfifo(never)
        # If the test fails with the worker still waiting: a writer
        # opened and closed ends its wait.
        self.addCleanup(stand_in_worker.release, never)
        out = os.path.join(self.tmp, 'explored')
        scenario = scenario_mod.load(SCENARIO)[0]
        self.assertEqual('resize', scenario.steps[1].kind)
        explore = explorer.Explorer(workers=2, branch=False, out_dir=out,
                                    replay_timeout=HUNG_AFTER)
        hung = explore._job(scenario, ())
        hung['document']['steps'].insert(1, INJECTION)
        hung['hang_on'] = never
        # Two workers, a job each: the first hangs, the second ends.
        started = time.monotonic()
        error = self.assertRaises(workers.WorkerHung, explore._map,
                                  [hung, explore._job(scenario, ())])
        took = time.monotonic() - started
        self.assertGreaterEqual(took, HUNG_AFTER)
        # The worker ended on its signal: not given up on after
        # DUMP_GRACE.
        self.assertLess(took, HUNG_AFTER + branching.DUMP_GRACE)
        self.assertIsInstance(error, branching.ChildHung)
        replay = 'the replay that puts in %s' % explorer._step_text(
            INJECTION)
        self.assertEqual((replay, HUNG_AFTER, None, ()),
                         (error.replay, error.seconds, error.status,
                          error.forked_by))
        self.assertEqual(out, os.path.dirname(error.stacks))
        self.assertEqual(
            'a replay in an explorer worker process was still running '
            'after %d s (--replay-timeout), and was killed with the '
            'workers: %s (pid %d); its stacks are in %s'
            % (HUNG_AFTER, replay, error.pid, error.stacks), str(error))
        with open(error.stacks) as dump:
            stacks = dump.read()
        self.assertTrue(stacks.startswith(
            '%s (pid %d), in an explorer worker process of pid %d, was '
            'still running after %d s (--replay-timeout); its stacks '
            'then:\n\n' % (replay, error.pid, os.getpid(), HUNG_AFTER)),
            stacks[:500])
        # faulthandler's, from the signal handler itself, and Python's
        # from its handler: waiting on the FIFO, inside the API's resize.
        self.assertRegex(stacks, r'File "%s", line \d+ in wait_forever'
                         % re.escape(hanging_worker.__file__))
        self.assertIn(WAITS, stacks)
        self.assertRegex(stacks, r'nova/api/openstack/compute/servers\.py", '
                         r'line \d+, in _resize\n')
        # Killed and reaped.
        self.assertRaises(ProcessLookupError, os.kill, error.pid, 0)
