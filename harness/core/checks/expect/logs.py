"""``logs``: Nova's log records of the step, per service."""

import logging
import re

from harness.core.checks import base
from harness.core import errors
from harness.core.problems import Problem

#: The levels a record may be asked for at (that level and up).
LEVELS = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')
#: The services that log, as ``harness.runners.nova_logs`` tells them
#: apart, and the short names they may be given.
SERVICES = ('nova-api', 'nova-conductor', 'nova-scheduler', 'placement')
ALIASES = {'api': 'nova-api', 'conductor': 'nova-conductor',
           'scheduler': 'nova-scheduler'}
#: Every compute's records; ``nova-compute on <host>``: one host's.
COMPUTES = 'nova-compute'
#: Records no service is seen logging (shared code), and every record.
OTHER = 'other'
ANY = 'any'
MODES = ('absent', 'present')
FIELDS = ('level', 'pattern')


def compute(host):
    """The service name of ``host``'s compute."""
    return '%s on %s' % (COMPUTES, host)


def service_names(scenario):
    """What a ``logs:`` key may name in ``scenario``."""
    return (set(SERVICES) | set(ALIASES) | {COMPUTES, OTHER, ANY}
            | {compute(host) for host in scenario.hosts})


def covers(name, service):
    """Whether the records of ``service`` are among those ``name`` says."""
    name = ALIASES.get(name, name)
    return (name == ANY or name == service
            or name == COMPUTES and service.startswith(COMPUTES + ' on '))


def level_wanted(scenario):
    """The lowest level any step's ``logs:`` asks for, or None.

    What a run captures (``harness.runners.nova_logs.StepLogs``): no
    ``logs:`` key, no capture.
    """
    levels = [matcher['level'] for step in scenario.steps
              for modes in (step.expect or {}).get('logs', {}).values()
              for matchers in modes.values() for matcher in matchers]
    return min(levels) if levels else None


class Logs(base.Expectation):
    """Nova's log records during the step, per service: absent or present.

    Each key names a service: ``scheduler``, ``conductor``, ``api`` (or
    ``nova-scheduler``...), ``placement``, ``nova-compute on <host>``,
    ``nova-compute`` (every compute), ``other`` (shared code no service
    is seen running) or ``any``; which service logged a record is told
    as the log file tells it (``harness.runners.nova_logs``). Under it,
    ``absent``: no record matches; ``present``: at least one does (each
    one matcher or a list). A matcher says a ``level`` (that level and
    up: ``ERROR`` takes ``CRITICAL`` too) and, optionally, a ``pattern``
    (a Python regular expression searched in the record's message).
    The records are those logged while the step ran, up to its
    snapshot: not the checks' own periodics after the step before.
    """

    name = 'logs'
    order = 66
    accounting = False
    summary = "Nova's log records during the step, per service."
    shape = ('{service: {absent: MATCH | [MATCH], present: MATCH | '
             '[MATCH]}}; MATCH: {level: LEVEL, pattern: REGEX}')
    example = ('logs: {scheduler: {absent: {level: ERROR}}, '
               '"nova-compute on dst": {absent: {level: WARNING, '
               'pattern: "Instance .* not found"}}}')

    def parse(self, check, value, scenario, state):
        parsed = {}
        known = service_names(scenario)
        for service, modes in check.mapping(value, '').items():
            field = '%s' % (service,)
            check.known(service, known, field, noun='service')
            check.mapping(modes, field)
            check.keys(modes, MODES, field=field)
            if not modes:
                check.fail(field, 'say absent, present or both')
            parsed[service] = {
                mode: self._matchers(check, modes[mode],
                                     '%s.%s' % (field, mode))
                for mode in MODES if mode in modes}
        return parsed

    @staticmethod
    def _matchers(check, value, field):
        listed = isinstance(value, list)
        values = check.sequence(value, field) if listed else [value]
        if not values:
            check.fail(field, 'list at least one matcher')
        matchers = []
        for number, matcher in enumerate(values, 1):
            where = '%s.%d' % (field, number) if listed else field
            check.mapping(matcher, where)
            check.keys(matcher, FIELDS, required=('level',), field=where)
            level = matcher['level']
            if level not in LEVELS:
                check.fail(where + '.level', 'unknown level %s; known: %s'
                           % (errors.show(level), ', '.join(LEVELS)))
            parsed = {'level': logging.getLevelName(level)}
            if 'pattern' in matcher:
                pattern = check.string(matcher['pattern'],
                                       where + '.pattern')
                try:
                    re.compile(pattern)
                except re.error as exc:
                    check.fail(where + '.pattern', 'not a regular '
                               'expression: %s' % exc)
                parsed['pattern'] = pattern
            matchers.append(parsed)
        return matchers

    def check(self, want, snap, scenario):
        if snap.logs is None:
            return [Problem(self.name, 'records', 'captured', None,
                            "logs: Nova's log records of the step were not "
                            "captured (the run was not given a StepLogs)")]
        problems = []
        for service, modes in sorted(want.items()):
            records = [r for r in snap.logs if covers(service, r.service)]
            for mode, matchers in sorted(modes.items()):
                for matcher in matchers:
                    found = [r for r in records if _matches(matcher, r)]
                    if (mode == 'absent') == (not found):
                        continue
                    subject = '%s %s %s' % (service, mode, _describe(matcher))
                    problems.append(Problem(
                        self.name, subject, mode,
                        [_line(r) for r in found],
                        'logs of %s: expected %s, found %s' % (
                            service, ('no record ' if mode == 'absent'
                                      else 'a record ') + _describe(matcher),
                            '; '.join(_line(r) for r in found[:3])
                            + (' (and %d more)' % (len(found) - 3)
                               if len(found) > 3 else '')
                            if found else 'none')))
        return problems


def _matches(matcher, record):
    return record.level >= matcher['level'] and (
        'pattern' not in matcher
        or re.search(matcher['pattern'], record.message) is not None)


def _describe(matcher):
    text = 'at %s or above' % logging.getLevelName(matcher['level'])
    if 'pattern' in matcher:
        text += ' matching %r' % matcher['pattern']
    return text


def _line(record):
    return '%s %s [%s] %s' % (record.service,
                              logging.getLevelName(record.level),
                              record.logger, record.message.splitlines()[0]
                              if record.message else '')


CHECK = Logs()
