"""The loader refused a scenario with one error naming the file and field."""

from harness.core import errors


def refused(case, path, field, fragments, load, *args):
    """Assert ``load(*args)`` raises that error; return its message.

    The message names ``path`` and ``field`` and holds each of
    ``fragments`` (the loader tests' common check).
    """
    exc = case.assertRaises(errors.ScenarioError, load, *args)
    message = str(exc)
    case.assertIn(path, message)
    case.assertIn('field "%s"' % field, message)
    for fragment in fragments:
        case.assertIn(fragment, message)
    return message
