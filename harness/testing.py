"""Test-case helpers for suites built on the harness (testtools based)."""

import testtools
from testtools import content

from harness import errors
from harness import runner


class ScenarioTestCase(testtools.TestCase):
    """Runs scenarios; a failure carries the diff and timeline as details.

    stestr and subunit carry testtools details, so the gate shows the
    timeline with the failure.
    """

    def run_scenario(self, scenario, **kwargs):
        try:
            timeline = runner.run(scenario, test_id=self.id(), **kwargs)
        except errors.ScenarioFailed as exc:
            if exc.timeline is not None:
                self.addDetail('timeline', content.text_content(
                    exc.timeline.render()))
            if exc.diff:
                self.addDetail('diff', content.text_content(exc.diff))
            raise self.failureException(str(exc))
        return timeline
