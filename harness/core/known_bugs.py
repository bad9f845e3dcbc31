"""The verdict on a scenario's known open bug (``known_open_bug:``).

A scenario that asserts the wrong state Nova shows today names the open
Launchpad bug and each break it makes (an invariant, a subject, a step;
``scenario.KnownOpenBug``). ``KnownBreaks`` wraps the invariants'
checker: a problem that is one of those breaks is recorded, not
reported; any other problem is reported as ever. After the run,
``looks_fixed`` says which declared breaks never happened: the bug looks
fixed there, and the scenario should say so (drop the declaration, make
the assertions the right ones).
"""


class KnownBreaks(object):
    """The invariants' checker, less the breaks the open bug makes.

    :param checker: a check for ``runner.run(checks=[...])``
        (``invariants.Checker``).

    ``seen``: ``Break`` -> the ``(step index, problem)`` it matched. A run
    on another timeline (a new cloud after a kept one failed) starts
    afresh, as the checker does.
    """

    def __init__(self, checker):
        self.checker = checker
        self.seen = {}
        self._timeline = None

    def __call__(self, cloud, step, snap, timeline, scenario):
        if timeline is not self._timeline:
            self._timeline = timeline
            self.seen = {}
        problems = self.checker(cloud, step, snap, timeline, scenario)
        bug = getattr(scenario, 'known_open_bug', None)
        if bug is None:
            return problems
        reported = []
        for problem in problems:
            matched = [declared for declared in bug.breaks
                       if declared.matches(problem, step.index)]
            for declared in matched:
                self.seen.setdefault(declared, []).append(
                    (step.index, problem))
            if not matched:
                reported.append(problem)
        return reported

    def looks_fixed(self, scenario):
        """One line per declared break that never happened (none: holds).

        ``LP#<bug> looks fixed: <check> on <subject> no longer breaks at
        step <n>`` (or ``at any step`` for a break given no step); a
        break of an invariant the checker does not run (its ``enabled``)
        is said to be unchecked, not fixed.
        """
        bug = getattr(scenario, 'known_open_bug', None)
        if bug is None:
            return []
        enabled = getattr(self.checker, 'enabled', None)
        lines = []
        for declared in bug.breaks:
            if declared in self.seen:
                continue
            if enabled is not None and declared.check not in enabled:
                # Not a fix: nothing looked.
                lines.append('LP#%s: %s is not checked in this run, so '
                             'its break on %s cannot show'
                             % (bug.bug, declared.check, declared.subject))
                continue
            lines.append('LP#%s looks fixed: %s no longer breaks %s' % (
                bug.bug, declared, 'at step %d' % declared.step
                if declared.step is not None else 'at any step'))
        return lines
