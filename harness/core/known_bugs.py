"""The verdict on a scenario's known open bug or known finding.

A scenario that asserts the wrong state Nova shows today names the open
Launchpad bug (``known_open_bug:``, ``scenario.KnownOpenBug``) or the
recorded finding, a ``findings/<name>.yaml`` with no Launchpad bug yet
(``known_finding:``, ``scenario.KnownFinding``), and each break it makes
(an invariant, a subject, a step). ``KnownBreaks`` wraps the invariants'
checker: a problem that is one of those breaks is recorded, not
reported; any other problem is reported as ever. After the run,
``looks_fixed`` says which declared breaks never happened: the bug (or
finding) looks fixed there, and the scenario should say so (drop the
declaration, make the assertions the right ones).

``verdict`` is that judgement for any run's checks: the scenario tests
(``harness.testing.ScenarioTestCase``) and ``harness run`` both read it.
The explorer wraps its checker too, each declared break moved to the
step of its replay that is the declared one (its injections add steps:
``explorer._declared``), and does not judge ``looks_fixed`` (an
injection may well stop a break); a recorded finding it finds again
without a declaration is named by ``harness explore --known-findings``.
"""

import os

#: The checkout's findings (``findings/*.yaml``), named by
#: ``known_finding: {finding: <file name without .yaml>}``.
FINDINGS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), 'findings')


def finding_path(name):
    return os.path.join(FINDINGS, name + '.yaml')


def finding_exists(name):
    """Whether ``name`` is a recorded finding (a plain file name)."""
    return (os.path.basename(name) == name and not name.startswith('.')
            and os.path.isfile(finding_path(name)))


def declarations(scenario):
    """The known open bug and known finding ``scenario`` declares."""
    return [declared for declared in (
        getattr(scenario, 'known_open_bug', None),
        getattr(scenario, 'known_finding', None)) if declared is not None]


class KnownBreaks(object):
    """The invariants' checker, less the breaks the declarations make.

    :param checker: a check for ``runner.run(checks=[...])``
        (``invariants.Checker``).

    ``seen``: ``(declaration, Break)`` -> the ``(step index, problem)``
    it matched. A run on another timeline (a new cloud after a kept one
    failed) starts afresh, as the checker does.
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
        declared = declarations(scenario)
        if not declared:
            return problems
        reported = []
        for problem in problems:
            matched = [(known, one) for known in declared
                       for one in known.breaks
                       if one.matches(problem, step.index)]
            for key in matched:
                self.seen.setdefault(key, []).append((step.index, problem))
            if not matched:
                reported.append(problem)
        return reported

    def __getattr__(self, name):
        # The rest is the checker's (``missing_breaks``, ``timings``).
        if name == 'checker':
            raise AttributeError(name)
        return getattr(self.checker, name)

    def looks_fixed(self, scenario):
        """One line per declared break that never happened (none: holds).

        ``LP#<bug> looks fixed: <check> on <subject> no longer breaks at
        step <n>`` (``finding <name> looks fixed: ...`` for a finding; ``at
        any step`` for a break given no step); a break of an invariant the
        checker does not run (its ``enabled``) is said to be unchecked,
        not fixed.
        """
        enabled = getattr(self.checker, 'enabled', None)
        lines = []
        for known in declarations(scenario):
            for declared in known.breaks:
                if (known, declared) in self.seen:
                    continue
                if enabled is not None and declared.check not in enabled:
                    # Not a fix: nothing looked.
                    lines.append('%s: %s is not checked in this run, so '
                                 'its break on %s cannot show'
                                 % (known.label, declared.check,
                                    declared.subject))
                    continue
                lines.append('%s looks fixed: %s no longer breaks %s' % (
                    known.label, declared, 'at step %d' % declared.step
                    if declared.step is not None else 'at any step'))
        return lines


def wrap(checks):
    """``checks`` with each invariants' checker wrapped in ``KnownBreaks``."""
    return [check if isinstance(check, KnownBreaks)
            or not hasattr(check, 'enabled') else KnownBreaks(check)
            for check in checks]


def verdict(checks, scenario):
    """``(looks fixed, unchecked)`` lines of a run's checks on ``scenario``.

    ``checks``: the run's checks, ``wrap``-ped; called after it ran. A
    scenario with a break that looks fixed fails; an unchecked break (an
    invariant turned off for the run) cannot show, which the scenario
    tests fail on (their invariants are the scenario's) and ``harness
    run`` only notes (``--no-periodic-check``, the probe off: the user's
    choice).
    """
    fixed, unchecked = [], []
    for check in checks:
        if isinstance(check, KnownBreaks):
            for line in check.looks_fixed(scenario):
                (fixed if ' looks fixed: ' in line else unchecked).append(
                    line)
    return fixed, unchecked
