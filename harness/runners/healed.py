"""A tracker lag an injected periodic healed: not a failure of a replay.

A scenario's expectations are written for the run as it stands. Where
Nova's own code leaves a host's resource tracker behind Placement until
the host's next periodic (the ``live-migrated here`` lag: a live
migration's destination without a claim; the delete of a moved guest:
``tracker_agrees``' windows), the scenario says so: ``tracker: {}`` on
the destination after a live migration, then the guest once its periodic
ran. The race explorer then injects ``update_available_resource`` on
that host in the middle of the move: the periodic does early what the
scenario's own does later, the tracker counts what Placement holds, and
the expectation of the lag no longer holds. Nothing is wrong with Nova
there; the replay only caught the lag up sooner.

So in an explored replay a problem of a step's ``tracker`` or
``pinned_cpus`` expectation on host H is excused when both hold:

1. a periodic injected in the replay ran ``update_available_resource``
   on H since the last step of the scenario's own that reconciled H
   (``StepKind.reconciles``: a ``run_periodic``, a compute's start);
2. after the step, every tracker of H counts exactly what Placement
   holds in its tree, and pins no CPU twice or outside its cell
   (``tracker_agrees`` with no window).

It keeps every failure where the tracker is wrong by Placement's measure
(LP#1707071's, LP#1944759's, the findings of ``findings/``: their
tracker disagrees with Placement, so 2 does not hold), every failure of
Placement's own (``allocations``, ``usages`` and the invariants are
never excused), and every expectation written after the scenario's own
periodic on H (1 does not hold). ``harness run`` holds a scenario to its
expectations as written: the rule is the explorer's only.
"""

from harness.core.checks.invariant import tracker_agrees
from harness.core import names
from harness.core import steps as steps_mod

#: The expectations on a host's tracker that a healed lag may break.
TRACKER_EXPECTATIONS = ('tracker', 'pinned_cpus')


def excuse(scenario, timeline):
    """Take healed lags out of ``timeline``'s problems; return them.

    ``scenario``: the replay's (with its inject steps). Each step's
    entry keeps its other problems; the excused ones are returned, in
    step order, for the result to count.
    """
    injected = set()
    excused = []
    for entry in timeline:
        if not entry.index:
            continue
        step = scenario.steps[entry.index - 1]
        for passage in entry.passages or ():
            injected |= {host for task, host in getattr(passage, 'runs', ())
                         if task == names.RECONCILE}
        if step.error is None:
            injected -= steps_mod.get(step.kind).reconciles(
                step.args, set(scenario.hosts))
        if not injected or not entry.problems:
            continue
        kept = []
        for problem in entry.problems:
            host = _host_of(problem, entry.snapshot)
            if host in injected and _agrees(entry.snapshot, host):
                excused.append(problem)
            else:
                kept.append(problem)
        entry.problems = kept
    return excused


def _host_of(problem, snap):
    """The host whose tracker ``problem`` is about, or None."""
    if problem.check not in TRACKER_EXPECTATIONS:
        return None
    # ``tracker``: a host or node; ``pinned_cpus``: that, or '<it> cell N'.
    where = problem.subject.split(' cell ', 1)[0]
    tracker = snap.trackers.get(where)
    return tracker.host if tracker is not None else where


def _agrees(snap, host):
    """Whether ``host``'s trackers count what Placement holds, exactly."""
    if not any(tracker.host == host for tracker in snap.trackers.values()):
        return False
    return not tracker_agrees.tracker_agrees(snap, hosts={host})
