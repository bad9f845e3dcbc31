"""``migrations``: the status of each named server's latest migration."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class Migrations(base.Expectation):
    """The status of each named server's latest migration.

    The status of the latest migration of each server named (one that
    has been moved so far: resized, migrated, evacuated...), as Nova's
    API lists it (``finished``, ``confirmed``, ``reverted``, ``error``,
    ...). Only the servers named are checked.
    """

    name = 'migrations'
    order = 60
    accounting = False
    summary = "The status of each named server's latest migration."
    shape = '{server: status}'
    example = 'migrations: {vm1: finished}'

    def parse(self, check, value, scenario, state):
        parsed = {}
        known = reading.known_servers(state) | state.moved
        for server, status in check.mapping(value, '').items():
            field = '%s' % (server,)
            check.known(server, known, field)
            if server not in state.moved:
                check.fail(field, '%s has not been moved so far' % server)
            parsed[server] = check.string(status, field)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            got = snap.migrations.get(snapshot_mod.MIGRATION % server)
            status = got.status if got else None
            if status != wanted:
                problems.append(Problem(
                    self.name, server, wanted, status,
                    'migration of %s: status expected %s, got %s'
                    % (server, wanted, status)))
        return problems


CHECK = Migrations()
