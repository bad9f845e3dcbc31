"""Errors the harness raises on its own account.

Each one carries a message written for the person running the test: what
went wrong and where, never a traceback from inside Nova.
"""


class HarnessError(Exception):
    """Base of every error the harness raises itself."""


class SetupError(HarnessError):
    """The environment cannot stand up (e.g. an install file is missing)."""


class UnknownName(HarnessError):
    """A server, host, flavor or task name the cloud does not know."""


class InjectionFailed(HarnessError):
    """An action injected at a race point could not run."""


class OperationFailed(HarnessError):
    """A server operation did not reach its resting state.

    The message gives the server's state, the migration's status and the
    instance-action events, as a developer would look them up by hand.
    """


class OperationTimeout(OperationFailed):
    """A server operation was still busy when its bounded wait ran out."""


class ProfileError(HarnessError):
    """A host profile is unknown or does not describe a possible host.

    The message names the profile file and the field, and is raised before
    any service starts.
    """


class ScenarioError(HarnessError):
    """A scenario file is malformed; raised before any service starts.

    The message names the file, the step and the field.
    """


class ScenarioFailed(HarnessError):
    """A scenario's expectation (or an invariant) did not hold.

    ``step`` is the step that failed, ``diff`` the readable difference,
    ``problems`` what was found (``harness.core.problems.Problem``
    records) and ``timeline`` the snapshots so far.
    """

    def __init__(self, message, step=None, diff='', timeline=None,
                 problems=()):
        super().__init__(message)
        self.step = step
        self.diff = diff
        self.timeline = timeline
        self.problems = list(problems)


def show(value, limit=60):
    """A piece of untrusted input, safe and short, for an error message.

    Never formats a whole structure (an alias bomb expands without end)
    nor a huge number (Python refuses to print one).
    """
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < 10 ** 18 else 'a very large number'
    if isinstance(value, str):
        text = repr(value[:limit])
        return text if len(value) <= limit else text[:-1] + "...'"
    kinds = {dict: 'a mapping', list: 'a list'}
    return kinds.get(type(value), type(value).__name__)
