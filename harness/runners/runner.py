"""Run a scenario on a cloud: each step, a snapshot, the checks.

``run(scenario)`` stands up a ``Cloud`` with the scenario's hosts and
flavors (or takes one from a ``reuse.CloudPool``), runs each step through
its kind's unit in the step registry (``harness.core.steps``), snapshots
after each step, checks the step's expectations and the given invariant
checks, and returns the timeline. Problems are ``Problem`` records on
each timeline entry; the first raises ``ScenarioFailed`` with the step,
the records, the difference as text and the timeline so far (unless
``keep_going``).

Observers (``harness.core.hooks``) are told when the run starts, when
each step starts and is done (with its timeline entry: snapshot,
problems, race points passed) and when the run ends.
"""

import contextlib
import copy

from harness.cloud import config as config_mod
from harness.cloud import interject
from harness.cloud import reuse
from harness.core import errors
from harness.core import expect as expect_mod
from harness.core import hooks
from harness.core import problems as problems_mod
from harness.core.problems import Problem
from harness.core import timeline as timeline_mod
from harness.runners import nova_logs

# What ``race.check`` raises for an injection that failed.
_INJECTION_ERRORS = (errors.InjectionFailed, interject.AnsweredOtherwise)


def run(scenario, test_id=None, progress=None, checks=(), fixtures=(),
        cloud_kwargs=None, keep_going=False, pool=None, observers=(),
        course=None):
    """Run ``scenario``; return its ``Timeline``.

    :param progress: called with a line per step, if given.
    :param checks: callables ``check(cloud, step, snapshot, timeline,
        scenario)`` that return a list of ``Problem`` records
        (invariants); run after every step, once its expectations held,
        but one that only arms what a later step sets off
        (``StepKind.arms``: an inject, a fault), which changes nothing
        they read.
        A check only reads: one that needs Nova to run code does it in
        ``cloud.trial()``.
    :param fixtures: fixtures to have in place while the cloud runs (for
        example a bug's reintroduction).
    :param keep_going: record each step's problems on its timeline entry
        and go on, instead of raising at the first (for side-by-side
        reports of a whole run).
    :param pool: a ``reuse.CloudPool``: run on its cloud if it has one of
        this scenario's shape (put back to its state before any step),
        and leave the cloud to it. ``fixtures`` must be in place before
        the computes start: the pool keeps those that hold no state
        between runs (a bug's reintroduction) with its cloud; any other
        fixture gets the run a cloud of its own.
    :param observers: objects told of the run's events (see
        ``harness.core.hooks``), besides the process-wide ones.
    :param course: a ``hooks.Course``, asked before each step and after
        each step's operation whether the run takes up another scenario
        there (the race explorer's forks do); by default it goes on.
    """
    # Nova's options, checked before anything starts.
    config_mod.validate(scenario)
    observers = tuple(observers)
    course = course or hooks.Course()
    with contextlib.ExitStack() as stack:
        cloud = _stand_up(stack, scenario, test_id, cloud_kwargs, fixtures,
                          pool, observers)
        steps = _Steps(scenario, cloud, observers, course)
        # Nova's records of each step, for its ``logs:`` expectations.
        logs = stack.enter_context(nova_logs.step_logs(scenario))
        try:
            hooks.notify('run_started', scenario, cloud, observers=observers)
            steps.timeline.add(0, 'start', cloud.snapshot())
            for step in steps:
                hooks.notify('step_started', step, observers=observers)
                if logs is not None:
                    logs.take()
                step, failure = steps.operate(step)
                entry, found = steps.record(step, failure, keep_going)
                if logs is not None:
                    entry.snapshot.logs = logs.records()
                failed = _check(step, entry, found, cloud, checks, steps,
                                keep_going)
                hooks.notify('step_done', step, entry, observers=observers)
                if failed is not None:
                    raise failed
                _say(progress, step, entry)
            steps.check_fired(keep_going)
            hooks.notify('run_done', steps.scenario, steps.timeline,
                         observers=observers)
        except BaseException as exc:
            course.ended(steps.scenario, steps.timeline, exc)
            raise
        course.ended(steps.scenario, steps.timeline, None)
    return steps.timeline


def _stand_up(stack, scenario, test_id, cloud_kwargs, fixtures, pool,
              observers):
    """The run's cloud, its clean-ups on ``stack``."""
    # The race points report to process-wide observers only (they know
    # no run): this run's observers hear them while it runs.
    for observer in observers:
        if hasattr(observer, 'point_passed'):
            stack.enter_context(hooks.observing(_PointsOf(observer)))
    if pool is not None and reuse.keepable(fixtures):
        cloud = stack.enter_context(
            pool.cloud(scenario, test_id, cloud_kwargs, fixtures))
    else:
        if pool is not None:
            # One cloud alive at a time: they share Nova's config.
            pool.discard()
        cloud = reuse.stand_up(stack, scenario, test_id, cloud_kwargs,
                               fixtures)
    # Faults armed by this run's steps end with it (a kept cloud's next
    # run starts with none).
    stack.callback(cloud.faults.clear)
    return cloud


class _Steps(object):
    """A run's steps in order, as its ``Course`` has them, and its record.

    Iterating gives the next step to run; ``timeline`` is what the run
    recorded so far, ``scenario`` the one it runs now, and
    ``injections`` what its steps armed (each ``(step, armed)``).
    """

    def __init__(self, scenario, cloud, observers, course):
        self.scenario = scenario
        self.cloud = cloud
        self.observers = observers
        self.course = course
        self.timeline = timeline_mod.Timeline()
        self.injections = []
        self.done = 0
        self._passed_from = 0

    def __iter__(self):
        while self.done < len(self.scenario.steps):
            self.scenario = (self.course.before_step(self.done, self.cloud)
                             or self.scenario)
            if self.done == len(self.scenario.steps):
                # Another scenario whose steps are those run so far.
                return
            self.done += 1
            yield self.scenario.steps[self.done - 1]

    def operate(self, step):
        """Run the step's operation: the step the run is at, its error.

        The error is a ``HarnessError`` the step failed with, or None.
        The step is another if the course took up another scenario
        inside it (``Course.after_operation``).
        """
        self._passed_from = len(self.cloud.race.recording)
        version = self.cloud.activity.version
        failure = armed = None
        try:
            armed = execute(self.cloud, step)
            if step.unit.arms and self.cloud.activity.version != version:
                # The checks it skips would no longer read what they read
                # after the step before.
                raise errors.HarnessError(
                    'step %d (%s) only arms, but Nova wrote to its records '
                    'or Placement while it ran' % (step.index, step.label))
            # An injection that failed after the operation's own last
            # look (a point passed while its casts settle) fails this
            # step, not whatever asks next: a check's periodic in its
            # trial would raise it from inside the check.
            self.cloud.race.check()
        except errors.ScenarioFailed:
            raise
        except errors.HarnessError as exc:
            failure = exc
        turn = self.course.after_operation(step, self.cloud)
        if turn is not None:
            step = self._take_up(*turn)
        if armed is not None:
            self.injections.append((step, armed))
        return step, failure

    def _take_up(self, scenario, armed):
        """Go on as ``scenario``, whose ``armed`` steps ran inside this one.

        Their entries are what a run of ``scenario`` from the start reads
        after each: the cloud as the step before left it (they only
        arm), under their own labels, with no point passed.
        """
        before = self.timeline.entries[-1].snapshot
        for step, what in armed:
            hooks.notify('step_started', step, observers=self.observers)
            snap = copy.copy(before)
            snap.label = step.label
            entry = self.timeline.add(step.index, step.label, snap)
            entry.passages = []
            entry.problems = []
            if what is not None:
                self.injections.append((step, what))
            hooks.notify('step_done', step, entry, observers=self.observers)
        self.scenario = scenario
        self.done += len(armed)
        return scenario.steps[self.done - 1]

    def record(self, step, failure, keep_going):
        """The step's timeline entry, and its problems so far.

        The entry has the step's snapshot and the race points it passed.
        A step that failed has that as its first problem (raised at once
        unless ``keep_going``).
        """
        found = []
        if failure is not None:
            found.append(_step_failed(step, failure))
            if not keep_going:
                raise _failed(step, 'step %d (%s) failed: %s'
                              % (step.index, step.label, failure),
                              self.timeline, problems=found)
        entry = self.timeline.add(step.index, step.label,
                                  self.cloud.reader.read(step.label))
        entry.passages = self.cloud.race.recording[self._passed_from:]
        return entry, found

    def check_fired(self, keep_going):
        """Injections that never fired: problems of the last step.

        An injection nothing passed, or a fault Nova never called, is a
        step that silently did nothing.
        """
        unfired = [
            Problem(problems_mod.UNFIRED, armed.subject,
                    text='%s at step %d (%s) never fired: %s' % (
                        step.kind, step.index, step.label, armed.never)
                    ).at(step.index)
            for step, armed in self.injections if not armed.fired]
        if not unfired:
            return
        lines = problems_mod.render(unfired)
        if not keep_going:
            raise _failed(self.scenario.steps[-1], '\n'.join(lines),
                          self.timeline, '\n'.join(lines), problems=unfired)
        self.timeline.entries[-1].problems += unfired


def _check(step, entry, found, cloud, checks, steps, keep_going):
    """Give the step's entry its problems: ``found``, then its checks'.

    Its expectations' first, then those of ``checks``. Returns the
    failure to raise once observers heard of the step (not with
    ``keep_going``), or None.
    """
    # What checks at race points the step passed found (``inject: {check:
    # ...}``), then its own expectations.
    expected = [p.at(step.index) for p in
                cloud.race.take_found()
                + expect_mod.check(step.expect, entry.snapshot,
                                   steps.scenario)]
    found = found + expected
    if expected and not keep_going:
        entry.problems = found
        return _with_timeline(expect_mod.failure(step, expected),
                              steps.timeline)
    # After a step that only arms, the cloud is as the checks after the
    # step before saw it.
    for check in () if step.unit.arms else checks:
        try:
            more = [p.at(step.index) for p in
                    check(cloud, step, entry.snapshot, steps.timeline,
                          steps.scenario)]
        except _INJECTION_ERRORS as exc:
            # An injection of this step that failed at a point its casts
            # passed after ``operate`` last looked (while the snapshot
            # was read, or the cloud settled before a check's trial):
            # the first check to run Nova raises it (``race.check``). It
            # is the step's failure, as one the operation saw would be,
            # not an error of the check.
            more = [_step_failed(step, exc)]
        if more and not keep_going:
            entry.problems = found + more
            lines = problems_mod.render(more)
            return _failed(step, 'step %d (%s): %s' % (
                step.index, step.label, '\n  '.join(lines)),
                steps.timeline, '\n'.join(lines), problems=more)
        found += more
    entry.problems = found
    return None


def _say(progress, step, entry):
    if progress is None:
        return
    found = entry.problems
    progress('step %d: %s ... %s' % (
        step.index, step.label, 'ok' if not found else 'FAILED\n  '
        + '\n  '.join(problems_mod.render(found))))


def execute(cloud, step):
    """Do one step on ``cloud``; return what an inject or fault armed.

    What they arm has ``fired`` (what fired so far) and ``never`` (what
    to say if nothing did).
    """
    unit = step.unit
    if not unit.operation or step.error is None:
        return unit.run(cloud, step.args)
    try:
        unit.run(cloud, step.args)
    except errors.OperationFailed as exc:
        if step.error not in str(exc):
            raise errors.OperationFailed(
                'failed, but not with %r: %s' % (step.error, exc))
        return None
    raise errors.OperationFailed(
        'was expected to fail with %r but succeeded' % step.error)


class _PointsOf(object):
    """Forwards only ``point_passed`` to a run's observer."""

    def __init__(self, observer):
        self.point_passed = observer.point_passed


def _step_failed(step, failure):
    """The problem of ``step`` failing with ``failure`` (an error)."""
    # actual: which error, so tools tell kinds apart without reading the
    # message.
    return Problem(problems_mod.STEP_FAILED, step.label,
                   actual=type(failure).__name__,
                   text='the step failed: %s' % failure).at(step.index)


def _failed(step, message, timeline, diff='', problems=()):
    failure = errors.ScenarioFailed(message, step=step, diff=diff,
                                    problems=problems)
    return _with_timeline(failure, timeline)


def _with_timeline(failure, timeline):
    failure.timeline = timeline
    failure.args = ('%s\n\ntimeline so far:\n%s'
                    % (failure.args[0], timeline.render()),)
    return failure
