"""One scenario in both concurrency modes, compared step by step.

``harness run --concurrency both FILE`` runs every scenario of the files
once with Nova in native threading and once under eventlet, each mode in
a process of its own (one mode per process), and compares what each step
left. Nova runs different code in the two modes (executors sized by
config where eventlet had semaphores, real locks, other RPC executors),
so a difference in accounting is a finding about Nova, or about the
harness, either way worth a look:

- an *accounting* difference (a consumer's allocations, a provider's
  usage or inventory, a tracker's view, a server's status or host, a
  migration's status), or a verdict that differs (passes in one mode,
  fails in the other), fails the comparison, with both timelines side by
  side;
- other differences (provider generations, task states, the race points
  passed) are listed, not failed: the modes may legitimately take other
  paths to the same accounting.

Each mode's process writes what it saw (``record``) as JSON; this module
reads both and compares (``compare``). Nothing here imports Nova.
"""

import json

from harness.core import timeline as timeline_mod

#: What a step left that is accounting, and what is only how it got there.
MODES = ('threading', 'eventlet')
ACCOUNTING = ('allocations', 'providers', 'trackers', 'servers',
              'migrations')
OTHER = ('generations', 'task_states', 'passages')


def entry_record(entry):
    """What one timeline entry left, in JSON-able parts."""
    snap = entry.snapshot
    return {
        'index': entry.index,
        'label': entry.label,
        'cells': [timeline_mod.allocations_cell(snap),
                  timeline_mod.pinned_cell(snap)],
        'allocations': sorted(
            [consumer, host, sorted(resources.items())]
            for consumer, held in snap.allocations.items()
            for host, resources in held.items()),
        'providers': sorted(
            [rp.name, rp.parent, sorted(rp.usages.items()),
             sorted((rc, sorted(inv.items()))
                    for rc, inv in rp.inventories.items())]
            for rp in snap.providers.values()),
        'trackers': sorted(repr(tracker) for tracker
                           in snap.trackers.values()),
        'servers': sorted([s.name, s.status, s.host]
                          for s in snap.servers.values()),
        'migrations': sorted(
            [m.consumer, m.server, m.status, m.source, m.dest, m.type]
            for m in snap.migrations.values()),
        'generations': sorted([rp.name, rp.generation]
                              for rp in snap.providers.values()),
        'task_states': sorted([s.name, s.task_state]
                              for s in snap.servers.values()),
        'passages': [[p.when, p.point, p.host, p.server]
                     for p in entry.passages],
        'problems': [str(problem) for problem in entry.problems],
    }


def record(scenario, timeline, mode):
    """A scenario's run in ``mode``, as ``compare`` reads it."""
    return {'scenario': scenario.name, 'path': scenario.path,
            'mode': mode,
            'failed': [entry.index for entry in timeline.failed],
            'entries': [entry_record(entry) for entry in timeline]}


def write(records, path):
    with open(path, 'w', encoding='utf-8') as target:
        json.dump(records, target, indent=1, sort_keys=True)


def read(path):
    with open(path, encoding='utf-8') as source:
        return json.load(source)


class Difference(object):
    """One part of one step that differs between the modes."""

    def __init__(self, index, label, part, left, right):
        self.index = index
        self.label = label
        self.part = part
        self.left = left
        self.right = right

    @property
    def accounting(self):
        return self.part in ACCOUNTING or self.part == 'verdict'

    def __str__(self):
        return 'step %s (%s): %s differ' % (self.index, self.label,
                                            self.part)


def compare(left, right):
    """The differences between two records of one scenario, in order."""
    found = []
    if bool(left['failed']) != bool(right['failed']):
        found.append(Difference(
            (left['failed'] or right['failed'])[0], '', 'verdict',
            left['failed'], right['failed']))
    for a, b in zip(left['entries'], right['entries']):
        for part in ACCOUNTING + OTHER:
            if a[part] != b[part]:
                found.append(Difference(a['index'], a['label'], part,
                                        a[part], b[part]))
    if len(left['entries']) != len(right['entries']):
        shorter = min(len(left['entries']), len(right['entries']))
        found.append(Difference(shorter, '', 'steps run',
                                len(left['entries']),
                                len(right['entries'])))
    return found


def side_by_side(left, right):
    """Both records' timelines, step by step (the modes named)."""
    width = max(len(left['mode']), len(right['mode']))
    lines = []
    for position in range(max(len(left['entries']),
                              len(right['entries']))):
        rows = [record_['entries'][position]
                if position < len(record_['entries']) else None
                for record_ in (left, right)]
        entry = rows[0] or rows[1]
        lines.append('%d %s' % (entry['index'], entry['label']))
        for record_, row in zip((left, right), rows):
            lines.append('  %s  %s' % (
                record_['mode'].ljust(width),
                '(not reached)' if row is None else
                '%s | pinned %s' % tuple(row['cells'])))
    return '\n'.join(lines)


def report(left_records, right_records, say):
    """Say, scenario by scenario, how the modes compare; whether alike.

    Alike: no accounting difference and the same verdict in every
    scenario. ``say`` takes one line at a time.
    """
    alike = True
    right_by = {(r['path'], r['scenario']): r for r in right_records}
    for left in left_records:
        right = right_by.pop((left['path'], left['scenario']), None)
        if right is None:
            say('%s: ran in %s mode only' % (left['scenario'],
                                             left['mode']))
            alike = False
            continue
        found = compare(left, right)
        accounting = [d for d in found if d.accounting]
        if not found:
            say('same in both modes: %s' % left['scenario'])
            continue
        if not accounting:
            say('same accounting in both modes: %s (other differences: '
                '%s)' % (left['scenario'], '; '.join(map(str, found))))
            continue
        alike = False
        say('MODE DIFFERENCE in %s: %s' % (
            left['scenario'], '; '.join(map(str, accounting))))
        say(side_by_side(left, right))
    for right in right_by.values():
        say('%s: ran in %s mode only' % (right['scenario'], right['mode']))
        alike = False
    return alike
