"""``known_open_bug``, ``known_finding``: parsing, and the verdict.

A scenario names an open bug and the breaks it makes; it passes while
exactly those happen, fails with "LP#<bug> looks fixed" when one stops,
and still fails on any other break. No Nova: the checker is a stand-in
that returns the problems a test gives it, step by step.
"""

import os

import fixtures

from harness.core import errors
from harness.core import known_bugs
from harness.core.problems import Problem
from harness.core import scenario
from harness import testing
from tests.unit import test_scenario_loader as loader

BUG = """\
bugs: [1848343]
known_open_bug:
  bug: 1848343
  breaks:
    - {check: nothing_leaks, subject: vm1, step: 2}
    - {check: tracker_agrees, subject: "host host1, *"}
"""
STEPS = loader.HEAD + '  - delete: vm1\n'


def _load(text):
    return scenario.parse(scenario.safe_load(text), 'bug.yaml')


class TestParsing(testing.TestCase):

    def test_the_declaration(self):
        loaded = _load(STEPS + BUG)
        self.assertEqual('1848343', loaded.known_open_bug.bug)
        self.assertEqual(
            (scenario.Break('nothing_leaks', 'vm1', 2),
             scenario.Break('tracker_agrees', 'host host1, *', None)),
            loaded.known_open_bug.breaks)
        self.assertIsNone(_load(STEPS).known_open_bug)

    def test_bad_input_names_the_field(self):
        for text, field, fragment in (
                (BUG.replace('bugs: [1848343]', 'bugs: [1]'),
                 'known_open_bug.bug', "bug 1848343 is not among this "
                 "scenario's bugs"),
                (BUG.replace('nothing_leaks', 'no_leaks'),
                 'known_open_bug.breaks.1.check',
                 "unknown invariant 'no_leaks'"),
                (BUG.replace('step: 2', 'step: 3'),
                 'known_open_bug.breaks.1.step', 'must be at most 2'),
                (BUG.replace('subject: vm1, ', ''),
                 'known_open_bug.breaks.1.subject', 'missing'),
                (BUG.replace('subject: vm1', 'host: vm1'),
                 'known_open_bug.breaks.1.host', 'unknown field'),
                ('bugs: [1848343]\nknown_open_bug: {bug: 1848343, '
                 'breaks: []}\n', 'known_open_bug.breaks',
                 'name at least one break'),
                ('bugs: [1848343]\nknown_open_bug: 1848343\n',
                 'known_open_bug', 'expected a mapping'),
                (BUG + '    - {check: nothing_leaks, subject: vm1, '
                 'step: 2}\n', 'known_open_bug.breaks.3',
                 'the same break is named twice'),
                (BUG + 'expected_breaks: {tracker_agrees: 1848343}\n',
                 'known_open_bug.breaks.2.check',
                 'name its breaks here or there, not both')):
            error = self.assertRaises(errors.ScenarioError, _load,
                                      STEPS + text)
            self.assertIn('bug.yaml, field "%s"' % field, str(error), text)
            self.assertIn(fragment, str(error), text)


def _leak(step=None):
    return Problem('nothing_leaks', 'vm1', text='nothing_leaks: vm1 leaks')


def _lag(resource):
    return Problem('tracker_agrees', 'host host1, %s' % resource)


class _Checker(object):
    """Returns, after step N, the problems ``found[N]``."""

    def __init__(self, found):
        self.found = found

    def __call__(self, cloud, step, snap, timeline, scenario):
        return list(self.found.get(step.index, ()))


def _run(found, text=STEPS + BUG):
    """The problems reported per step, and the verdict, of one run."""
    loaded = _load(text)
    checker = known_bugs.KnownBreaks(_Checker(found))
    timeline = object()
    reported = {
        step.index: checker(None, step, None, timeline, loaded)
        for step in loaded.steps}
    return ({index: found for index, found in reported.items() if found},
            checker.looks_fixed(loaded))


class TestVerdict(testing.TestCase):

    def test_passes_while_exactly_the_breaks_happen(self):
        reported, fixed = _run({1: [_lag('vcpus'), _lag('memory_mb')],
                                2: [_leak(), _lag('vcpus')]})
        self.assertEqual(({}, []), (reported, fixed))

    def test_a_break_that_stops_looks_fixed(self):
        reported, fixed = _run({1: [_lag('vcpus')]})
        self.assertEqual({}, reported)
        self.assertEqual(['LP#1848343 looks fixed: nothing_leaks on vm1 no '
                          'longer breaks at step 2'], fixed)
        reported, fixed = _run({2: [_leak()]})
        self.assertEqual(['LP#1848343 looks fixed: tracker_agrees on host '
                          'host1, * no longer breaks at any step'], fixed)

    def test_a_break_at_another_step_is_reported(self):
        reported, fixed = _run({1: [_leak(), _lag('vcpus')]})
        self.assertEqual({1: [_leak()]}, reported)
        self.assertEqual(1, len(fixed))

    def test_any_other_break_is_reported(self):
        other = Problem('tracker_agrees', 'host host2, vcpus')
        usages = Problem('usages_add_up', 'provider host1')
        reported, fixed = _run({2: [_leak(), _lag('vcpus'), other, usages]})
        self.assertEqual({2: [other, usages]}, reported)
        self.assertEqual([], fixed)

    def test_without_a_declaration_everything_is_reported(self):
        reported, fixed = _run({2: [_leak()]}, STEPS)
        self.assertEqual(({2: [_leak()]}, []), (reported, fixed))

    def test_an_invariant_not_checked_is_not_a_fix(self):
        loaded = _load(STEPS + BUG)
        inner = _Checker({2: [_leak()]})
        inner.enabled = {'nothing_leaks'}
        checker = known_bugs.KnownBreaks(inner)
        for step in loaded.steps:
            checker(None, step, None, 'run', loaded)
        self.assertEqual(['LP#1848343: tracker_agrees is not checked in '
                          'this run, so its break on host host1, * cannot '
                          'show'], checker.looks_fixed(loaded))

    def test_a_new_timeline_starts_afresh(self):
        loaded = _load(STEPS + BUG)
        checker = known_bugs.KnownBreaks(_Checker({2: [_leak()]}))
        checker(None, loaded.steps[1], None, 'first run', loaded)
        self.assertEqual(1, len(checker.looks_fixed(loaded)))
        checker.checker = _Checker({})
        checker(None, loaded.steps[1], None, 'second run', loaded)
        self.assertEqual(2, len(checker.looks_fixed(loaded)))


FINDING_NAME = 'delete_after_move_keeps_pinned_cpus_until_periodic'
FINDING = """\
known_finding:
  finding: %s
  breaks:
    - {check: capacity_probe, subject: "host host1, dedicated", step: 2}
""" % FINDING_NAME


def _probe(subject='host host1, dedicated'):
    return Problem('capacity_probe', subject)


class TestKnownFinding(testing.TestCase):
    """A recorded finding (no Launchpad bug) declared like an open bug."""

    def test_the_declaration(self):
        loaded = _load(STEPS + FINDING)
        self.assertEqual(scenario.KnownFinding(FINDING_NAME, (
            scenario.Break('capacity_probe', 'host host1, dedicated', 2),)),
            loaded.known_finding)
        self.assertIsNone(loaded.known_open_bug)
        self.assertIsNone(_load(STEPS).known_finding)

    def test_bad_input_names_the_field(self):
        for text, field, fragment in (
                (FINDING.replace(FINDING_NAME, 'no_such_finding'),
                 'known_finding.finding', 'no finding no_such_finding: '
                 'expected %s' % known_bugs.finding_path('no_such_finding')),
                # A path is not a finding's name.
                (FINDING.replace(FINDING_NAME, '../findings/' + FINDING_NAME),
                 'known_finding.finding', 'no finding ../findings/'),
                (FINDING.replace('finding: ', 'bug: '),
                 'known_finding.bug', 'unknown field'),
                (FINDING.replace('capacity_probe', 'capacity'),
                 'known_finding.breaks.1.check',
                 "unknown invariant 'capacity'"),
                (FINDING.replace('step: 2', 'step: 9'),
                 'known_finding.breaks.1.step', 'must be at most 2')):
            error = self.assertRaises(errors.ScenarioError, _load,
                                      STEPS + text)
            self.assertIn('bug.yaml, field "%s"' % field, str(error), text)
            self.assertIn(fragment, str(error), text)

    def test_passes_while_the_break_happens(self):
        reported, fixed = _run({2: [_probe()]}, STEPS + FINDING)
        self.assertEqual(({}, []), (reported, fixed))

    def test_a_break_that_stops_looks_fixed(self):
        reported, fixed = _run({}, STEPS + FINDING)
        self.assertEqual(['finding %s looks fixed: capacity_probe on host '
                          'host1, dedicated no longer breaks at step 2'
                          % FINDING_NAME], fixed)

    def test_other_problems_are_reported(self):
        other = _probe('host host1, shared')
        reported, fixed = _run({1: [_probe()], 2: [_probe(), other]},
                               STEPS + FINDING)
        self.assertEqual({1: [_probe()], 2: [other]}, reported)
        self.assertEqual([], fixed)

    def test_a_bug_and_a_finding_each_have_their_verdict(self):
        text = STEPS + BUG + FINDING
        reported, fixed = _run({2: [_leak(), _lag('vcpus')]}, text)
        self.assertEqual({}, reported)
        self.assertEqual(['finding %s looks fixed: capacity_probe on host '
                          'host1, dedicated no longer breaks at step 2'
                          % FINDING_NAME], fixed)
        reported, fixed = _run({2: [_probe(), _lag('vcpus')]}, text)
        self.assertEqual(['LP#1848343 looks fixed: nothing_leaks on vm1 no '
                          'longer breaks at step 2'], fixed)


class TestVerdictOfARun(testing.TestCase):
    """``known_bugs.wrap`` and ``verdict``: what ``harness run`` reads."""

    def test_fixed_and_unchecked_apart(self):
        loaded = _load(STEPS + BUG)
        inner = _Checker({})
        inner.enabled = {'nothing_leaks'}
        checks = known_bugs.wrap([inner])
        self.assertIsInstance(checks[0], known_bugs.KnownBreaks)
        for step in loaded.steps:
            checks[0](None, step, None, 'run', loaded)
        fixed, unchecked = known_bugs.verdict(checks, loaded)
        self.assertEqual(['LP#1848343 looks fixed: nothing_leaks on vm1 no '
                          'longer breaks at step 2'], fixed)
        self.assertEqual(['LP#1848343: tracker_agrees is not checked in '
                          'this run, so its break on host host1, * cannot '
                          'show'], unchecked)

    def test_the_wrapped_checker_answers_for_the_rest(self):
        inner = _Checker({})
        inner.enabled = set()
        inner.missing_breaks = lambda scenario: ['usages_add_up']
        [wrapped] = known_bugs.wrap([inner])
        self.assertEqual(['usages_add_up'], wrapped.missing_breaks(None))
        # Wrapping twice is wrapping once; a check that is no invariants'
        # checker is left alone.
        self.assertIs(wrapped, known_bugs.wrap([wrapped])[0])
        plain = object()
        self.assertIs(plain, known_bugs.wrap([plain])[0])


class TestBugFiles(testing.TestCase):

    def test_a_break_of_an_invariant_the_bug_turns_off_is_refused(self):
        from harness import bugs
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'lp1848343.yaml')
        with open(path, 'w') as out:
            out.write(BUG_FILE)
        error = self.assertRaises(errors.ScenarioError, bugs.load, path)
        self.assertIn('[1], field "known_open_bug.breaks.2.check": the bug '
                      'turns this invariant off', str(error))


BUG_FILE = """\
bug:
  id: 1848343
  title: a title
  fix: not yet
  story: a story
  invariants_off: {tracker_agrees: the story says why}
scenarios:
  - name: one
""" + ''.join('    ' + line + '\n' for line in (
    STEPS + BUG).splitlines() if not line.startswith('name:'))
