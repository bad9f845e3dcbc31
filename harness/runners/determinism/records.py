"""A run as data: its verdict, timelines and race points, digests, texts.

What the tool compares between runs of one test: the verdict (volatile
parts normalised), and a record of the timelines and one of the race
points, each as JSON-ready data and a digest of it. The texts of a
record (one line a field) show where two runs first differ.
"""

import dataclasses
import hashlib
import json
import os
import re

from harness.runners import determinism

# Lines of context around the first divergence of two records.
CONTEXT = 3
# Bump when ``timeline_record`` or ``points_record`` changes what they
# hold: digests of different records are not comparable.
RECORD_FORMAT = 2


# -- normalising verdicts ------------------------------------------------

VOLATILE = (
    (re.compile(r'\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                r'[0-9a-f]{12}\b', re.I), '<uuid>'),
    (re.compile(r'\breq-<uuid>'), '<request>'),
    (re.compile(r'\b0x[0-9a-f]{4,}\b', re.I), '<address>'),
    (re.compile(r'\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?'
                r'(Z|[+-]\d\d:?\d\d)?'), '<timestamp>'),
    (re.compile(r'/tmp/[A-Za-z0-9_.-]+'), '<tmp>'),
    (re.compile(r'\bpid[ =:]+\d+\b'), 'pid <pid>'),
    (re.compile(r'\bident \d+\b'), 'ident <ident>'),
    (re.compile(r'\b\d+\.\d+ ?(s|seconds|ms)\b'), '<duration>'),
)


def normalise(text):
    """``text`` with its volatile parts replaced by placeholders."""
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def exception_message(traceback_text):
    """The exception part of a formatted traceback (type and message).

    The frames are left out: the message is what a test reports; for a
    chained exception it is the last one's.
    """
    lines = traceback_text.rstrip('\n').split('\n')
    start = 0
    for number, line in enumerate(lines):
        if line.startswith('Traceback (most recent call last)'):
            start = number + 1
    for number in range(start, len(lines)):
        line = lines[number]
        if line and not line.startswith(' '):
            return '\n'.join(lines[number:]).strip()
    return traceback_text.strip()


def verdict(outcome, message=''):
    """A run's verdict as one string, volatile parts normalised."""
    if not message:
        return outcome
    return '%s: %s' % (outcome, normalise(message))


# -- what a run went through, as data --------------------------------------

# Fields no record keeps: Placement's and Nova's UUIDs are new in every run
# (the names a test gave stand for them), and a passage's migration is a
# Nova object whose IDs are too (its hosts are the passage's own fields).
LEFT_OUT = frozenset(('uuid', 'migration'))
# What a snapshot holds (``harness.core.snapshot.Snapshot``); named, so
# that a cache a reader might hang on a snapshot is not compared.
SNAPSHOT_PARTS = ('label', 'providers', 'allocations', 'trackers',
                  'servers', 'migrations')


def plain(value):
    """``value`` as JSON-ready data: dataclasses as dicts of their fields.

    Every field but those in ``LEFT_OUT``; dict keys as strings, tuples as
    lists, sets sorted. Anything else is its ``str``: nothing is rendered
    that a field could say instead.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name))
                for field in dataclasses.fields(value)
                if field.name not in LEFT_OUT}
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(item) for item in value), key=repr)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def snapshot_record(snap):
    """A ``Snapshot`` as data: all of it, every field but the UUIDs."""
    return {part: plain(getattr(snap, part, None))
            for part in SNAPSHOT_PARTS}


@dataclasses.dataclass
class Watched(object):
    """One scenario run a test made, as the hooks told it.

    ``entries`` are the ``timeline.Entry`` objects themselves, turned into
    data only when the test is over: the runner adds problems to an entry
    after announcing it (an injection that never fired).
    """
    scenario: str = None
    path: str = None
    entries: list = dataclasses.field(default_factory=list)
    # Whether run_done came (a step that raised ends a run without it).
    ended: bool = False
    # The step started and not done, when the run stopped in it.
    unfinished: tuple = None


class Watcher(object):
    """The observer one test run is watched with (see ``hooks``).

    Each event keeps a reference and nothing more: observers only read,
    and a passage's deferral is filled in after it was announced. The
    records are made from what was kept once the test is over.
    """

    def __init__(self):
        self.runs = []
        # One list of passages per cloud stood up, in order.
        self.recordings = []

    def cloud_started(self, cloud):
        self.recordings.append([])

    def run_started(self, scenario, cloud):
        self.runs.append(Watched(getattr(scenario, 'id', None),
                                 getattr(scenario, 'path', None)))

    def step_started(self, step):
        self._current().unfinished = (step.index, step.label)

    def point_passed(self, passage):
        if not self.recordings:
            # A cloud stood up before the watch began (one kept between
            # runs): its points count all the same.
            self.recordings.append([])
        self.recordings[-1].append(passage)

    def step_done(self, step, entry):
        run = self._current()
        run.entries.append(entry)
        run.unfinished = None

    def run_done(self, scenario, timeline):
        run = self._current()
        # The whole timeline: the start entry too, which is no step.
        run.entries = list(timeline)
        run.ended = True
        run.unfinished = None

    def _current(self):
        if not self.runs:
            self.runs.append(Watched())
        return self.runs[-1]

    def scenarios(self):
        """``[id, path]`` of each scenario run, path relative to ROOT."""
        return [[run.scenario, os.path.relpath(run.path, determinism.ROOT)
                 if run.path else None]
                for run in self.runs if run.scenario]


def _watched(timelines):
    """``Watched`` runs from runs or ``Timeline`` objects (a test's own)."""
    return [t if isinstance(t, Watched) else
            Watched(entries=list(t), ended=True) for t in timelines]


def timeline_record(timelines):
    """The timelines a run made, as data; its digest is compared.

    ``timelines``: ``Watched`` runs or ``harness.core.timeline.Timeline``
    objects. Per run, its scenario and whether it ended; per entry, the
    step, the whole snapshot and the problem records (their fields; a
    problem given as text is its text).
    """
    return [{'scenario': run.scenario, 'ended': run.ended,
             'unfinished': plain(run.unfinished),
             'steps': [{'step': entry.index, 'label': entry.label,
                        'snapshot': snapshot_record(entry.snapshot),
                        'problems': plain(list(entry.problems))}
                       for entry in run.entries]}
            for run in _watched(timelines)]


def points_record(timelines, recordings=()):
    """The race points a run passed, as data; its digest is compared.

    Per run, per step, the passages the step recorded; then every
    passage of each cloud the run stood up, with all their fields (Nova's
    write count when passed, a deferred periodic's place and runs, the
    roles noted).
    """
    return {'timelines': [
        {'scenario': run.scenario,
         'steps': [{'step': entry.index, 'label': entry.label,
                    'passages': plain(list(entry.passages))}
                   for entry in run.entries]}
        for run in _watched(timelines)],
        'recordings': [plain(list(recording)) for recording in recordings]}


def digest(record):
    """A short digest of ``record`` as canonical JSON (keys sorted)."""
    text = json.dumps(record, sort_keys=True, separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]


def leaf_lines(value, path=''):
    """``value`` as ``path = JSON`` lines, one a field, keys sorted.

    A list of plain values stays on one line (pinned CPUs, a cell's
    CPUs); a list of records is numbered.
    """
    if isinstance(value, dict) and value:
        lines = []
        for key in sorted(value):
            lines.extend(leaf_lines(value[key], '%s.%s' % (path, key)
                                    if path else key))
        return lines
    if isinstance(value, list) and any(isinstance(item, (dict, list))
                                       for item in value):
        lines = []
        for number, item in enumerate(value):
            lines.extend(leaf_lines(item, '%s[%d]' % (path, number)))
        return lines
    return ['%s = %s' % (path, json.dumps(value, sort_keys=True))]


def timeline_text(timelines):
    """``timeline_record`` as lines a person reads, headed per step.

    Shown where two runs differ and written by ``--dump``; made from the
    record, so it differs exactly where the record does.
    """
    return record_text('timeline', timeline_record(timelines))


def points_text(timelines, recordings=()):
    """``points_record`` as lines, one a passage (see ``timeline_text``)."""
    return record_text('points', points_record(timelines, recordings))


def record_text(kind, record):
    """The lines of a ``timeline`` or ``points`` record."""
    out = []
    runs = record if kind == 'timeline' else record['timelines']
    for number, run in enumerate(runs, 1):
        out.append('== timeline %d: %s%s' % (
            number, run['scenario'] or '(no scenario)',
            '' if kind == 'points' or run['ended'] else ' (did not end%s)'
            % (', in step %s: %s' % tuple(run['unfinished'])
               if run['unfinished'] else '')))
        for step in run['steps']:
            out.append('-- step %s: %s' % (step['step'], step['label']))
            if kind == 'points':
                out.extend(_passage_line(p) for p in step['passages'])
            else:
                out.extend(leaf_lines(step['snapshot'], 'snapshot'))
                out.extend(leaf_lines(step['problems'], 'problems'))
    if kind == 'points':
        for number, recording in enumerate(record['recordings'], 1):
            out.append('== race recording %d: %d points'
                       % (number, len(recording)))
            out.extend(_passage_line(p) for p in recording)
    return '\n'.join(out)


def _passage_line(passage):
    # In the dataclass's field order (point, when, host, server, ...).
    return json.dumps(passage)


# -- where two texts differ -------------------------------------------------

def first_divergence(left, right, context=CONTEXT):
    """Where two texts first differ: ``(line number, lines)`` or None.

    ``lines`` shows ``context`` lines either side of the first differing
    line of each, prefixed ``a`` and ``b``; the line number is 1-based.
    """
    a, b = left.split('\n'), right.split('\n')
    for number in range(max(len(a), len(b))):
        one = a[number] if number < len(a) else None
        two = b[number] if number < len(b) else None
        if one != two:
            break
    else:
        return None
    start = max(0, number - context)
    shown = []
    for prefix, lines in (('a', a), ('b', b)):
        for index in range(start, min(len(lines), number + context + 1)):
            mark = '>' if index == number else ' '
            shown.append('%s%s %4d  %s' % (prefix, mark, index + 1,
                                           lines[index]))
        if number >= len(lines):
            shown.append('%s> %4d  (ends)' % (prefix, number + 1))
    return number + 1, shown


def headings(text, number):
    """The ``==`` and ``--`` headings line ``number`` (1-based) is under.

    Context lines may not reach them; they say which timeline and step a
    differing field belongs to.
    """
    found = []
    for line in reversed(text.split('\n')[:number - 1]):
        if line.startswith('-- ') and not found:
            found.append(line[3:])
        elif line.startswith('== '):
            found.insert(0, line[3:])
            break
    return found
