"""A forked replay that neither ends nor dies ends the exploration.

A replay the explorer forks that hangs (a deadlock inside Nova or its
fixtures, a wait without a bound) must not hang the exploration: once
it has run ``--replay-timeout`` seconds the trunk takes its stacks,
kills it and what it forked, and fails with ``branching.ChildHung``
naming it (what it puts in, the nested trunk that forked it if any),
its bound, and the file its stacks are in, which shows where it hung.

Two ways to hang. A replay waits on an event nothing sets
(``hang_forever``): under native threading its thread blocks there;
under eventlet its green thread does, while the hub runs on, and its
stacks show it among the green threads. ``HUNG_AFTER`` is the bound
given: below the cloud's own bound on a wait (60 s), which under
eventlet would end the step the green thread holds up with an error of
its own first, and the only replay it times is the hung one (one at a
time). And a pair of a nested trunk blocks its whole process on a real
lock (``REAL_EVENT``: eventlet's hub never runs again, as in a deadlock
on a lock of the cell database fixture), side by side with another
nested trunk's pairs: ``NESTED_HUNG_AFTER`` leaves those, which take a
few seconds, room on a loaded machine.

Without the bound the trunk waits for the hung replay until the test's
time limit (``HARNESS_TEST_TIMEOUT``) fails it; the hung replay itself
ends by SIGALRM a grace period after that limit.
"""

import io
import os
import re
import signal
import threading

import fixtures
from nova.tests.functional import integrated_helpers

from harness.cloud import mode
from harness.core import scenario as scenario_mod
from harness.runners import branching
from harness.runners import cli
from harness.runners import explorer
# Nova (in the process's mode, harness.cloud.mode, imported above) is
# loaded with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing
from harness.testing import hang_guard
from tests.functional import test_explorer_branches as branched

SCENARIO = branched.SCENARIO
HUNG_AFTER = 30
NESTED_HUNG_AFTER = 60
#: An event whose wait blocks the process's real thread, in either mode.
REAL_EVENT = mode.original('threading').Event
#: The blocking frame, as Python formats a stack (file, line, source).
BLOCKING = 'in hang_forever\n    never_set.wait()\n'


def hang_forever(hung_note, never_set):
    """Note this process's pid in ``hung_note``; wait for good.

    ``never_set``: an event nothing sets.
    """
    # Until the test's time limit (and its grace) is past: a run without
    # the bound fails on that limit, and this process does not outlive it.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(hang_guard.limit() + hang_guard.GRACE
                 if hang_guard.limit() else 0)
    with open(hung_note, 'w') as note:
        note.write('%d\n' % os.getpid())
    never_set.wait()


class TestHungReplays(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.hung_note = os.path.join(self.tmp, 'hung')

    def _hang_in(self, which, event=threading.Event):
        """The first forked replay for which ``which()`` is true hangs.

        It waits on an ``event()`` nothing sets.

        Every forked replay notes its pid in ``self.tmp``/forked.
        """
        forked = os.path.join(self.tmp, 'forked')
        real_branched = explorer.phases_mod.Phases.branched

        def branched(phases, prefix, forked_at):
            with open(forked, 'a') as note:
                note.write('%d\n' % os.getpid())
            if which():
                try:
                    os.close(os.open(self.hung_note + '.taken',
                                     os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    pass
                else:
                    hang_forever(self.hung_note, event())
            return real_branched(phases, prefix, forked_at)

        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.phases.Phases.branched', branched))
        return forked

    def _check_stacks(self, error, seconds, in_its_thread):
        """``error``'s stacks show where the hung replay waits.

        ``in_its_thread``: whether its real thread waits there.
        """
        with open(self.hung_note) as note:
            self.assertEqual(int(note.read()), error.pid)
        self.assertEqual(seconds, error.seconds)
        self.assertIsNone(error.status)
        with open(error.stacks) as dump:
            stacks = dump.read()
        self.assertTrue(stacks.startswith(
            '%s (pid %d), forked by pid ' % (error.replay, error.pid)),
            stacks[:500])
        # Where it waits, as Python formats it: a green thread's wait
        # from its frame (the one real thread is in the hub).
        self.assertIn(BLOCKING, stacks)
        if in_its_thread:
            # And from faulthandler, written from the signal handler
            # itself: what a child whose main thread never gets back to
            # Python leaves too.
            self.assertRegex(stacks, r'File "%s", line \d+ in hang_forever'
                             % re.escape(__file__))

    def _none_running(self, forked):
        with open(forked) as note:
            pids = [int(line) for line in note.read().split()]

        def none_running():
            self.assertEqual(
                [], [pid for pid in pids if branched._running(pid)])
        integrated_helpers.InstanceHelperMixin._wait_for_assert(
            self, none_running)
        return pids

    def test_a_hung_replay_ends_the_exploration(self):
        # harness explore with --replay-timeout: the first replay forked
        # hangs; one at a time, so it is the only one running then.
        out = os.path.join(self.tmp, 'explored')
        forked = self._hang_in(lambda: True)
        error = self.assertRaises(
            branching.ChildHung, cli.main,
            ['explore', SCENARIO, '--workers', '1', '--out', out,
             '--replay-timeout', str(HUNG_AFTER)], out=io.StringIO())
        # By what it puts in: an inject step at the resize or the
        # confirm (each of the scenario's move steps has race points).
        self.assertRegex(error.replay,
                         r'^the replay that puts in inject: \{.*\}$')
        self.assertEqual((), error.forked_by)
        self.assertEqual(out, os.path.dirname(error.stacks))
        self.assertEqual(
            'a replay forked from the explorer\'s run was still running '
            'after %d s (--replay-timeout), and was killed: %s (pid %d); '
            'its stacks are in %s' % (HUNG_AFTER, error.replay, error.pid,
                                      error.stacks), str(error))
        self._check_stacks(error, HUNG_AFTER, mode.THREADING)
        self.assertIn(error.pid, self._none_running(forked))

    def test_a_hung_pair_of_a_nested_trunk_ends_the_exploration(self):
        # Two nested trunks (a single's run each, two pairs forked from
        # it), side by side on two cores. The first's first pair hangs:
        # the first trunk gives up on it, and fails naming it; the
        # exploration fails with that, naming both, and no process it
        # forked is left running (the other trunk's included).
        scenario = scenario_mod.load(SCENARIO)[0]
        explore = explorer.Explorer(workers=2, depth=2, nested=True,
                                    replay_timeout=NESTED_HUNG_AFTER,
                                    out_dir=self.tmp)
        with explore.kept():
            plan = explore.plan(scenario)
            firsts, chosen, jobs = branched.two_nests(self, explore,
                                                      scenario, plan)
            under = []
            real_nest = branching.Branches.nest

            def nest(branches, parts, at_points=None):
                # In a nested trunk: its key, for the children it forks.
                under.append(branches._key)
                return real_nest(branches, parts, at_points)

            self.useFixture(fixtures.MonkeyPatch(
                'harness.runners.branching.Branches.nest', nest))
            forked = self._hang_in(lambda: under == [('nested', 0)],
                                   REAL_EVENT)
            error = self.assertRaises(
                branching.ChildHung, explore._map, jobs)
        single = 'the run that puts in %s (the trunk of its pairs)' % (
            '; '.join(explorer._step_text(step)
                      for step in firsts[0].steps()))
        pairs = ['the replay that puts in %s' % '; '.join(
            explorer._step_text(step) for injection in pair
            for step in injection.steps()) for pair in chosen[:2]]
        self.assertIn(error.replay, pairs)
        # Its nested trunk failed with it.
        self.assertEqual(((single, branching.CHILD_FAILED),),
                         error.forked_by)
        self.assertIn('; it was forked by %s, which then ended with status '
                      '70; its stacks are in %s' % (single, error.stacks),
                      str(error))
        self.assertEqual(self.tmp, os.path.dirname(error.stacks))
        self._check_stacks(error, NESTED_HUNG_AFTER, True)
        pids = self._none_running(forked)
        # Both trunks and a pair of the first (the hung one).
        self.assertGreaterEqual(len(pids), 3)
        self.assertIn(error.pid, pids)
