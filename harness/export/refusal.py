"""The one error of the exporter: what it cannot translate, by name."""

from harness.core import errors


class Refused(errors.ScenarioError):
    """A scenario the exporter will not translate, and why.

    Names the file, the scenario, the step (its number and kind) and the
    key, so the writer knows what to change or to leave to the harness.
    """

    def __init__(self, path, scenario, what, reason):
        super(Refused, self).__init__(
            '%s: scenario %r: %s: no faithful Nova translation: %s'
            % (path, scenario, what, reason))
