"""A forked replay's bound: its option, its refusals, its error (no Nova).

``harness explore --replay-timeout SECONDS`` (``Explorer(replay_timeout=
...)``) bounds how long the trunk waits for a replay it forked; bad
values are refused before anything runs. The functional proof that a
hung replay ends the exploration is ``tests/functional/
test_explorer_hung.py``.
"""

import io
import pickle
import subprocess
import sys

import fixtures

from harness.core import errors
from harness.runners import branching
from harness.runners import cli
from harness.runners import explorer
from harness.runners import options
from harness.runners import shards
from harness import testing


class TestSeconds(testing.TestCase):

    def test_a_finite_number_above_0_is_a_bound(self):
        for given, seconds in (('5', 5.0), ('0.5', 0.5), (30, 30.0),
                               (2.5, 2.5), ('1e3', 1000.0)):
            self.assertEqual(seconds, options.seconds(given), given)

    def test_anything_else_is_refused_in_words_for_the_user(self):
        for given in ('0', '-1', 0, -0.5, 'abc', '', 'nan', 'inf', '-inf',
                      None, True, [5]):
            error = self.assertRaises(ValueError, options.seconds, given)
            self.assertEqual('a number of seconds above 0, not %r'
                             % (given,), str(error))

    def test_a_replay_is_given_the_default_unless_told(self):
        self.assertEqual(900.0, options.REPLAY_TIMEOUT)
        self.assertEqual(options.REPLAY_TIMEOUT,
                         branching.replay_timeout(None))
        self.assertEqual(12.0, branching.replay_timeout('12'))


class TestOption(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.stderr = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', self.stderr))
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.explored = []

        def explore(explorer, scenario):
            self.explored.append(explorer)
            raise _Explored()
        # Nothing explores: the explorer as built is all these look at.
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.explorer.Explorer.explore', explore))

    def test_bad_values_are_refused_before_anything_runs(self):
        for value in ('0', '-3', 'soon', 'nan'):
            self.stderr.seek(0)
            self.stderr.truncate()
            error = self.assertRaises(
                SystemExit, cli.main,
                ['explore', '--replay-timeout', value, 'no-such.yaml'],
                out=io.StringIO())
            self.assertEqual(cli.EXIT_BAD_INPUT, error.code)
            # The usage, then one line naming the option and the value
            # (argparse's refusal, before any file is read).
            self.assertEqual(
                "harness: error: argument --replay-timeout: a number of "
                "seconds above 0, not %r" % value,
                self.stderr.getvalue().splitlines()[-1])
        self.assertEqual([], self.explored)

    def test_the_value_reaches_the_explorer(self):
        path = self._scenario()
        self.assertRaises(_Explored, cli.main, [
            'explore', '--replay-timeout', '2.5', '--out', self.tmp, path],
            out=io.StringIO())
        self.assertEqual([2.5], [e.replay_timeout for e in self.explored])

    def test_unless_given_the_explorer_has_the_default(self):
        self.assertRaises(_Explored, cli.main, [
            'explore', '--out', self.tmp, self._scenario()],
            out=io.StringIO())
        self.assertEqual([options.REPLAY_TIMEOUT],
                         [e.replay_timeout for e in self.explored])

    def test_a_merge_takes_it_as_its_own(self):
        # It changes no outcome (a hung replay ends the exploration), so
        # it is no shard's option: the merge's shrinking forks, and is
        # given it; a shard file need not carry it.
        merged = []
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.shards.merge',
            lambda paths, **given: merged.append(given) or _NoMerge()))
        cli.main(['explore', '--merge', '--replay-timeout', '7',
                  'shard-0-of-1.json'], out=io.StringIO())
        self.assertEqual([7.0], [given['replay_timeout']
                                 for given in merged])
        self.assertNotIn('replay_timeout', shards.OPTIONS)

    def test_python_callers_are_refused_alike(self):
        error = self.assertRaises(errors.ScenarioError, explorer.Explorer,
                                  replay_timeout=0)
        self.assertEqual('--replay-timeout: a number of seconds above 0, '
                         'not 0', str(error))
        self.assertEqual(60.0,
                         explorer.Explorer(replay_timeout=60).replay_timeout)

    def _scenario(self):
        path = '%s/one.yaml' % self.tmp
        with open(path, 'w') as scenario:
            scenario.write('name: one\nhosts: {h1: {driver: fake}}\n'
                           'steps:\n  - run_periodic: '
                           'update_available_resource\n')
        return path


class _Explored(Exception):
    pass


class _NoMerge(object):
    explored = []
    options = {'reintroduce': None}


class TestErrors(testing.TestCase):

    def test_a_hung_replay_is_named_with_its_bound_and_stacks(self):
        error = branching.ChildHung('the replay that puts in X', 30.0,
                                    '/out/hung-replay-12-a.txt', 12)
        self.assertIsInstance(error, branching.ChildFailed)
        self.assertEqual(
            "a replay forked from the explorer's run was still running "
            "after 30 s (--replay-timeout), and was killed: the replay "
            "that puts in X (pid 12); its stacks are in "
            "/out/hung-replay-12-a.txt", str(error))

    def test_its_nested_trunk_is_named_as_the_trunk_sees_it(self):
        error = branching.ChildHung('the replay that puts in X; Y', 2.5,
                                    'stacks.txt', 12)
        seen = pickle.loads(pickle.dumps(error)).via(
            'the run that puts in X (the trunk of its pairs)',
            branching.CHILD_FAILED)
        self.assertIsInstance(seen, branching.ChildHung)
        self.assertEqual((12, 2.5, 'stacks.txt', None),
                         (seen.pid, seen.seconds, seen.stacks, seen.status))
        self.assertEqual(
            "a replay forked from the explorer's run was still running "
            "after 2.5 s (--replay-timeout), and was killed: the replay "
            "that puts in X; Y (pid 12); it was forked by the run that "
            "puts in X (the trunk of its pairs), which then ended with "
            "status 70; its stacks are in stacks.txt", str(seen))

    def test_a_failed_replay_is_named_as_before(self):
        error = branching.ChildFailed('the replay that puts in X', 70)
        seen = pickle.loads(pickle.dumps(error)).via('the run N', -9)
        self.assertEqual(
            "a replay forked from the explorer's run ended with status "
            "70: the replay that puts in X; it was forked by the run N, "
            "which then ended with status -9 (killed by SIGKILL); their "
            "errors are above", str(seen))


class TestEndedWithin(testing.TestCase):
    """The trunk's bounded wait for one of its children to end."""

    def _child(self):
        # Ends when its standard input closes.
        child = subprocess.Popen(
            [sys.executable, '-c', 'import sys; sys.stdin.read()'],
            stdin=subprocess.PIPE)
        self.addCleanup(child.wait)
        self.addCleanup(child.stdin.close)
        return child

    def _check(self):
        running, ending = self._child(), self._child()
        pids = [running.pid, ending.pid]
        self.assertIsNone(branching._ended_within(pids, 0))
        self.assertIsNone(branching._ended_within(pids, 0.05))
        ending.stdin.close()
        self.assertEqual(ending.pid, branching._ended_within(pids, 600))
        # Not reaped: its status is still to be had.
        self.assertEqual(0, ending.wait())

    def test_with_pidfds(self):
        if not hasattr(branching._os, 'pidfd_open'):
            self.skipTest('no os.pidfd_open here (Linux 5.3, Python 3.9)')
        self._check()

    def test_without_pidfds(self):
        real = branching._os

        class NoPidfd(object):
            def __getattr__(self, name):
                if name == 'pidfd_open':
                    raise AttributeError(name)
                return getattr(real, name)
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.branching._os', NoPidfd()))
        self._check()
