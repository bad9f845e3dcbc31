"""A failure's signature: what two runs of the same bug share.

Shrinking keeps a change to a failing scenario only if the run after it
still fails with the same signature (``harness.runners.shrinking``), so
that it cannot slip from one bug to another. Hypothesis guards its
shrinking the same way, with a failure's origin (the exception's type
and where it was raised); ours is the first problem of the first step
that failed:

- its check (the expectation key or invariant name; for a step that
  failed, ``step`` and the error's type: ``Problem.actual``);
- its subject, each name in it replaced by the role it plays in that
  run: the hosts of the last move up to that step as ``source`` and
  ``dest`` (from its migration record, as the race points resolve those
  roles), the server's own host before it as ``server_host``, any other
  host as ``other host``; the moved server as ``server`` (its migration
  as ``migration(server)``), any other as ``other server``; numbers
  (CPU IDs, NUMA cells) as ``N``. Resource classes and the tracker's
  keys stay: they are roles already;
- the kind of the step that failed.

So ``tracker_agrees`` on the source's ``vcpus_used`` at a resize is not
``tracker_agrees`` on the destination's, nor on the source's
``memory_mb_used``; while the same bug seen on another destination (the
scheduler chose another host once a step was dropped) is the same.
Nothing here imports Nova: it reads the scenario and the timeline.
"""

import collections
import re

from harness.core import problems as problems_mod
from harness.core import snapshot as snapshot_mod

SOURCE = 'source'
DEST = 'dest'
SERVER_HOST = 'server_host'
OTHER_HOST = 'other host'
SERVER = 'server'
OTHER_SERVER = 'other server'
NUMBER = 'N'
DEVICE = 'device'
UNNAMED = 'uuid'

Signature = collections.namedtuple('Signature', 'check subject step')

# A subject is names between separators: spaces, commas, brackets, '#'.
_SEPARATORS = re.compile(r'([\s,()#]+)')
_PCI_ADDRESS = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')
_UUID = re.compile(r'^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$')


def of(scenario, timeline):
    """The signature of the run's first failure (``Signature``), or None."""
    failed = timeline.failed
    if not failed:
        return None
    entry = failed[0]
    problem = entry.problems[0]
    kind = (scenario.steps[entry.index - 1].kind if entry.index
            else 'start')
    roles = Roles(scenario, timeline, entry.index)
    return Signature(check(problem), roles.subject(problem.subject), kind)


def check(problem):
    """The check part of a problem's signature."""
    if problem.check == problems_mod.STEP_FAILED and problem.actual:
        # Which error: a step refused is not a step that timed out.
        return '%s %s' % (problem.check, problem.actual)
    return problem.check


class Roles(object):
    """The role each host, node, provider and server plays in one run.

    Seen from its step ``index`` (1-based): the last step up to it that
    moves a server (``StepKind.moves``) is the move, else that step.
    """

    def __init__(self, scenario, timeline, index):
        entries = [e for e in timeline if e.index <= index]
        steps = scenario.steps[:index]
        move = next((step for step in reversed(steps) if step.unit.moves),
                    steps[-1] if steps else None)
        server = _server_of(move)
        self.names = {}
        migration = _migration(entries, server)
        if migration is not None:
            for host, role in ((migration.source, SOURCE),
                               (migration.dest, DEST)):
                if host is not None:
                    self.names.setdefault(host, role)
        home = _host_before(entries, server, move.index if move else 0)
        if home is not None:
            self.names.setdefault(home, SERVER_HOST)
        for host in scenario.hosts:
            self.names.setdefault(host, OTHER_HOST)
        self._providers(entries[-1].snapshot if entries else None)
        for name in _servers(scenario, entries):
            self.names.setdefault(name, SERVER if name == server
                                  else OTHER_SERVER)

    def _providers(self, snap):
        """Nodes and nested providers take their host's role."""
        if snap is None:
            return
        for node, tracker in snap.trackers.items():
            if node not in self.names and tracker.host in self.names:
                self.names[node] = '%s node' % self.names[tracker.host]
        for name, provider in snap.providers.items():
            root = provider.root
            if name in self.names or root not in self.names:
                continue
            # A child provider is named after its root (src_0000:81:00.0).
            rest = name[len(root):] if name.startswith(root) else ' child'
            self.names[name] = self.names[root] + rest

    def subject(self, text):
        """``text`` with each name in it replaced by its role."""
        return ''.join(self._role(part)
                       for part in _SEPARATORS.split(str(text)))

    def _role(self, part):
        if part in self.names:
            return self.names[part]
        if part.isdigit():
            return NUMBER
        if _PCI_ADDRESS.match(part):
            return DEVICE
        if _UUID.match(part):
            return UNNAMED
        return part


def _server_of(step):
    args = step.args if step is not None else None
    return args.get('server') if isinstance(args, dict) else None


def _migration(entries, server):
    """The server's latest migration, as the latest snapshot has it."""
    if server is None:
        return None
    consumer = snapshot_mod.MIGRATION % server
    for entry in reversed(entries):
        found = entry.snapshot.migrations.get(consumer)
        if found is not None:
            return found
    return None


def _host_before(entries, server, index):
    """The server's host before step ``index`` (or at it, if it is new)."""
    found = None
    for entry in entries:
        record = entry.snapshot.servers.get(server)
        if record is not None and record.host and (
                entry.index < index or found is None):
            found = record.host
    return found


def _servers(scenario, entries):
    names = set()
    for step in scenario.steps:
        name = _server_of(step)
        if isinstance(name, str):
            names.add(name)
    for entry in entries:
        names.update(entry.snapshot.servers)
    return sorted(names)
