"""``action_events``: what Nova's instance actions say of each step."""

from harness.core.checks import base
from harness.core.checks.expect import fault as fault_key
from harness.core.checks import reading
from harness.core import errors
from harness.core.problems import Problem

FIELDS = ('action', 'event', 'result', 'details', 'host')
#: The results Nova gives an event that finished
#: (``InstanceActionEvent.pack_action_event_finish``); an event still
#: running has none.
RESULTS = ('Success', 'Error')


class ActionEvents(base.Expectation):
    """Events of each named server's instance actions, as an admin sees them.

    Each entry must match one event (``os-instance-actions``,
    microversion 2.84): ``action`` (``create``, ``resize``, ``migrate``...:
    the latest action of that name, else any action), ``event`` (Nova's
    name for the method: ``conductor_schedule_and_build_instances``,
    ``compute_prep_resize``...), ``result`` (``Success`` or ``Error``),
    ``details`` (a shell pattern: for an event that failed, the
    exception's message, or its class name for an exception that is not
    Nova's: ``nova.compute.utils.exception_to_dict``) and ``host``. One
    entry or a list; only the servers named are checked.
    """

    name = 'action_events'
    order = 65
    accounting = False
    summary = "Events of each named server's instance actions."
    shape = ('{server: EVENT | [EVENT]}; EVENT: {action: ACTION, '
             'event: NAME, result: Success | Error, details: PATTERN, '
             'host: host}')
    example = ('action_events: {vm1: {action: resize, '
               'event: compute_prep_resize, result: Success, host: dst}}')

    def parse(self, check, value, scenario, state):
        parsed = {}
        for server, wants in reading.by_server(check, value, state):
            field = '%s' % (server,)
            listed = isinstance(wants, list)
            wants = check.sequence(wants, field) if listed else [wants]
            if not wants:
                check.fail(field, 'list at least one event')
            parsed[server] = [
                self._event(check, want, '%s.%d' % (field, number)
                            if listed else field, scenario)
                for number, want in enumerate(wants, 1)]
        return parsed

    @staticmethod
    def _event(check, want, field, scenario):
        check.mapping(want, field)
        check.keys(want, FIELDS, field=field)
        if not want:
            check.fail(field, 'name at least one of: %s' % ', '.join(FIELDS))
        for key in ('action', 'event', 'details'):
            if key in want:
                check.string(want[key], '%s.%s' % (field, key))
        if 'result' in want and want['result'] not in RESULTS:
            check.fail(field + '.result', 'expected one of %s, got %s' % (
                ', '.join(RESULTS), errors.show(want['result'])))
        if 'host' in want:
            check.known(want['host'], scenario.hosts, field + '.host')
        return dict(want)

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            actions = snap.actions.get(server, ())
            for entry in wanted:
                if not any(_matches(entry, event)
                           for event in _candidates(entry, actions)):
                    problems.append(Problem(
                        self.name, server, entry, _listing(actions),
                        '%s: no event %s; its actions: %s' % (
                            server, _describe(entry),
                            _listing(actions) or 'none')))
        return problems


def _candidates(entry, actions):
    """The events an entry may match: the latest action of its name."""
    if 'action' in entry:
        named = [a for a in actions if a.action == entry['action']]
        actions = named[-1:]
    return [event for action in actions for event in action.events]


def _matches(entry, event):
    for key in ('event', 'result', 'host'):
        if key in entry and getattr(event, key) != entry[key]:
            return False
    return ('details' not in entry
            or fault_key.text_matches(entry['details'], event.details))


def _describe(entry):
    return ', '.join('%s %r' % (key, entry[key]) for key in FIELDS
                     if key in entry)


def _listing(actions):
    """Actions and their events, oldest first, as one line."""
    return '; '.join('%s: %s' % (action.action, ', '.join(
        '%s %s%s' % (event.event, event.result,
                     ' %r' % event.details if event.details else '')
        for event in action.events) or 'no events') for action in actions)


CHECK = ActionEvents()
