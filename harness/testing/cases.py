"""Test-case helpers for suites built on the harness (testtools based)."""

import testtools
from testtools import content

from harness.core import errors
from harness.core import invariants
from harness.testing import leaks


class TestCase(testtools.TestCase):
    """Base of every test in the suite.

    Its first fixture is ``harness.leaks.LeakCheck``: its clean-up runs
    after every other, inside the test, and fails the test if it left
    CONF changes, monkeypatches, threads or greenthreads, sqlite files or
    temp entries behind.
    """

    def setUp(self):
        super().setUp()
        self.useFixture(leaks.LeakCheck(self.id()))


class ScenarioTestCase(TestCase):
    """Runs scenarios with the invariants on; failures carry details.

    A failure adds the diff and the timeline as testtools details, which
    stestr and subunit carry to the gate's report.
    """

    #: Invariant 5 runs every compute's update_available_resource after
    #: each step; a class whose scenarios rely on trackers staying stale
    #: between steps turns it off.
    periodic_idempotence = True
    #: The invariants checked (all by default); a class narrowing them says
    #: why next to it.
    invariants = None

    def setUp(self):
        # The runner imports Nova, which monkey-patches the process for
        # eventlet: do it before the leak check takes its inventory, not
        # inside the first test (and not when this module is imported, so
        # that unit tests stay free of Nova).
        from harness.runners import runner  # noqa: F401
        super().setUp()

    def run_scenario(self, scenario, **kwargs):
        from harness.runners import runner
        checker = invariants.Checker(
            periodic_idempotence=self.periodic_idempotence,
            enabled=self.invariants)
        kwargs.setdefault('checks', [checker])
        try:
            timeline = runner.run(scenario, test_id=self.id(), **kwargs)
        except errors.ScenarioFailed as exc:
            if exc.timeline is not None:
                self.addDetail('timeline', content.text_content(
                    exc.timeline.render()))
            if exc.diff:
                self.addDetail('diff', content.text_content(exc.diff))
            raise self.failureException(str(exc))
        missing = checker.missing_breaks(scenario)
        if missing:
            self.fail('expected %s to break (bug %s), but it held' % (
                ', '.join(missing), ', '.join(
                    scenario.expected_breaks[name] for name in missing)))
        return timeline
