"""``servers``: each named server's status, host and node."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem

FIELDS = ('status', 'host', 'node')


class Servers(base.Expectation):
    """Where each named server is, and in which status.

    A status alone (``ACTIVE``), or any of ``status``, ``host`` and
    ``node`` (``instance.node``: its compute node, for a host with
    several). ``host: null`` says the server is on no host (shelved and
    offloaded). Only the servers and fields named are checked.
    """

    name = 'servers'
    order = 50
    accounting = False
    summary = 'Where each named server is and in which status.'
    shape = ('{server: STATUS | {status: STATUS, host: host | null, '
             'node: node}}')
    example = 'servers: {vm1: {status: VERIFY_RESIZE, host: dst}}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        known = reading.known_servers(state)
        for server, want in check.mapping(value, '').items():
            field = '%s' % (server,)
            check.known(server, known, field)
            if isinstance(want, str):
                want = {'status': want}
            check.mapping(want, field)
            check.keys(want, FIELDS, field=field)
            # host null: on no host (a shelved-offloaded server).
            if want.get('host') is not None:
                check.known(want['host'], scenario.hosts, field + '.host')
            if want.get('node') is not None:
                check.known(want['node'], reading.providers(scenario),
                            field + '.node')
            parsed[server] = dict(want)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            got = snap.servers.get(server)
            if got is None:
                problems.append(Problem(
                    self.name, server, wanted, None,
                    'server %s: expected %s, but it is gone' % (
                        server, ', '.join('%s %s' % (k, v) for k, v in
                                          sorted(wanted.items())))))
                continue
            for key in FIELDS:
                if key in wanted and wanted[key] != getattr(got, key):
                    problems.append(Problem(
                        self.name, '%s %s' % (server, key), wanted[key],
                        getattr(got, key), 'server %s: %s expected %s, got %s'
                        % (server, key, wanted[key], getattr(got, key))))
        return problems


CHECK = Servers()
