"""Observer hooks: what a run tells those who watch it.

The runner, the cloud and its race points call ``notify`` at each event;
an observer is any object with methods named after the events it wants
(others are not called). Observers are given to one run
(``runner.run(observers=[...])``) or, for every run and cloud in the
process while a block runs, with ``observing(observer)`` (the determinism
tool watches whole test methods that way). Observers only read: an
observer that raises fails the run.

Events, in the order a run sends them:

``cloud_started(cloud)``
    a ``Cloud`` finished standing up (before any compute starts).
``run_started(scenario, cloud)``
    a scenario run has its cloud, before the first step.
``step_started(step)``
    a step is about to run.
``point_passed(passage)``
    the cloud passed a race point and recorded it (``race.Passage``);
    not sent while an injected action runs.
``step_done(step, entry)``
    the step ran and was checked; ``entry`` is its ``timeline.Entry``
    (snapshot, problems, passages).
``run_done(scenario, timeline)``
    the run ended (passed or not; not sent when a step raised).

Observers only watch. What may change a run's course is its one
``Course`` (``runner.run(course=...)``): asked before each step and
after each step's operation, and told last when the run ends. The race
explorer's branching (``harness.runners.branching``) is one: it forks a
replay where its steps part from the run, and the replay goes on as a
run of its own scenario.
"""

import contextlib

EVENTS = ('cloud_started', 'run_started', 'step_started', 'point_passed',
          'step_done', 'run_done')

_WATCHING = []


@contextlib.contextmanager
def observing(observer):
    """Send every event in this process to ``observer`` while in effect."""
    _WATCHING.append(observer)
    try:
        yield observer
    finally:
        _WATCHING.remove(observer)


def notify(event, *args, observers=()):
    """Send ``event`` to ``observers`` and to every process-wide one."""
    if event not in EVENTS:  # pragma: no cover - a typo in the harness
        raise ValueError('unknown event %r' % event)
    for observer in tuple(observers) + tuple(_WATCHING):
        method = getattr(observer, event, None)
        if method is not None:
            method(*args)


class Course(object):
    """What may change a run's course; this one goes straight on.

    The runner asks it at three moments (``harness.runners.runner``):

    ``before_step(done, cloud)``
        before each step (``done`` steps run so far): None to go on, or
        the scenario to run from here on instead; its first ``done``
        steps must be the ones run (the run ends here if it has no
        more).
    ``after_operation(step, cloud)``
        once the step's operation returned (or failed), before its
        snapshot: None, or ``(scenario, armed)``: the run took up
        ``scenario`` inside the step. ``armed`` are that scenario's
        steps that only arm (``StepKind.arms``: an inject, a fault) that
        ran there, before the rest of the step, each with what it armed
        (``runner.execute``'s answer), as ``[(step, armed), ...]``; the
        step is the scenario's next one after them.
    ``ended(scenario, timeline, error)``
        last, inside the run, before its clean-ups (the cloud is still
        up): ``error`` is what the run raises, or None. It may end the
        process there (a forked replay does: the cloud's clean-ups are
        its parent's).
    """

    def before_step(self, done, cloud):
        return None

    def after_operation(self, step, cloud):
        return None

    def ended(self, scenario, timeline, error):
        pass
