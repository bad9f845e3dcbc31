"""Run a scenario on a fresh cloud: each step, a snapshot, the checks.

``run(scenario)`` stands up a ``Cloud`` with the scenario's hosts and
flavors (or takes one from a ``reuse.CloudPool``), executes each step
through the cloud, snapshots after each step, checks the step's
expectations and the given invariant checks, and returns the timeline.
The first failed expectation raises ``ScenarioFailed`` with the step, the
difference and the timeline so far.
"""

import contextlib

from harness.core import errors
from harness.core import expect as expect_mod
from harness.cloud import reuse
from harness.core import timeline as timeline_mod


def run(scenario, test_id=None, progress=None, checks=(), fixtures=(),
        cloud_kwargs=None, keep_going=False, pool=None):
    """Run ``scenario``; return its ``Timeline``.

    :param progress: called with a line per step, if given.
    :param checks: callables ``check(cloud, step, snapshot, timeline,
        scenario)`` that return a list of problems (invariants); run after
        every step, once its expectations held.
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
    """
    timeline = timeline_mod.Timeline()
    say = progress or (lambda line: None)
    with contextlib.ExitStack() as stack:
        if pool is not None and reuse.keepable(fixtures):
            cloud = stack.enter_context(
                pool.cloud(scenario, test_id, cloud_kwargs, fixtures))
        else:
            if pool is not None:
                # One cloud alive at a time: they share Nova's config.
                pool.discard()
            cloud = reuse.stand_up(stack, scenario, test_id, cloud_kwargs,
                                   fixtures)
        timeline.add(0, 'start', cloud.snapshot())
        injections = []
        for step in scenario.steps:
            error = None
            passed_from = len(cloud.race.recording)
            try:
                injection = execute(cloud, step)
                if injection is not None:
                    injections.append((step, injection))
            except errors.ScenarioFailed:
                raise
            except errors.HarnessError as exc:
                error = 'the step failed: %s' % exc
                if not keep_going:
                    raise _failed(step, 'step %d (%s) failed: %s'
                                  % (step.index, step.label, exc), timeline)
            snap = cloud.reader.read(step.label)
            entry = timeline.add(step.index, step.label, snap)
            entry.passages = cloud.race.recording[passed_from:]
            problems = [error] if error else []
            problems += expect_mod.check(step.expect, snap, scenario)
            if problems and not keep_going:
                raise _with_timeline(
                    expect_mod.failure(step, problems), timeline)
            for check in checks:
                found = check(cloud, step, snap, timeline, scenario)
                if found and not keep_going:
                    raise _failed(step, 'step %d (%s): %s' % (
                        step.index, step.label, '\n  '.join(found)),
                        timeline, '\n'.join(found))
                problems += found
            entry.problems = problems
            say('step %d: %s ... %s' % (
                step.index, step.label,
                'ok' if not problems else 'FAILED\n  ' + '\n  '.join(
                    problems)))
        # An injection nothing passed is a step that silently did nothing
        # (a misspelt point, or a point this flow never passes).
        unfired = ['inject at step %d (%s) never fired: the run never '
                   'passed %s %s' % (step.index, step.label,
                                     injection.when, injection.point)
                   for step, injection in injections if not injection.fired]
        if unfired:
            if not keep_going:
                raise _failed(scenario.steps[-1], '\n'.join(unfired),
                              timeline, '\n'.join(unfired))
            timeline.entries[-1].problems += unfired
    return timeline


def execute(cloud, step):
    """Do one step on ``cloud``; an ``inject`` returns its injection."""
    args = step.args
    servers = cloud.servers
    operations = {
        'boot': lambda: servers.boot(args['server'], args['flavor'],
                                     host=args.get('host')),
        'resize': lambda: servers.resize(args['server'], args['flavor']),
        'confirm': lambda: servers.confirm(args['server']),
        'revert': lambda: servers.revert(args['server']),
        'migrate': lambda: servers.migrate(args['server'],
                                           host=args.get('host')),
        'live_migrate': lambda: servers.live_migrate(
            args['server'], host=args.get('host')),
        'delete': lambda: servers.delete(args['server']),
    }
    if step.kind in operations:
        if step.error is None:
            operations[step.kind]()
            return
        try:
            operations[step.kind]()
        except errors.OperationFailed as exc:
            if step.error not in str(exc):
                raise errors.OperationFailed(
                    'failed, but not with %r: %s' % (step.error, exc))
            return
        raise errors.OperationFailed(
            'was expected to fail with %r but succeeded' % step.error)
    elif step.kind == 'run_periodic':
        for host in args['hosts'] or sorted(cloud.computes):
            cloud.run_periodic(args['task'], host)
    elif step.kind == 'advance_clock':
        cloud.clock.advance(args['seconds'])
    elif step.kind == 'inject':
        return cloud.race.at(
            args['point'], when=args['when'], host=args.get('at_host'),
            server=args.get('server'), times=args['times']).run(
            args['run'], host=args['on'])
    elif step.kind == 'stop_compute':
        cloud.stop_compute(args['host'])
    elif step.kind == 'start_compute':
        cloud.restart_compute(args['host'])
    else:  # pragma: no cover - the loader refuses other kinds
        raise errors.HarnessError('unknown step kind %r' % step.kind)


def _failed(step, message, timeline, diff=''):
    failure = errors.ScenarioFailed(message, step=step, diff=diff)
    return _with_timeline(failure, timeline)


def _with_timeline(failure, timeline):
    failure.timeline = timeline
    failure.args = ('%s\n\ntimeline so far:\n%s'
                    % (failure.args[0], timeline.render()),)
    return failure
