"""``fault``: why Nova failed a server, as its instance fault says."""

import fnmatch

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem

FIELDS = ('message', 'code', 'exception', 'host')


def exception_matches(pattern, exception):
    """Whether ``exception`` (``module.Class``) is what ``pattern`` names.

    The class alone (``NoValidHost``) or with its module
    (``nova.exception.NoValidHost``); ``*`` and ``?`` as in a shell.
    """
    if exception is None:
        return False
    return (fnmatch.fnmatchcase(exception, pattern)
            or fnmatch.fnmatchcase(exception.rsplit('.', 1)[-1], pattern))


def text_matches(pattern, text):
    """Whether ``text`` is what the shell pattern ``pattern`` says."""
    return text is not None and fnmatch.fnmatchcase(text, pattern)


class FaultKey(base.Expectation):
    """The latest instance fault of each named server, or none.

    What Nova recorded when it failed an operation on the server
    (``nova.compute.utils.add_instance_fault_from_exc``; the API shows it
    as the server's ``fault`` while the server is in ERROR): its
    ``message`` (a shell pattern: ``No valid host*``), its ``code`` (500
    unless the exception says another), the ``exception`` class its
    traceback ends with (``NoValidHost`` or
    ``nova.exception.NoValidHost``; Nova keeps a traceback for code 500
    only) and the ``host`` it was recorded on. ``null``: the server has
    no fault. Only the servers and fields named are checked; a server
    that failed an operation and came back (a failed migration) keeps
    its fault.
    """

    name = 'fault'
    order = 64
    accounting = False
    summary = "Each named server's latest instance fault, or none."
    shape = ('{server: null | {message: PATTERN, code: CODE, '
             'exception: CLASS, host: host}}')
    example = 'fault: {vm1: null}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        for server, want in reading.by_server(check, value, state):
            field = '%s' % (server,)
            if want is None:
                parsed[server] = None
                continue
            check.mapping(want, field)
            check.keys(want, FIELDS, field=field)
            if not want:
                check.fail(field, 'name at least one of: %s (null: no '
                           'fault)' % ', '.join(FIELDS))
            for key in ('message', 'exception'):
                if key in want:
                    check.string(want[key], reading.sub(field, key))
            if 'code' in want:
                check.integer(want['code'], field + '.code', minimum=100,
                              maximum=599)
            if 'host' in want:
                check.known(want['host'], scenario.hosts, field + '.host')
            parsed[server] = dict(want)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            got = snap.faults.get(server)
            if wanted is None or got is None:
                if (wanted is None) != (got is None):
                    problems.append(Problem(
                        self.name, server, wanted, got,
                        'fault of %s: expected %s, got %s' % (
                            server, describe(wanted), describe(got))))
                continue
            wrong = [key for key in FIELDS
                     if key in wanted and not _holds(key, wanted[key], got)]
            if wrong:
                problems.append(Problem(
                    self.name, server, wanted, got,
                    'fault of %s: %s differ%s; expected %s, got %s' % (
                        server, ', '.join(wrong),
                        's' if len(wrong) == 1 else '', describe(wanted),
                        describe(got))))
        return problems


def _holds(key, wanted, got):
    if key == 'message':
        return text_matches(wanted, got.message)
    if key == 'exception':
        return exception_matches(wanted, got.exception)
    return getattr(got, key) == wanted


def describe(fault):
    """A fault (wanted: a mapping; found: a ``Fault``) as one phrase."""
    if fault is None:
        return 'no fault'
    if not isinstance(fault, dict):
        fault = {key: getattr(fault, key) for key in FIELDS}
    return ', '.join('%s %r' % (key, fault[key]) for key in FIELDS
                     if key in fault)


CHECK = FaultKey()
