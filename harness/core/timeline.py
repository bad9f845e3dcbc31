"""The timeline: one snapshot after every step, and how to show it.

Reports show allocations per consumer and pinned CPUs per host, one row a
step, so a reader sees where accounting moved and where it went wrong.
"""

import dataclasses

from harness.core import concurrency as concurrency_mod
from harness.core import snapshot as snapshot_mod

SHORT = {'MEMORY_MB': 'MEM', 'DISK_GB': 'DISK'}


@dataclasses.dataclass
class Entry(object):
    index: int
    label: str
    snapshot: snapshot_mod.Snapshot
    # What went wrong at this step (expectations, invariants), if anything:
    # harness.core.problems.Problem records.
    problems: list = dataclasses.field(default_factory=list)
    # The race points the step passed, in order.
    passages: list = dataclasses.field(default_factory=list)


class Timeline(object):

    def __init__(self, concurrency=None):
        self.entries = []
        # The mode Nova ran in (threading or eventlet): the process's, once
        # it runs Nova; None where nothing ran (a timeline read back).
        self.concurrency = concurrency or concurrency_mod.running_mode()

    def add(self, index, label, snap):
        entry = Entry(index, label, snap)
        self.entries.append(entry)
        return entry

    @property
    def failed(self):
        """The entries with problems."""
        return [entry for entry in self.entries if entry.problems]

    def __iter__(self):
        return iter(self.entries)

    def __len__(self):
        return len(self.entries)

    def render(self, title=None):
        rows = [['#', 'step', 'allocations', 'pinned CPUs']]
        for entry in self.entries:
            rows.append([str(entry.index), entry.label,
                         allocations_cell(entry.snapshot),
                         pinned_cell(entry.snapshot)])
        lines = [title] if title else []
        if self.concurrency:
            lines.append('Nova in %s mode' % self.concurrency)
        lines.extend(snapshot_mod.format_table(rows))
        return '\n'.join(lines)


def resources_short(resources):
    return ','.join('%s=%s' % (SHORT.get(rc, rc), resources[rc])
                    for rc in sorted(resources))


def allocations_cell(snap):
    parts = []
    for consumer in sorted(snap.allocations):
        for host, resources in sorted(snap.allocations[consumer].items()):
            parts.append('%s@%s %s' % (consumer, host,
                                       resources_short(resources)))
    return '; '.join(parts) or '-'


def pinned_cell(snap):
    parts = ['%s=[%s]' % (host, snapshot_mod.format_cpus(tracker.pinned_cpus))
             for host, tracker in sorted(snap.trackers.items())
             if tracker.cells]
    return ' '.join(parts) or '-'


def side_by_side(left, right, left_name, right_name):
    """Two timelines of the same steps, the first difference marked.

    Returns ``(text, index)`` where ``index`` is the position of the first
    step whose allocations or pinned CPUs differ, or ``None``.
    """
    lines = []
    first = None
    width = max(len(left_name), len(right_name))
    for position in range(max(len(left), len(right))):
        a = left.entries[position] if position < len(left) else None
        b = right.entries[position] if position < len(right) else None
        entry = a or b
        cells = []
        for e in (a, b):
            cells.append('(not reached)' if e is None else '%s | pinned %s'
                         % (allocations_cell(e.snapshot),
                            pinned_cell(e.snapshot)))
        differs = cells[0] != cells[1]
        marker = ''
        if differs and first is None:
            first = position
            marker = '   <== first divergence'
        lines.append('%d %s%s' % (entry.index, entry.label, marker))
        lines.append('  %s  %s' % (left_name.ljust(width), cells[0]))
        lines.append('  %s  %s' % (right_name.ljust(width), cells[1]))
    return '\n'.join(lines), first


def comparable(entry):
    """What a step left, in full, for comparing two runs of one scenario.

    Everything the snapshot holds but UUIDs (Nova makes new ones each
    run): providers with their generations, inventories and usages,
    allocations, every tracker's view with its cells, servers' status,
    host and task state, migrations' status and hosts; and the race
    points the step passed. Two runs that differ in any of it did not do
    the same thing.
    """
    snap = entry.snapshot
    return (
        entry.index, entry.label,
        sorted((rp.name, rp.generation, rp.parent, rp.root,
                repr(sorted(rp.inventories.items())),
                repr(sorted(rp.usages.items())))
               for rp in snap.providers.values()),
        repr(sorted((consumer, sorted(held.items()))
                    for consumer, held in snap.allocations.items())),
        sorted(repr(tracker) for tracker in snap.trackers.values()),
        sorted((s.name, s.status, s.host, s.task_state)
               for s in snap.servers.values()),
        sorted((m.consumer, m.server, m.status, m.source, m.dest, m.type)
               for m in snap.migrations.values()),
        [(p.when, p.point, p.host, p.server) for p in entry.passages])
