"""``hypervisors``: the hypervisor list as Nova's API shows it."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem

STATES = ('up', 'down')
STATUSES = ('enabled', 'disabled')


class Hypervisors(base.Expectation):
    """The hypervisor list, exactly, as ``GET /os-hypervisors`` shows it.

    Every hypervisor listed (a compute node whose record is not deleted,
    by ``hypervisor_hostname``) and, per hypervisor, its ``state`` (``up``
    or ``down``: its compute service as the service group sees it) and
    ``status`` (``enabled`` or ``disabled``: its service's), where named;
    ``{}`` checks only that it is listed. A hypervisor not named must not
    be listed.
    """

    name = 'hypervisors'
    order = 91
    accounting = False
    summary = 'The hypervisor list as the API shows it: names, state, status.'
    shape = '{node: {} | {state: up | down, status: enabled | disabled}}'
    example = 'hypervisors: {src: {state: up, status: enabled}, dst: {}}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        for node, want in reading.by_provider(check, value, scenario):
            want = {} if want is None else want
            check.mapping(want, node)
            check.keys(want, ('state', 'status'), field=node)
            for key, allowed in (('state', STATES), ('status', STATUSES)):
                if key in want and want[key] not in allowed:
                    check.fail('%s.%s' % (node, key), 'expected one of %s, '
                               'got %r' % (', '.join(allowed), want[key]))
            parsed[node] = dict(want)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        listed = snap.hypervisors
        for node in sorted(set(want) | set(listed)):
            if node not in listed:
                problems.append(Problem(
                    self.name, node, want[node], None,
                    'hypervisor %s: expected in the list, not listed '
                    '(listed: %s)' % (node, ', '.join(sorted(listed))
                                      or 'none')))
                continue
            if node not in want:
                problems.append(Problem(
                    self.name, node, None, listed[node].state,
                    'hypervisor %s: listed (%s, %s), expected not' % (
                        node, listed[node].state, listed[node].status)))
                continue
            wrong = ['%s expected %s, got %s' % (
                key, want[node][key], getattr(listed[node], key))
                for key in ('state', 'status')
                if key in want[node]
                and want[node][key] != getattr(listed[node], key)]
            if wrong:
                problems.append(Problem(
                    self.name, node, want[node], {
                        'state': listed[node].state,
                        'status': listed[node].status},
                    'hypervisor %s: %s' % (node, ', '.join(wrong))))
        return problems


CHECK = Hypervisors()
