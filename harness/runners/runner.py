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
from harness.cloud import reuse
from harness.core import errors
from harness.core import expect as expect_mod
from harness.core import hooks
from harness.core import problems as problems_mod
from harness.core.problems import Problem
from harness.core import timeline as timeline_mod


def run(scenario, test_id=None, progress=None, checks=(), fixtures=(),
        cloud_kwargs=None, keep_going=False, pool=None, observers=(),
        branches=None):
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
    :param branches: the explorer's (``harness.runners.branching``):
        before each step, ``branches.before(done, cloud)`` (``done``
        steps run so far) may fork the process; it returns None in this
        run, and in a child the scenario whose steps the child runs from
        there on (its first ``done`` steps are this run's). If
        ``branches.watching()``, the step's race points are passed to
        ``branches.at_passage`` too, which may fork there a child whose
        own steps first arm injections (``_ForkInStep``). A child ends
        in ``branches.child_done(scenario, timeline)``, inside the run:
        the cloud is the parent's, never torn down by a child.
    """
    # Nova's options, checked before anything starts.
    config_mod.validate(scenario)
    timeline = timeline_mod.Timeline()
    watching = tuple(observers)
    say = progress or (lambda line: None)
    with contextlib.ExitStack() as stack:
        # The race points report to process-wide observers only (they
        # know no run): this run's observers hear them while it runs.
        for observer in watching:
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
        # Faults armed by this run's steps end with it (a kept cloud's
        # next run starts with none).
        stack.callback(cloud.faults.clear)
        hooks.notify('run_started', scenario, cloud, observers=watching)
        timeline.add(0, 'start', cloud.snapshot())
        try:
            injections = []
            done = 0
            while done < len(scenario.steps):
                if branches is not None:
                    scenario = branches.before(done, cloud) or scenario
                    if done == len(scenario.steps):
                        # A child whose steps are the trunk's first ones:
                        # a shrinking trial that drops the last step.
                        break
                step = scenario.steps[done]
                done += 1
                hooks.notify('step_started', step, observers=watching)
                found = []
                passed_from = len(cloud.race.recording)
                version = cloud.activity.version
                fork = None
                if branches is not None and branches.watching():
                    fork = _ForkInStep(branches, cloud, scenario, done - 1)
                    cloud.race.on_passage = fork.passing
                failure = None
                try:
                    injection = execute(cloud, step)
                    if injection is not None:
                        injections.append((step, injection))
                    if step.unit.arms and cloud.activity.version != version:
                        # The checks it skips would no longer read what
                        # they read after the step before.
                        raise errors.HarnessError(
                            'step %d (%s) only arms, but Nova wrote to its '
                            'records or Placement while it ran'
                            % (step.index, step.label))
                except errors.ScenarioFailed:
                    raise
                except errors.HarnessError as exc:
                    failure = exc
                finally:
                    if fork is not None:
                        cloud.race.on_passage = None
                if fork is not None and fork.scenario is not None:
                    # A child forked inside the step: from here on it is
                    # the run of its own scenario.
                    scenario, step = fork.rebase(timeline, injections,
                                                 watching)
                    done = step.index
                elif fork is not None:
                    branches.step_ended()
                if failure is not None:
                    # actual: which error, so tools tell kinds apart without
                    # reading the message.
                    found.append(Problem(
                        problems_mod.STEP_FAILED, step.label,
                        actual=type(failure).__name__,
                        text='the step failed: %s' % failure).at(step.index))
                    if not keep_going:
                        raise _failed(step, 'step %d (%s) failed: %s'
                                      % (step.index, step.label, failure),
                                      timeline, problems=found)
                entry = timeline.add(step.index, step.label,
                                     cloud.reader.read(step.label))
                entry.passages = cloud.race.recording[passed_from:]
                expected = [p.at(step.index) for p in
                            expect_mod.check(step.expect, entry.snapshot,
                                             scenario)]
                found += expected
                if expected and not keep_going:
                    entry.problems = found
                    hooks.notify('step_done', step, entry, observers=watching)
                    raise _with_timeline(
                        expect_mod.failure(step, expected), timeline)
                # After a step that only arms, the cloud is as the checks
                # after the step before saw it.
                for check in () if step.unit.arms else checks:
                    more = [p.at(step.index) for p in
                            check(cloud, step, entry.snapshot, timeline,
                                  scenario)]
                    if more and not keep_going:
                        entry.problems = found + more
                        hooks.notify('step_done', step, entry,
                                     observers=watching)
                        lines = problems_mod.render(more)
                        raise _failed(step, 'step %d (%s): %s' % (
                            step.index, step.label, '\n  '.join(lines)),
                            timeline, '\n'.join(lines), problems=more)
                    found += more
                entry.problems = found
                hooks.notify('step_done', step, entry, observers=watching)
                say('step %d: %s ... %s' % (
                    step.index, step.label,
                    'ok' if not found else 'FAILED\n  ' + '\n  '.join(
                        problems_mod.render(found))))
            # An injection nothing passed, or a fault Nova never called, is a
            # step that silently did nothing.
            unfired = [
                Problem(problems_mod.UNFIRED, armed.subject,
                        text='%s at step %d (%s) never fired: %s' % (
                            step.kind, step.index, step.label, armed.never)
                        ).at(step.index)
                for step, armed in injections if not armed.fired]
            if unfired:
                lines = problems_mod.render(unfired)
                if not keep_going:
                    raise _failed(scenario.steps[-1], '\n'.join(lines),
                                  timeline, '\n'.join(lines), problems=unfired)
                timeline.entries[-1].problems += unfired
            if branches is not None and branches.in_child:
                branches.child_done(scenario, timeline)
        except BaseException:
            # A child forked from this run ends here, never through the
            # clean-ups below: the cloud is its parent's.
            if branches is not None and branches.in_child:
                branches.child_failed()
            raise
        hooks.notify('run_done', scenario, timeline, observers=watching)
    return timeline


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


class _ForkInStep(object):
    """Forks the explorer's children inside one step of the trunk.

    At each passage of the step (``RacePoints.on_passage``) the children
    whose first injection fires there are forked
    (``branches.at_passage``); in a child, its inject steps arm its
    injections then and there, and the passage's injections are looked
    for after that. Once the step is over the child takes up its own
    scenario (``rebase``).
    """

    def __init__(self, branches, cloud, scenario, done):
        self._branches = branches
        self._cloud = cloud
        self._trunk = scenario
        self._done = done
        # In a child: its scenario, and its inject steps with what each
        # armed.
        self.scenario = None
        self.armed = []

    def passing(self, passage):
        scenario = self._branches.at_passage(passage, self._cloud)
        if scenario is None:
            return
        self._cloud.race.on_passage = None
        try:
            arming = len(scenario.steps) - len(self._trunk.steps)
            for step in scenario.steps[self._done:self._done + arming]:
                self.armed.append((step, execute(self._cloud, step)))
            self.scenario = scenario
        except BaseException:
            # Inside Nova's code: nothing there may see it.
            self._branches.child_failed()

    def rebase(self, timeline, injections, observers):
        """Put the child's inject steps in the timeline; its step now.

        Their entries are what the run from the start reads after each:
        the cloud as the step before left it (they only arm), under their
        own labels, with no point passed.
        """
        before = timeline.entries[-1].snapshot
        for step, armed in self.armed:
            hooks.notify('step_started', step, observers=observers)
            snap = copy.copy(before)
            snap.label = step.label
            entry = timeline.add(step.index, step.label, snap)
            entry.passages = []
            entry.problems = []
            if armed is not None:
                injections.append((step, armed))
            hooks.notify('step_done', step, entry, observers=observers)
        return self.scenario, self.scenario.steps[
            self._done + len(self.armed)]


class _PointsOf(object):
    """Forwards only ``point_passed`` to a run's observer."""

    def __init__(self, observer):
        self.point_passed = observer.point_passed


def _failed(step, message, timeline, diff='', problems=()):
    failure = errors.ScenarioFailed(message, step=step, diff=diff,
                                    problems=problems)
    return _with_timeline(failure, timeline)


def _with_timeline(failure, timeline):
    failure.timeline = timeline
    failure.args = ('%s\n\ntimeline so far:\n%s'
                    % (failure.args[0], timeline.render()),)
    return failure
