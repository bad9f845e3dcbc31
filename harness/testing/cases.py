"""Test-case helpers for suites built on the harness (testtools based)."""

import os
import sys

import fixtures
import testtools
from testtools import content
import yaml

from harness.core import errors
from harness.core import invariants
from harness.core import known_bugs
from harness.core import names
from harness.core import steps
from harness.core import timeline as timeline_mod
# By their own names, not through harness or harness.testing: both
# packages re-export this module's classes (tests/unit/test_layers.py).
import harness.report
import harness.testing.hang_guard
import harness.testing.leaks


#: Which scenario tests run their scenario a second time without checks
#: (``ScenarioTestCase.compare_without_checks``): ``all`` (unset), or
#: ``one-per-file``: only a test run with ``stands_for_file=True`` (the
#: first scenario of each file of tests/functional/scenarios). The gate's
#: ``tox -e functional`` compares one per file, to stay inside its time;
#: ``tox -e functional-readonly`` (a periodic job) compares every one.
COMPARE_ENV = 'HARNESS_COMPARE_WITHOUT_CHECKS'
COMPARE_POLICIES = ('all', 'one-per-file')


def compare_policy():
    """The policy ``COMPARE_ENV`` names (``all`` when unset)."""
    policy = os.environ.get(COMPARE_ENV) or 'all'
    if policy not in COMPARE_POLICIES:
        raise errors.HarnessError(
            '%s=%r: say one of %s' % (COMPARE_ENV, policy,
                                      ', '.join(COMPARE_POLICIES)))
    return policy


class TestCase(testtools.TestCase):
    """Base of every test in the suite.

    Its first fixture is ``harness.testing.hang_guard.HangGuard`` (a
    test running past ``HARNESS_TEST_TIMEOUT`` seconds fails with every
    thread's stack), then ``harness.leaks.LeakCheck``: its clean-up runs
    after every other, inside the test, and fails the test if it left
    CONF changes, monkeypatches, threads or greenthreads, sqlite files or
    temp entries behind.

    A cloud kept from an earlier scenario test (``reuse.shared_pool``) is
    given up before the check takes its inventory, and again before the
    check runs (scenario tests that this one ran inside itself may have
    left one), unless the class runs its scenarios on it
    (``ScenarioTestCase``).
    """

    #: Whether the test may find the process's kept cloud alive.
    uses_kept_cloud = False

    def setUp(self):
        super().setUp()
        # First: a hang anywhere below (a kept cloud given up included)
        # fails the test with every thread's stack.
        harness.testing.hang_guard.guarded(self)
        if not self.uses_kept_cloud:
            _release_kept_cloud()
        self.useFixture(harness.testing.leaks.LeakCheck(self.id()))
        if not self.uses_kept_cloud:
            self.addCleanup(_release_kept_cloud)

    def write_yaml(self, document, name):
        """``document`` as YAML in a directory of this test; its path."""
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, name)
        with open(path, 'w') as out:
            yaml.safe_dump(document, out)
        return path


class ScenarioTestCase(TestCase):
    """Runs scenarios with the invariants on; failures carry details.

    A failure adds the diff and the timeline as testtools details, which
    stestr and subunit carry to the gate's report.

    Each run also proves two things about the harness itself:

    - every race point a step passed is one its kind declares
      (``harness.core.steps``), so ``inject`` validation stays true;
    - with ``compare_without_checks``, the scenario runs a second time
      with no check at all, on the same kept cloud, and every step leaves
      exactly what it left with the invariants on
      (``timeline.comparable``): the checks only read. ``COMPARE_ENV``
      may narrow this to one scenario per file.
    """

    #: Invariant 5 runs every compute's update_available_resource after
    #: each step, on a copy of the cloud; a class may turn it off.
    periodic_idempotence = True
    #: The invariants checked (all by default); a class narrowing them says
    #: why next to it.
    invariants = None
    #: Run again without checks and compare the timelines (see above).
    compare_without_checks = True
    #: Scenarios run on the process's kept cloud (``reuse.shared_pool``,
    #: unless ``HARNESS_KEEP_CLOUDS=0``): the one the test before left if
    #: it has this scenario's shape, put back to its checkpoint and proven
    #: back; a new one otherwise. A run given ``fixtures`` that hold state
    #: gets a cloud of its own. A scenario that fails on a kept cloud runs
    #: again on a new one, and the test reports that run.
    uses_kept_cloud = True

    def setUp(self):
        # The runner imports Nova, which monkey-patches the process for
        # eventlet: do it before the leak check takes its inventory, not
        # inside the first test (and not when this module is imported, so
        # that unit tests stay free of Nova).
        from harness.runners import runner  # noqa: F401
        super().setUp()

    def run_scenario(self, scenario, stands_for_file=True, **kwargs):
        """Run ``scenario`` with the checks; fail the test on a problem.

        ``stands_for_file``: whether this is the scenario its file is
        compared by when ``COMPARE_ENV`` is ``one-per-file``.
        """
        compare = self.compare_without_checks and (
            stands_for_file or compare_policy() == 'all')
        from harness.cloud import reuse
        from harness.runners import runner
        if 'pool' not in kwargs:
            kwargs['pool'] = (
                reuse.shared_pool(harness.testing.leaks.pool_changing)
                if reuse.keeping() else self.useFixture(reuse.CloudPool()))
        pool = kwargs['pool']
        try:
            checker, declared, timeline = self._run_checked(
                runner, scenario, kwargs)
        except errors.ScenarioFailed as exc:
            if not pool.last_was_kept:
                self._failed(exc)
            # The pool gave the cloud up: this run gets a new one. A pass
            # there means the kept cloud was not what its checkpoint was.
            try:
                self._run_checked(runner, scenario, kwargs)
            except errors.ScenarioFailed as again:
                self._failed(again)
            self.addDetail('failure on the kept cloud',
                           content.text_content(str(exc)))
            self.fail('the scenario failed on a kept cloud and passed on '
                      'a new one: the kept cloud was not back at its '
                      'checkpoint (a harness bug; see harness.cloud.reuse)')
        self.assertEqual([], declared.undeclared, 'race points passed that '
                         'the step kinds do not declare: add them to the '
                         'step units in harness/core/steps')
        missing = checker.checker.missing_breaks(scenario)
        if missing:
            self.fail('expected %s to break (bug %s), but it held' % (
                ', '.join(missing), ', '.join(
                    scenario.expected_breaks[name] for name in missing)))
        fixed = checker.looks_fixed(scenario)
        if fixed:
            self.fail('\n'.join(fixed))
        if compare:
            self._compare_without_checks(scenario, timeline, kwargs)
        return timeline

    def _run_checked(self, runner, scenario, kwargs):
        # A known open bug's breaks are the state the scenario asserts.
        checker = known_bugs.KnownBreaks(invariants.Checker(
            periodic_idempotence=self.periodic_idempotence,
            enabled=self.invariants, probe_by_default=True))
        declared = _DeclaredPoints()
        # What a failure's report needs that the timeline does not keep
        # (whose pinned CPUs, what fired where), when reports are wanted.
        recorder = (harness.report.Recorder() if harness.report.directory()
                    else None)
        self._reporting = (scenario, recorder)
        run_kwargs = dict(kwargs)
        run_kwargs.setdefault('checks', [checker])
        run_kwargs['observers'] = tuple(kwargs.get('observers', ())) + (
            declared,) + ((recorder,) if recorder else ())
        timeline = runner.run(scenario, test_id=self.id(), **run_kwargs)
        return checker, declared, timeline

    def _failed(self, exc):
        # The HTML report, under $HARNESS_REPORT_DIR (if set), as a detail.
        scenario, recorder = getattr(self, '_reporting', (None, None))
        harness.report.attach(self, exc, scenario=scenario,
                              recorder=recorder)
        if exc.timeline is not None:
            self.addDetail('timeline', content.text_content(
                exc.timeline.render()))
        if exc.diff:
            self.addDetail('diff', content.text_content(exc.diff))
        raise self.failureException(str(exc))

    def _compare_without_checks(self, scenario, timeline, kwargs):
        from harness.runners import runner
        unchecked = runner.run(
            scenario, test_id=self.id() + '.unchecked', keep_going=True,
            fixtures=kwargs.get('fixtures', ()), pool=kwargs['pool'],
            cloud_kwargs=kwargs.get('cloud_kwargs'))
        for checked, plain in zip(timeline, unchecked):
            if timeline_mod.comparable(checked) != \
                    timeline_mod.comparable(plain):
                self.addDetail('with checks', content.text_content(
                    repr(timeline_mod.comparable(checked))))
                self.addDetail('without checks', content.text_content(
                    repr(timeline_mod.comparable(plain))))
                self.fail('step %d (%s) left something else when the '
                          'invariants were checked: a check changed what '
                          'it checked' % (checked.index, checked.label))
        self.assertEqual(len(timeline), len(unchecked))


def _release_kept_cloud():
    # Only if a scenario test made it: a unit test never imports Nova.
    reuse = sys.modules.get('harness.cloud.reuse')
    if reuse is not None:
        for pool in reuse._SHARED:
            pool.discard()


class _DeclaredPoints(object):
    """Observer: the race points a step passed that its kind lacks."""

    def __init__(self):
        self.undeclared = []
        self._step = None
        # The points of requests injections send (``inject: {do: ...}``):
        # any later step may pass them.
        self._sent = set()

    def step_started(self, step):
        self._step = step
        if step.kind == 'inject' and step.args.get('do'):
            self._sent |= steps.get(
                names.INTERJECTIONS[step.args['do'][0]]).points

    def point_passed(self, passage):
        step = self._step
        if step is not None and passage.point not in step.unit.points \
                and passage.point not in self._sent:
            self.undeclared.append((step.kind, passage.when, passage.point))
