"""Runs that part from one run: a shared prefix of steps, run once.

Each of the explorer's replays of a scenario is the scenario with its
injections put in as steps; up to the first of them it is the scenario
as recorded. ``Branches``, the course of one run of the scenario itself
(the trunk, ``runner.run(..., course=branches)``: ``hooks.Course``),
forks a child process before a step for every replay whose steps part
from the trunk's there (``harness.cloud.forking``). The child is the
cloud as it stood, with the checks' and the timeline's state: exactly
what a replay from the start would have there, without running the
shared steps again. It takes its own steps from that point on, runs
them to the end, writes its result to a file and ends; the trunk reads
the result as the child ends.

A replay whose own steps only arm injections (``inject`` steps) and
then go on as the trunk's does not even need the part of the trunk's
step before its first injection fires: ``at_points`` children are
forked inside that step, at the first race point passed that one of
their injections matches (``RacePoints.on_passage``). There, before the
point's injections are looked for, the child arms its own (runs its
inject steps) and the injection fires at that very passage, as it would
have in the replay from the start: up to that passage the trunk's step
did exactly what the replay's did, since nothing the child arms matched
before it. Once the step's operation is over, the run takes up the
child's scenario (``Course.after_operation``: its inject steps'
timeline entries, read before the step as the replay reads them, and
its step numbers). A child that cannot be forked at its passage
(``forking.safe_here``: under eventlet, a call of eventlet's thread
pool in flight there, which a child would never see answered; under
native threading, any passage inside a step, where the child would have
only the forking thread; or its passage never came) is left in
``unforked``, for the caller to run another way (from the start).

Up to ``concurrency`` children run at once (the explorer gives one per
core): the trunk forks the next as soon as one ends, goes on to its
next step once the last child of this one is forked, and waits for the
rest at its end (``finish``). Running side by side, children share no
state: the cloud's databases are in memory, and its instances'
directory stays empty (Nova's fixtures fake the hypervisor's files).
Inside a step the trunk's waits (for a free core, or, forking one at a
time, for each child's whole run) count wall time against the work it
has in flight, and each child inherits that work's timeouts (an RPC
call Nova's code waits on times out ``rpc_response_timeout`` after it
was sent, by the wall clock: a child forked later would see it time
out at once): once it has waited ``wait_limit`` seconds in one step (a
quarter of the cloud's timeout unless given), the step's further
children that would have to wait are left ``postponed``, for another
trunk run to fork where they fire. A nested trunk forked inside the
step carries on its trunk's count, and hands up its postponed.

Nested: a child may itself be a trunk (``nest``, called by its
``start``): the replay of a depth-2 pair's first injection alone runs
as its pairs' trunk, forking each where its own steps part from it
(before a step, or inside one at a passage, as above), so the part of
the run from the first injection to the second runs once for all of
them. It forks them one at a time (waiting while one runs: the
trunk's ``concurrency`` stays the cores in use), and hands their
results up with its own (``Nested``); the trunk takes them as its own
children's (``results``, ``done``). A nested trunk forked inside a
step is handed the trunk's ``at_points`` children that name it (see
``at_points``) and are found at its passage, unless their second
injections fire there too: it watches the rest of the step and forks
each where those fire; that child arms them, and takes what its nested
trunk armed as its own steps after them. The children a nested trunk
could not fork, or whose step it never reached, are the trunk's
``unforked``.

A child that fails, at any depth, ends the whole exploration: its
nested trunk ends its own children and fails too, naming it
(``ChildFailed``), and the trunk raises that as soon as it sees the
child end, whichever of its children ended first (a sibling still
running, or hung, does not keep it waiting), and ends every process
it forked, their children with them: each child of the trunk leads a
process group of its own, which its nested children join.

A child that neither ends nor dies (a deadlock, a wait without a bound)
ends the exploration too, once it has run ``timeout`` seconds
(``REPLAY_TIMEOUT`` unless given: ``harness explore --replay-timeout``).
Every wait of the harness on Nova is bounded (the cloud's timeout), and
a replay that reaches one of those bounds fails and ends; a replay far
past the sum of all it could use is hung. The trunk then signals it
(``STACKS_SIGNAL``): each child writes every thread's stack
(``faulthandler``, at once, wherever its threads are) and, under
eventlet, every green thread's (once Python can run its handler) to a
file, and ends; the trunk kills what is left of it, keeps its stacks in
``dump_dir`` and raises ``ChildHung``, naming it, its bound and that
file. A nested trunk gives each child it forks the same bound, and its
own trunk gives it as long as that child has and time to take its
stacks (``NESTED_GRACE``) whenever it waits for one: a hung pair ends
its nested trunk with ``ChildHung``, and the trunk raises it, naming
the nested trunk too. A nested trunk's own run is given ``timeout``
from its fork and again after each child of its ends.
"""

import collections
import faulthandler
import functools
import gc
import math
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback

from harness.cloud import mode
from harness.core import errors
from harness.core import frames
from harness.core import hooks
from harness.runners import options

# Not eventlet's: its os.waitpid polls in a loop of green sleeps, letting
# the trunk's green threads run while it waits; its select waits in the
# hub. The trunk waits for its children between steps, with nothing of
# its own to run meanwhile.
_os = mode.original('os')
_select = mode.original('select')

#: A child's exit status when its run raised (the traceback is on its
#: standard error).
CHILD_FAILED = 70
#: A child's exit status once it has written its stacks on the trunk's
#: signal (``STACKS_SIGNAL``).
CHILD_HUNG = 71
#: Seconds a forked replay may run unless told otherwise (why so many:
#: ``options.REPLAY_TIMEOUT``).
REPLAY_TIMEOUT = options.REPLAY_TIMEOUT
#: The signal on which a forked child writes its stacks and ends.
STACKS_SIGNAL = signal.SIGUSR1
#: Seconds a hung child is given to write its stacks and end before it
#: is killed (its Python handler cannot run while C code holds its main
#: thread: faulthandler's part is written by then anyway).
DUMP_GRACE = 30.0
#: What a nested trunk waiting for a child of its own is given beyond
#: that child's bound: time to take the child's stacks, kill it and fail.
NESTED_GRACE = 2 * DUMP_GRACE


def replay_timeout(value):
    """``value`` (seconds, a number or its text) as a replay's bound.

    None gives ``REPLAY_TIMEOUT``. Raises ``ValueError`` worded for the
    user for anything but a finite number above 0 (``options.seconds``).
    """
    if value is None:
        return REPLAY_TIMEOUT
    return options.seconds(value)


class ChildFailed(errors.HarnessError):
    """A forked replay ended without its result.

    ``replay``: what it replays (``Branches``' ``describe``); ``status``:
    its exit status (negative: the signal that ended it); ``forked_by``:
    the nested trunks it was forked by, innermost first, each ``(what it
    replays, its exit status)``: they failed with it.
    """

    def __init__(self, replay, status, forked_by=()):
        self.replay = replay
        self.status = status
        self.forked_by = tuple(forked_by)
        text = ('a replay forked from the explorer\'s run ended with %s: %s'
                % (_status(status), replay)) + _forked_by(self.forked_by)
        super().__init__(text + '; %s above' % (
            'their errors are' if self.forked_by else 'its error is'))

    def __reduce__(self):
        # Pickled into a failed nested trunk's note (``child_failed``).
        return (ChildFailed, (self.replay, self.status, self.forked_by))

    def via(self, trunk, status):
        """This error, seen by the trunk of the nested trunk ``trunk``.

        ``status``: that nested trunk's exit status.
        """
        return ChildFailed(self.replay, self.status,
                           self.forked_by + ((trunk, status),))


def _forked_by(forked_by):
    return ''.join('; it was forked by %s, which then ended with %s'
                   % (trunk, _status(status)) for trunk, status in forked_by)


class ChildHung(ChildFailed):
    """A forked replay still running past its bound: killed.

    ``replay``: what it replays; ``seconds``: its bound
    (``Branches``' ``timeout``); ``stacks``: the file its stacks were
    kept in; ``pid``: its process; ``forked_by``: as ``ChildFailed``'s.
    ``status`` is None: it did not end by itself.
    """

    def __init__(self, replay, seconds, stacks, pid, forked_by=()):
        self.replay = replay
        self.seconds = seconds
        self.stacks = stacks
        self.pid = pid
        self.status = None
        self.forked_by = tuple(forked_by)
        errors.HarnessError.__init__(self, (
            'a replay forked from the explorer\'s run was still running '
            'after %s s (--replay-timeout), and was killed: %s (pid %d)%s; '
            'its stacks are in %s' % (
                '%g' % seconds, replay, pid, _forked_by(self.forked_by),
                stacks)))

    def __reduce__(self):
        return (ChildHung, (self.replay, self.seconds, self.stacks,
                            self.pid, self.forked_by))

    def via(self, trunk, status):
        return ChildHung(self.replay, self.seconds, self.stacks, self.pid,
                         self.forked_by + ((trunk, status),))


def _status(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = 'signal %d' % -code
        return 'status %d (killed by %s)' % (code, name)
    return 'status %d' % code


class Nested(object):
    """What a child that was a trunk itself (``Branches.nest``) hands up.

    ``own``: its own result (``result_of``'s); ``results``: its
    children's, by key; ``unforked``: the keys of the children it did
    not fork (for the caller to run another way); ``postponed``: those
    it did not fork for want of time in their step (``Branches``).
    """

    def __init__(self, own, results, unforked, postponed=()):
        self.own = own
        self.results = results
        self.unforked = unforked
        self.postponed = list(postponed)


def shared_steps(trunk, document):
    """How many leading steps ``document`` shares with ``trunk``.

    None when the two differ in anything but their steps (hosts,
    flavors, config): then no step of the trunk's cloud is the
    document's.
    """
    if ({k: v for k, v in trunk.items() if k != 'steps'}
            != {k: v for k, v in document.items() if k != 'steps'}):
        return None
    shared = 0
    for ours, theirs in zip(trunk['steps'], document['steps']):
        if ours != theirs:
            break
        shared += 1
    return shared


class Branches(hooks.Course):
    """The children one trunk run forks, and their results.

    It is the trunk run's course (``hooks.Course``): before a step it
    forks the children that part there, inside one it forks those whose
    first injection fires at a passage (``RacePoints.on_passage``), and
    in a child it hands the run the child's scenario and ends the child
    with the run (``child_done``), never through the run's clean-ups:
    the cloud is the trunk's.

    :param parts: ``{steps done: [(key, start), ...]}``: before the
        trunk's step ``steps done + 1``, a child for each key;
        ``start(forked_at)`` runs in the child and returns the scenario
        it runs from there on (its first ``steps done`` steps are the
        trunk's).
    :param result_of: ``result_of(key, scenario, timeline)``, in the
        child at the end of its run: its result (picklable).
    :param done: ``done(key, result)`` in the trunk as each child ends.
    :param concurrency: children running at once, at most.
    :param at_points: ``{steps done: [(key, start, injections), ...]}``:
        children forked inside the trunk's step ``steps done + 1``, at the
        first passage one of ``injections`` matches (each ``(point, when,
        host, server)``, as ``race.matches`` takes them). The scenario
        ``start(forked_at)`` returns is the trunk's with steps that only
        arm those injections put in before that step. An entry may have
        a fourth item, ``(key of a nested trunk, second injections)``:
        the child is that trunk's to fork, where its ``second
        injections`` fire, if that trunk forks at the same passage (see
        the module docstring).
    :param wait_limit: seconds the trunk may wait for a free core inside
        one step (see the module docstring).
    :param stop: ``stop(key, done, cloud)``, in a child before each of
        its steps after the first (``done`` steps run): None to go on, or
        its result, to end the child with there (its future is known:
        state caching, ``harness.runners.explorer``).
    :param describe: ``describe(key)``: what the child ``key`` replays
        (its injections), as text, for the error that ends the run if it
        fails (``ChildFailed``) or hangs (``ChildHung``).
    :param timeout: seconds a child may run (``replay_timeout``; see the
        module docstring).
    :param dump_dir: where a hung child's stacks are kept (default: the
        system's temporary directory).
    """

    def __init__(self, parts, result_of, done=None, concurrency=1,
                 at_points=None, wait_limit=None, stop=None,
                 describe=None, timeout=None, dump_dir=None):
        self.parts = {at: list(keys) for at, keys in parts.items()}
        self.at_points = {at: list(keys)
                          for at, keys in (at_points or {}).items()}
        self.result_of = result_of
        self.done = done or (lambda key, result: None)
        self.results = {}
        # Keys of ``at_points`` children not forked at their passage:
        # that cannot be, and that had no free core in time.
        self.unforked = []
        self.postponed = []
        # Seconds the trunk spent forking and waiting for its children,
        # and of those inside its steps.
        self.waited = 0.0
        self.waited_in_steps = 0.0
        self.in_child = False
        # In a child forked inside a step: the passage (as text).
        self.forked_at = None
        # In a child of a nested trunk (``nest``): that trunk's key.
        self.nested_in = None
        self.concurrency = max(1, concurrency)
        self.wait_limit = wait_limit
        self.stop = stop
        self.describe = describe or (lambda key: 'replay %r' % (key,))
        self.timeout = replay_timeout(timeout)
        self.dump_dir = dump_dir or tempfile.gettempdir()
        # Children running: pid -> (key, result file), in fork order.
        self._running = collections.OrderedDict()
        # Until when each runs before it is hung (``time.monotonic``,
        # system-wide on Linux: a child extends its own, ``_give_self``).
        self._given = {}
        # In a child: the file its stacks go to on ``STACKS_SIGNAL``.
        self._stacks_fd = None
        self._key = None
        self._out = None
        self._forks = 0
        # The ``at_points`` children of the step the trunk runs, and the
        # seconds it waited for a free core in it.
        self._watching = []
        self._waited_in_step = 0.0
        self._forked_in_step = 0
        self._failure = None
        self._dir = tempfile.mkdtemp(prefix='harness-branches-')
        # The step the trunk runs, while children may fork inside it: its
        # cloud and the steps done before it. In a child forked inside
        # it: how many of its own steps arm its injections, and then the
        # scenario it takes up with what they armed.
        self._in_step = None
        self._arming = 0
        self._took_up = None
        # In a child that is a trunk itself (``nest``): the keys of the
        # children it was given to fork.
        self._nested = None

    def nest(self, parts, at_points=None):
        """In a child (from its ``start``): be the trunk of ``parts``.

        As the constructor's ``parts`` and ``at_points``, in the steps of
        the scenario the child runs. It forks them one at a time and
        ends with their results and its own (``Nested``); ``done`` is
        the trunk's, as it takes them in. It ends before the step after
        which it has none left to fork: the rest of its run is no one's
        (its own result is then ``result_of(key, None, None)``: the
        caller reads only its time from it).
        """
        self.parts = {at: list(keys) for at, keys in parts.items()}
        self.at_points = {at: list(keys)
                          for at, keys in (at_points or {}).items()}
        self._nested = [child[0] for children in (
            list(self.parts.values()) + list(self.at_points.values()))
            for child in children]
        self.concurrency = 1
        self.done = lambda key, result: None

    # -- the run's course (hooks.Course) -----------------------------------

    def before_step(self, done, cloud):
        """Fork the children that part here; in one, its scenario.

        In a child, end it here if ``stop`` gives its result (never in
        a nested trunk: its children's results are still to come).
        """
        if (self.in_child and self.stop is not None
                and self._nested is None):
            try:
                result = self.stop(self._key, done, cloud)
            except BaseException:
                self.child_failed()
            if result is not None:
                self._write_result(result)
        for key, start in self.parts.pop(done, []):
            scenario = self._fork(key, start, cloud)
            if scenario is not None:
                return scenario
        self._watching = self.at_points.pop(done, [])
        self._waited_in_step = 0.0
        self._forked_in_step = 0
        if self._watching:
            self._in_step = (cloud, done)
            cloud.race.on_passage = self._passing
        elif self._nested is not None and not (self.parts
                                               or self.at_points):
            # A nested trunk with all its children forked and ended.
            self.child_done(None, None)
        return None

    def after_operation(self, step, cloud):
        """In a child forked inside the step, its scenario from there on.

        In the trunk, raises what went wrong with a child meanwhile
        (``step_ended``).
        """
        if self._in_step is None:
            return None
        self._in_step = None
        cloud.race.on_passage = None
        if self._took_up is not None:
            took_up, self._took_up = self._took_up, None
            return took_up
        self.step_ended()
        return None

    def ended(self, scenario, timeline, error):
        """In a child, end it with its result (or its error)."""
        if self._in_step is not None:
            self._in_step[0].race.on_passage = None
            self._in_step = None
        if not self.in_child:
            return
        if error is None:
            self.child_done(scenario, timeline)
        self.child_failed()

    def _passing(self, passage):
        """At a passage of the step: fork the children that fire here.

        A child arms its injections then and there (runs its inject
        steps, ``runner.execute``), before the passage's injections are
        looked for: they fire at this very passage.
        """
        cloud, done = self._in_step
        scenario = self.at_passage(passage, cloud)
        if scenario is None:
            return
        cloud.race.on_passage = None
        try:
            # Here, not at the top: the runner imports Nova.
            from harness.runners import runner
            armed = [(step, runner.execute(cloud, step))
                     for step in scenario.steps[done:done + self._arming]]
            if self._took_up is not None:
                # Forked by a nested trunk inside the step: what the
                # trunk armed at its own passage is armed for this
                # child too, by the child's steps after its own.
                armed.extend(self._armed_before(scenario, done + len(armed)))
            self._took_up = (scenario, armed)
            if self._watching:
                # A nested trunk: its children fire later in the step.
                cloud.race.on_passage = self._passing
        except BaseException:
            # Inside Nova's code: nothing there may see it.
            self.child_failed()

    def _armed_before(self, scenario, at):
        """The nested trunk's armed steps, as ``scenario``'s from ``at``."""
        armed = []
        for number, (step, what) in enumerate(self._took_up[1]):
            ours = scenario.steps[at + number]
            if ours.raw != step.raw:
                raise errors.HarnessError(
                    'a replay forked inside step %d does not arm what its '
                    'nested trunk armed: %r, not %r'
                    % (at, ours.raw, step.raw))
            armed.append((ours, what))
        return armed

    def at_passage(self, passage, cloud):
        """Fork the children whose first injection fires at ``passage``.

        None in the trunk; in a child, the scenario it runs (whose steps
        after the trunk's done ones first arm its injections). Raises
        nothing: it runs inside Nova's code, whose error handling would
        take what it raised (a cast's handler logs it and goes on). A
        child that fails here ends (``child_failed``); the trunk raises
        what went wrong once the step is over (``step_ended``).
        """
        if self._failure is not None:
            return None
        try:
            return self._at_passage(passage, cloud)
        except BaseException as exc:
            if self.in_child:
                self.child_failed()
            self._failure = exc
            return None

    def _at_passage(self, passage, cloud):
        # Here, not at the top, as forking (below).
        from harness.cloud import race

        def fires(injections):
            return any(race.matches(passage, *injection)
                       for injection in injections)
        found = [child for child in self._watching if fires(child[2])]
        if not found:
            return None
        # Here or never: a later passage is not where they fire.
        self._watching = [child for child in self._watching
                          if child not in found]
        handed = self._handed(found, fires)
        taken = {one[0] for ones in handed.values() for one in ones}
        found = [child for child in found if child[0] not in taken]
        limit = self.wait_limit
        if limit is None:
            limit = cloud.timeout / 4.0
        from harness.cloud import forking
        for child in found:
            key, start, injections = child[:3]
            passed_on = [one[0] for one in handed.get(key, ())]
            if not forking.safe_here(cloud):
                self.unforked.extend([key] + passed_on)
                continue
            # Forking it waits: for a free core, or, one at a time (a
            # nested trunk, or one worker), for the child's whole run.
            waits = (self.concurrency == 1
                     or len(self._running) >= self.concurrency)
            if (waits and self._waited_in_step >= limit
                    and self._forked_in_step):
                # The first of the step always forks: another run of the
                # trunk takes the postponed on from there.
                self.postponed.extend([key] + passed_on)
                continue
            scenario = self._fork(key, start, cloud, in_step=True)
            if scenario is not None:
                self.forked_at = str(passage)
                self._arming = len(injections)
                # A nested trunk watches the rest of the step for the
                # children handed to it.
                self._watching = list(handed.get(key, ()))
                if self._nested is not None:
                    self._nested.extend(passed_on)
                return scenario
            self._forked_in_step += 1
        return None

    def _handed(self, found, fires):
        """Of the children ``found`` at a passage, those a trunk takes.

        ``{nested trunk's key: [(key, start, second injections), ...]}``:
        a child whose ``at_points`` entry names a nested trunk found at
        the same passage, and whose own second injections do not fire
        here: it is that trunk's, forked where they fire later in the
        step (its first injections are the trunk's, armed here).
        """
        here = {child[0] for child in found}
        handed = {}
        for child in found:
            if len(child) < 4:
                continue
            under, second = child[3]
            if under in here and not fires(second):
                handed.setdefault(under, []).append(
                    (child[0], child[1], second))
        return handed

    def step_ended(self):
        """In the trunk, after a step: children whose passage never came.

        Raises what went wrong with a child meanwhile.
        """
        self.unforked.extend(child[0] for child in self._watching)
        self._watching = []
        if self._failure is not None:
            raise self._failure

    def _fork(self, key, start, cloud, in_step=False):
        """Fork the child ``key``: None here, its scenario in the child."""
        # A nested trunk's children write beside its parent's: the pid
        # keeps their names apart.
        out = os.path.join(self._dir, 'result-%d-%d' % (os.getpid(),
                                                        self._forks))
        self._forks += 1
        # Here, not at the top: the explorer's plan is loaded by
        # Nova-free unit tests, and forking imports Nova.
        from harness.cloud import forking
        waiting = time.monotonic()
        while len(self._running) >= self.concurrency:
            self._collect(self._next_ended())
        forked_at = time.monotonic()
        self.waited += forked_at - waiting
        if in_step:
            self._waited_in_step += forked_at - waiting
            self.waited_in_steps += forked_at - waiting
        pid = forking.fork(cloud)
        if pid == 0:
            if not self.in_child:
                # A process group of its own, which its children (a
                # nested trunk's) join: the trunk ends them all at once.
                _own_group(0)
            self.nested_in = self._key if self._nested is not None else None
            self.in_child, self._key, self._out = True, key, out
            self._arm_stacks()
            self.parts, self.at_points, self._watching = {}, {}, []
            self._running = collections.OrderedDict()
            self._given = {}
            # Its own, if it nests (``nest``).
            self.results, self.unforked, self.postponed = {}, [], []
            self.waited = self.waited_in_steps = 0.0
            self.forked_at = self._nested = None
            _quiet_stdout()
            return start(forked_at)
        if not self.in_child:
            # Here too: ``close`` may kill its group before it runs.
            _own_group(pid)
        self._running[pid] = (key, out)
        self._given[pid] = time.monotonic() + self.timeout
        if self.concurrency == 1:
            # One at a time: the trunk would only compete with it.
            self._collect(self._next_ended())
        ended = time.monotonic()
        self.waited += ended - forked_at
        if in_step:
            self._waited_in_step += ended - forked_at
            self.waited_in_steps += ended - forked_at
        return None

    def finish(self):
        """In the trunk, at its end: wait for the children still running.

        As each ends: one that failed fails the run at once, whichever
        others still run (``close`` ends them).
        """
        waiting = time.monotonic()
        while self._running:
            self._collect(self._next_ended())
        self.waited += time.monotonic() - waiting

    def child_done(self, scenario, timeline):
        """End the child with its result written; never returns."""
        try:
            result = self.result_of(self._key, scenario, timeline)
            if self._nested is not None:
                self.finish()
                left = [key for key in self._nested
                        if key not in self.results]
                result = Nested(
                    result, dict(self.results),
                    [key for key in left if key not in self.postponed],
                    [key for key in left if key in self.postponed])
        except BaseException:
            self.child_failed()
        self._write_result(result)

    def _write_result(self, result):
        """End the child with ``result`` written; never returns."""
        try:
            with open(self._out, 'wb') as sink:
                pickle.dump(result, sink)
        except BaseException:
            self.child_failed()
        # Not sys.exit: the cloud's clean-ups are the trunk's, and the
        # trunk's unflushed output was copied into this process too.
        os._exit(0)

    def child_failed(self):
        """End the child after an error it cannot report as a result.

        Called while handling it. A nested trunk ends its own children
        first; one failed because its child did (``ChildFailed``) notes
        that child in its result file, for its trunk's error.
        """
        try:
            os.write(2, traceback.format_exc().encode('utf-8', 'replace'))
            self._end_children()
            error = sys.exc_info()[1]
            if isinstance(error, ChildFailed):
                with open(self._out, 'wb') as sink:
                    pickle.dump(error, sink)
        finally:
            os._exit(CHILD_FAILED)

    def _next_ended(self):
        """The pid of a running child that has ended (waiting for one).

        Raises ``ChildHung`` for one still running past its bound
        (``_hung``) first. In a nested trunk, its own trunk is told how
        long to give it meanwhile (``_give_self``).
        """
        while True:
            now = time.monotonic()
            given = {pid: self._deadline(pid) for pid in self._running}
            past = [pid for pid, until in given.items() if until <= now]
            if past:
                # Unless it ended just now.
                ended = _ended_within(list(self._running), 0)
                if ended is not None:
                    return ended
                raise self._hung(past[0])
            self._give_self(max(given.values()) + NESTED_GRACE)
            # Until the first bound: then each is read again (a nested
            # trunk may have extended its own).
            ended = _ended_within(list(self._running),
                                  min(given.values()) - now)
            if ended is not None:
                self._give_self(time.monotonic() + self.timeout)
                return ended

    def _deadline(self, pid):
        """Until when child ``pid`` may run: its own word if later."""
        try:
            with open(self._running[pid][1] + '.until') as source:
                extended = float(source.read())
        except (OSError, ValueError):
            extended = 0.0
        return max(self._given[pid], extended)

    def _give_self(self, until):
        """In a child that forks (a nested trunk): run until ``until``.

        Its trunk reads it as this child's bound (``_deadline``).
        """
        if not self.in_child:
            return
        path = self._out + '.until'
        with open(path + '.new', 'w') as sink:
            sink.write(repr(until))
        # Whole or not at all, for the trunk reading it.
        os.replace(path + '.new', path)

    def _hung(self, pid):
        """Child ``pid``, past its bound: its stacks taken, it killed.

        The error to raise (``ChildHung``).
        """
        key, out = self._running[pid]
        try:
            _os.kill(pid, STACKS_SIGNAL)
        except OSError:
            pass
        # It writes its stacks and ends (``_arm_stacks``), unless its main
        # thread never gets back to Python: faulthandler wrote its part.
        _ended_within([pid], DUMP_GRACE)
        self._kill(pid)
        _os.waitpid(pid, 0)
        del self._running[pid]
        del self._given[pid]
        stacks = self._keep_stacks(pid, key, out)
        for path in (out, out + '.until', out + '.stacks'):
            _unlink(path)
        return ChildHung(self.describe(key), self.timeout, stacks, pid)

    def _keep_stacks(self, pid, key, out):
        """Child ``pid``'s stacks, in a file of ``dump_dir``; its path."""
        return keep_stacks(
            out + '.stacks', self.dump_dir, pid, self.timeout,
            '%s (pid %d), forked by pid %d%s' % (
                self.describe(key), pid, os.getpid(),
                ' (%s)' % self.describe(self._key) if self.in_child
                else ''))

    def _arm_stacks(self):
        """In a new child: write its stacks on ``STACKS_SIGNAL``, and end.

        To its own file (``arm_stacks``), which the trunk reads.
        """
        # A nested trunk's child: its trunk's are no longer its own.
        faulthandler.unregister(STACKS_SIGNAL)
        if self._stacks_fd is not None:
            os.close(self._stacks_fd)
        self._stacks_fd = arm_stacks(self._out + '.stacks')

    def _collect(self, pid):
        # Still in the table while it is waited for: if the wait is
        # interrupted (the test's time limit), ``close`` ends it.
        key, out = self._running[pid]
        # Its status, before it is reaped: until then its process group
        # is no other's.
        code = _exit_code(_os.waitid(_os.P_PID, pid,
                                     _os.WEXITED | _os.WNOWAIT))
        failed = code != 0 or not os.path.exists(out)
        if failed:
            # What it left running: a nested trunk's children.
            self._end_group(pid)
        _os.waitpid(pid, 0)
        del self._running[pid]
        del self._given[pid]
        for path in (out + '.until', out + '.stacks'):
            _unlink(path)
        if failed:
            raise self._failed(key, code, out)
        with open(out, 'rb') as source:
            result = pickle.load(source)
        os.unlink(out)
        if isinstance(result, Nested):
            # A nested trunk's: its children's results are this one's.
            for nested_key, nested in result.results.items():
                self.results[nested_key] = nested
                self.done(nested_key, nested)
            self.unforked.extend(result.unforked)
            self.postponed.extend(result.postponed)
            result = result.own
        self.results[key] = result
        self.done(key, result)

    def _failed(self, key, code, out):
        """The error a child ``key`` that ended with ``code`` fails with."""
        below = None
        if code == CHILD_FAILED and os.path.exists(out):
            # A nested trunk failed because its child did: that one's.
            try:
                with open(out, 'rb') as source:
                    below = pickle.load(source)
            except Exception:
                below = None
            os.unlink(out)
        if isinstance(below, ChildFailed):
            return below.via(self.describe(key), code)
        return ChildFailed(self.describe(key), code)

    def _end_group(self, pid):
        """Kill what is left of the process group child ``pid`` led."""
        if self.in_child:
            # A nested trunk's children are in its own group.
            return
        try:
            _os.killpg(pid, signal.SIGKILL)
        except OSError:
            # None left.
            pass

    def _kill(self, pid):
        """Kill child ``pid`` (not reaped), and the group it leads if any."""
        try:
            if self.in_child:
                _os.kill(pid, signal.SIGKILL)
            else:
                _os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    def _end_children(self):
        """Kill and reap the children still running, theirs with them."""
        for pid in list(self._running):
            self._kill(pid)
            try:
                _os.waitpid(pid, 0)
            except OSError:
                pass
        self._running.clear()
        self._given.clear()

    def close(self):
        """End what is left: children still running (the trunk failed)."""
        self._end_children()
        # A failed child may have left its result file.
        shutil.rmtree(self._dir, ignore_errors=True)


def _exit_code(info):
    """``waitid``'s answer as ``os.waitstatus_to_exitcode``'s."""
    if info.si_code == _os.CLD_EXITED:
        return info.si_status
    # Killed by a signal (CLD_KILLED, CLD_DUMPED).
    return -info.si_status


def _ended_within(pids, seconds):
    """One of ``pids`` (children) that has ended, or None after ``seconds``.

    Not reaped.
    """
    seconds = max(0.0, seconds)
    if hasattr(_os, 'pidfd_open'):
        poll = _select.poll()
        handles = {}
        try:
            for pid in pids:
                handle = _os.pidfd_open(pid)
                handles[handle] = pid
                poll.register(handle, _select.POLLIN)
            ready = poll.poll(math.ceil(seconds * 1000))
            return handles[ready[0][0]] if ready else None
        finally:
            for handle in handles:
                _os.close(handle)
    # Without pidfds (Linux before 5.3): ask each, napping in between.
    until = time.monotonic() + seconds
    while True:
        for pid in pids:
            if _os.waitid(_os.P_PID, pid, _os.WEXITED | _os.WNOWAIT
                          | _os.WNOHANG) is not None:
                return pid
        left = until - time.monotonic()
        if left <= 0:
            return None
        _select.select([], [], [], min(left, 0.1))


def arm_stacks(path):
    """In this process: on ``STACKS_SIGNAL`` its stacks to ``path``, end.

    Every thread's at once (``faulthandler``, from the signal handler
    itself, wherever they are), then, once Python runs its handler in
    the main thread, every thread's and green thread's as Python formats
    them, and the process ends with ``CHILD_HUNG`` (``_stacks_then_end``).
    Returns the file's descriptor, kept open for the handlers. Forked
    children arm it (``Branches``), and the explorer's worker processes
    (``harness.runners.workers``).
    """
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        signal.signal(STACKS_SIGNAL, functools.partial(
            _stacks_then_end, handle))
    except ValueError:
        # Not in the main thread (a child forked from another one):
        # faulthandler's alone.
        pass
    # After it, to call it (``chain``): Python's handler runs later.
    faulthandler.register(STACKS_SIGNAL, file=handle, all_threads=True,
                          chain=True)
    return handle


def keep_stacks(written_to, dump_dir, pid, timeout, replay):
    """The stacks process ``pid`` wrote to ``written_to``, kept; the path.

    In a file of ``dump_dir`` of their own, headed by what the process
    replayed (``replay``) and its bound (``timeout``), for a ``ChildHung``
    (a forked child's, or a worker process's:
    ``harness.runners.workers``).
    """
    try:
        with open(written_to, errors='replace') as source:
            written = source.read()
    except OSError:
        written = ''
    os.makedirs(dump_dir, exist_ok=True)
    handle, path = tempfile.mkstemp(prefix='hung-replay-%d-' % pid,
                                    suffix='.txt', dir=dump_dir)
    with os.fdopen(handle, 'w') as sink:
        sink.write(
            '%s, was still running after %g s (--replay-timeout); its '
            'stacks then:\n\n%s' % (
                replay, timeout,
                written or '(none written: it could not write them)\n'))
    return path


def _stacks_then_end(handle, signum, frame):
    """A child's ``STACKS_SIGNAL`` handler: its stacks to ``handle``, end.

    After faulthandler's: every thread's stack as Python formats it
    (with its name), and every green thread's (under eventlet the
    threads are mostly one, and the green threads the stacks that tell).
    """
    try:
        os.write(handle, _python_stacks().encode('utf-8', 'replace'))
    finally:
        os._exit(CHILD_HUNG)


def _python_stacks():
    names = {thread.ident: thread.name
             for thread in threading.enumerate()}
    out = ['\n=== Every thread, as Python formats it (the main thread\'s '
           'ends in this handler) ===\n']
    for ident, current in sorted(frames.current_frames().items()):
        out.append('--- thread %d%s\n' % (
            ident, ' (%s)' % names[ident] if ident in names else ''))
        out.extend(traceback.format_stack(current))
    greenlet = sys.modules.get('greenlet')
    if greenlet is None:
        return ''.join(out)
    out.append('\n=== Every green thread not running ===\n')
    # A forked child keeps what it was forked with frozen (the parent's
    # pages: harness.cloud.forking), out of gc.get_objects()'s sight; it
    # ends right after this.
    gc.unfreeze()
    for found in gc.get_objects():
        if (isinstance(found, greenlet.greenlet)
                and found.gr_frame is not None):
            out.append('--- %r\n' % (found,))
            out.extend(traceback.format_stack(found.gr_frame))
    return ''.join(out)


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _own_group(pid):
    """Make ``pid`` (0: this process) lead a process group of its own."""
    try:
        _os.setpgid(pid, pid)
    except OSError:
        # The parent's call, after the child's own, or after it ended.
        pass


def _quiet_stdout():
    """Send a child's standard output nowhere.

    It is the trunk's (a test runner's result stream, the explorer's
    progress): a child writing there, or flushing the copy of the
    trunk's unwritten output it was born with, would garble it. Errors
    still go to standard error.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, 'w')
