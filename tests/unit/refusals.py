"""The loader refused a scenario with one error naming the file and field."""

from harness.core import errors
from harness.core import scenario
from harness import testing


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


def fake_hosts_head(name, *hosts):
    """A scenario's head: ``hosts`` on the fake driver, a ``small`` flavor.

    Its ``steps:`` come next (a test's own).
    """
    return 'name: %s\nhosts:\n%sflavors:\n  small: {vcpus: 1, ram: 512, ' \
        'disk: 1}\nsteps:\n' % (name, ''.join(
            '  %s: {driver: fake}\n' % host for host in hosts))


class StepLoaderCase(testing.TestCase):
    """Loader tests of scenarios made of ``HEAD`` and a test's own steps."""

    PATH = None
    HEAD = None

    def load(self, body):
        return scenario.load_file(self.PATH, self.HEAD + body)[1][0]

    def refused(self, body, field, *fragments):
        return refused(self, self.PATH, field, fragments, self.load, body)
