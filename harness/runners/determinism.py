"""Determinism: every scenario and regression test, run N times, compared.

    harness determinism [--runs 50] [--busy K] [--workers 2]
                        [--select REGEX] [--json OUT] [--dump DIR]
                        [--resume REPORT] [--timeout S]
                        [--hash-seeds S1,S2,...]

What it runs is what the functional suite runs: the tests unittest's
loader finds in ``tests.functional.test_scenarios`` (one per scenario
file's scenario) and under ``tests/regressions`` (``test_*.py``), each
listed by its test ID. Each run is the test itself, loaded by its ID and
run by unittest, so a scenario runs with its test class's settings
(``periodic_idempotence``, ``invariants``, expected breaks, a bug put
back, any set-up the class adds) without this tool repeating them.

It watches a run through the harness's observer hooks
(``harness.core.hooks.observing``): the clouds it stands up, the scenarios
it runs, every step's timeline entry (snapshot and problems) and every
race point passed. Nothing of the harness is patched, and no test source
is read: what a test runs is what the hooks say it ran.

Per run it records:

- the verdict: ``pass``, ``skip: REASON`` or ``fail``/``error`` with the
  exception's message, its volatile parts (UUIDs, addresses, temporary
  paths, wall-clock times) normalised;
- a digest of its timelines, as data (``timeline_record``): per scenario
  run, per step, the whole snapshot (providers with inventories, usages and
  generations; allocations; trackers with their NUMA cells; servers;
  migrations) and the problem records, every field but the UUIDs;
- a digest of its race points (``points_record``): the passages each step
  recorded and the passages of every cloud the test stood up (a test that
  drives a cloud without the runner has only these), each with all its
  fields (point, when, host, server, Nova's write count, deferral, roles);
- the scenarios it ran (to name scenario files no test ran);
- the hash seed its process had (``PYTHONHASHSEED``, see below).

Runs go round-robin (first run of every test, then the second...) to
``--workers`` spawned processes, each of which runs many. ``--busy K``
keeps K more processes burning CPU while it runs. A test is flaky when
its runs give more than one verdict, timeline or race-point digest; for
each, the first lines where two runs differ are printed (``--dump DIR``
writes every distinct record of a flaky test in full, one line a field).

A run in a worker with no result after ``--timeout`` seconds is recorded
as hung (verdict ``hang``; every greenthread's stack written to a file
named in the output) and the remaining runs go on in fresh workers.

A long check can be done in parts. SIGINT or SIGTERM stops it and still
reports (and writes ``--json``) the runs done so far; ``--resume REPORT``
then takes that report's runs as done and runs only the rest, and its
report covers them all. The report records the code it ran (a digest of
``harness/`` and ``tests/``, the record format compared, and Python's,
Nova's and Placement's versions); a report of other code, or made with
another ``--busy`` or ``--select``, is refused: runs of different code or
under different load do not add up to one check.

Python's hash seed is pinned for every run (``harness.runners.cli``'s
``pin_hash_seed``; tox sets ``PYTHONHASHSEED=0``): Nova and Placement
choose between equals by set order, and that order follows the seed
(Placement's ``_merge_candidates`` returns ``list()`` of a set of
allocation requests and Nova claims a host's first candidate, so which
of two equal NVMe devices a guest gets is the seed's choice). A test's
timeline may so differ between seeds; its verdict must not, or it passes
only under the pinned seed and fails for whoever runs it unpinned.
``--hash-seeds S1,S2,...`` (integers 0 to 4294967295, no repeats) runs
run number N (1-based, as the round-robin numbers them) under seed
``S[(N-1) % len(S)]``: one seed's runs after the other, each seed's in a
pool of ``--workers`` processes spawned with ``PYTHONHASHSEED`` set to it
(a hung run's fresh workers too), and each run records the seed its
worker had. A test is then flaky when its runs give more than one
verdict (under any seeds), or more than one timeline or race-point
digest under one seed; timelines or race points that differ only
between seeds are listed apart, as seed-dependent, with the seeds of
each digest and where two seeds' first differ, and do not fail the
check. ``--workers 0`` cannot run under another seed (a process's seed
is fixed when it starts), so ``--hash-seeds`` needs workers, even for a
seed this process has. Without the option the workers keep this
process's (pinned) seed, as before; a run's seed is recorded all the
same. ``--resume`` refuses a report made with other ``--hash-seeds``.

Exit status: 0 every test gave one verdict and, per hash seed, one
timeline and one race-point record; 1 a flake, a hang, a worker process
that died or ran under another seed than asked; 2 bad arguments; 130
interrupted.
"""

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import multiprocessing
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import typing

from harness.core import hooks

# The checkout the harness runs from: its tests are what this tool runs.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PROG = 'harness determinism'

EXIT_OK, EXIT_FLAKY, EXIT_BAD_ARGS, EXIT_INTERRUPTED = 0, 1, 2, 130
# Where the functional suite's scenario and regression tests are: a module
# and a package unittest's loader reads (not the scenario files).
SCENARIO_MODULE = 'tests.functional.test_scenarios'
REGRESSION_PACKAGE = 'tests.regressions'
# Lines of context around the first divergence of two records.
CONTEXT = 3


class UsageError(Exception):
    """Bad arguments: one message, exit 2."""


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
        return [[run.scenario, os.path.relpath(run.path, ROOT)
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


# -- comparing runs ------------------------------------------------------

# Bump when ``timeline_record`` or ``points_record`` changes what they
# hold: digests of different records are not comparable.
RECORD_FORMAT = 2
# What the runs are runs of: the harness (with its host profiles) and the
# tests.
CODE_DIRS = ('harness', 'tests')


def code_identity(root=ROOT):
    """What a report's runs ran, to tell whether two reports add up.

    A digest of every file under ``CODE_DIRS`` (caches left out), the
    record format, and the versions of Python, Nova and Placement.
    """
    from importlib import metadata
    sha = hashlib.sha256()
    for top in CODE_DIRS:
        walked = []
        for directory, subdirs, files in os.walk(os.path.join(root, top)):
            # Pruned here, as the walk goes: caches and hidden directories
            # are not code.
            subdirs[:] = [d for d in subdirs if d != '__pycache__'
                          and not d.startswith('.')]
            walked.append((directory, sorted(files)))
        for directory, files in sorted(walked):
            for name in files:
                if name.endswith(('.pyc', '.pyo')):
                    continue
                path = os.path.join(directory, name)
                sha.update(os.path.relpath(path, root).encode('utf-8'))
                sha.update(b'\0')
                with open(path, 'rb') as source:
                    sha.update(source.read())
                sha.update(b'\0')
    identity = {'files': sha.hexdigest()[:16],
                'record_format': RECORD_FORMAT,
                'python': '%d.%d.%d' % sys.version_info[:3]}
    for dist in ('nova', 'openstack-placement'):
        try:
            identity[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            identity[dist] = None
    return identity


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


@dataclasses.dataclass
class Run(object):
    item: str
    number: int
    verdict: str
    timeline: str      # digest of ``timeline_record``
    points: str        # digest of ``points_record``
    seconds: float
    worker: int = 0
    rss_mb: float = 0.0
    # ``[scenario ID, file relative to the checkout]`` of each scenario
    # the run ran, as the hooks said.
    scenarios: list = dataclasses.field(default_factory=list)
    # Python's hash seed the run's process had (``current_hash_seed``):
    # an int, "random", or None when unset (reports before it: None).
    hash_seed: typing.Any = None


@dataclasses.dataclass
class SeedRuns(object):
    """A test's runs under one hash seed: their numbers and digests."""
    numbers: list
    verdicts: collections.Counter
    timelines: collections.Counter
    points: collections.Counter
    # digest -> the first run under this seed that gave it.
    first_runs: dict


@dataclasses.dataclass
class Summary(object):
    item: str
    runs: int
    verdicts: collections.Counter
    timelines: collections.Counter
    points: collections.Counter
    mean_seconds: float
    # digest -> the text of the first run that gave it, and its number.
    texts: dict = dataclasses.field(default_factory=dict)
    first_runs: dict = dataclasses.field(default_factory=dict)
    # The scenario IDs its runs ran, first seen first.
    scenarios: list = dataclasses.field(default_factory=list)
    # Hash seed -> ``SeedRuns``, in the order of the seeds' first runs.
    by_seed: dict = dataclasses.field(default_factory=dict)

    def _per_seed(self, kind):
        """The digests of ``kind`` per seed: Counters (all runs if none)."""
        if not self.by_seed:
            return [getattr(self, kind)]
        return [getattr(runs, kind) for runs in self.by_seed.values()]

    @property
    def flaky(self):
        """More than one verdict, or timeline or points under one seed.

        Timelines that differ only between hash seeds are Nova choosing
        between equals by set order (``seed_dependent``), not a flake.
        """
        return len(self.verdicts) > 1 or any(
            len(counter) > 1 for kind in ('timelines', 'points')
            for counter in self._per_seed(kind))

    @property
    def seed_dependent(self):
        """Steady under each seed; timelines or points differ by seed."""
        return not self.flaky and (len(self.timelines) > 1
                                   or len(self.points) > 1)

    def divergence(self):
        """Lines showing how the first two distinct outcomes differ.

        Timelines and race points are compared within one seed: those
        that differ between seeds are ``seed_dependence``'s.
        """
        lines = []
        several = len(self.by_seed) > 1
        if len(self.verdicts) > 1:
            lines.append('%s: %d verdicts:' % (self.item, len(self.verdicts)))
            for text, count in self.verdicts.most_common():
                lines.append('  %d x %s%s' % (
                    count, _one_line(text), ' (%s)' % _seeds_text(
                        [seed for seed, runs in self.by_seed.items()
                         if text in runs.verdicts]) if several else ''))
        for kind, what in (('timelines', 'timelines'),
                           ('points', 'race-point recordings')):
            groups = (list(self.by_seed.items()) if self.by_seed
                      else [(None, self)])
            for seed, runs in groups:
                counter = getattr(runs, kind)
                if len(counter) < 2:
                    continue
                (one, _), (two, _) = counter.most_common(2)
                lines.append('%s: %d %s%s; runs %d (%s) and %d (%s) first '
                             'differ at' % (
                                 self.item, len(counter), what,
                                 ' under hash seed %s' % seed if several
                                 else '', runs.first_runs.get(one, 0), one,
                                 runs.first_runs.get(two, 0), two))
                lines.extend(self._diff(one, two))
                # The first seed that shows it is enough to see how.
                break
        return lines

    def seed_dependence(self):
        """Lines showing how the timelines (or points) of two seeds differ.

        Per kind that differs: each digest with the seeds that gave it,
        then where the runs of the first two seeds first differ.
        """
        lines = []
        if not self.seed_dependent:
            return lines
        for kind, what in (('timelines', 'timelines'),
                           ('points', 'race-point recordings')):
            if len(getattr(self, kind)) < 2:
                continue
            seeds_of = collections.OrderedDict()
            for seed, runs in self.by_seed.items():
                (key,) = getattr(runs, kind)   # steady under each seed
                seeds_of.setdefault(key, []).append(seed)
            (one, left), (two, right) = list(seeds_of.items())[:2]
            lines.append('%s: %d %s by hash seed: %s; seed %s (run %d) and '
                         'seed %s (run %d) first differ at' % (
                             self.item, len(seeds_of), what, ', '.join(
                                 '%s (%s)' % (key, _seeds_text(seeds))
                                 for key, seeds in seeds_of.items()),
                             left[0], self.by_seed[left[0]].first_runs[one],
                             right[0],
                             self.by_seed[right[0]].first_runs[two]))
            lines.extend(self._diff(one, two))
        return lines

    def _diff(self, one, two):
        left = self.texts.get(one, '')
        found = first_divergence(left, self.texts.get(two, ''))
        if not found:
            return []
        number, shown = found
        where = headings(left, number)
        return (['  line %d%s:' % (number, ' (%s)' % ', '.join(where)
                                   if where else '')]
                + ['    ' + line for line in shown])


def _seeds_text(seeds):
    return '%s %s' % ('seed' if len(seeds) == 1 else 'seeds',
                      ', '.join(str(seed) for seed in seeds))


def _one_line(text, width=160):
    text = ' | '.join(line.strip() for line in text.split('\n')
                      if line.strip())
    return text if len(text) <= width else text[:width - 3] + '...'


def summarise(runs, texts=None):
    """Per item, in first-seen order: a ``Summary`` of its runs.

    ``texts`` maps ``(item, digest)`` to the text of the first run that
    gave it (kept only for distinct digests, timelines' and points').
    """
    texts = texts or {}
    grouped = collections.OrderedDict()
    for run in runs:
        grouped.setdefault(run.item, []).append(run)
    summaries = []
    for item, its in grouped.items():
        first, scenarios = {}, {}
        by_seed = collections.OrderedDict()
        for run in sorted(its, key=lambda r: r.number):
            first.setdefault(run.timeline, run.number)
            first.setdefault(run.points, run.number)
            for scenario, _ in run.scenarios:
                scenarios.setdefault(scenario)
            seed = by_seed.setdefault(run.hash_seed, SeedRuns(
                [], collections.Counter(), collections.Counter(),
                collections.Counter(), {}))
            seed.numbers.append(run.number)
            seed.verdicts[run.verdict] += 1
            seed.timelines[run.timeline] += 1
            seed.points[run.points] += 1
            seed.first_runs.setdefault(run.timeline, run.number)
            seed.first_runs.setdefault(run.points, run.number)
        summaries.append(Summary(
            item=item, runs=len(its),
            verdicts=collections.Counter(r.verdict for r in its),
            timelines=collections.Counter(r.timeline for r in its),
            points=collections.Counter(r.points for r in its),
            mean_seconds=statistics.mean(r.seconds for r in its),
            texts={d: texts[(item, d)] for d in first if (item, d) in texts},
            first_runs=first, scenarios=list(scenarios), by_seed=by_seed))
    return summaries


def _several_seeds(summaries):
    """Whether the runs ran under more than one hash seed."""
    return len({seed for s in summaries for seed in s.by_seed}) > 1


def table(summaries):
    """The report table, as lines.

    Runs under several hash seeds add how many seeds a test ran under
    and whether its timelines (or points) depend on the seed.
    """
    seeds = _several_seeds(summaries)
    rows = [('test', 'runs') + (('seeds',) if seeds else ())
            + ('verdicts', 'timelines', 'points', 'flaky')
            + (('seed-dependent',) if seeds else ()) + ('s/run',)]
    for s in summaries:
        rows.append(
            (s.item, str(s.runs))
            + ((str(len(s.by_seed)),) if seeds else ())
            + (str(len(s.verdicts)), str(len(s.timelines)),
               str(len(s.points)), 'yes' if s.flaky else 'no')
            + (('yes' if s.seed_dependent else 'no',) if seeds else ())
            + ('%.2f' % s.mean_seconds,))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append('  '.join(cells))
    return lines


def summary_line(summaries, wall):
    runs = sum(s.runs for s in summaries)
    flaky = sum(1 for s in summaries if s.flaky)
    seeds = ('' if not _several_seeds(summaries) else
             ', %d seed-dependent' % sum(1 for s in summaries
                                         if s.seed_dependent))
    return 'determinism: %d runs, %d flaky%s, wall %.0f s' % (
        runs, flaky, seeds, wall)


def orphans(runs, root=ROOT):
    """Scenario IDs in the files next to those run that no run ran.

    The directories are those of the scenarios the hooks saw run, so no
    scenario folder is named here; a file that does not load is left to
    its own test (which fails on it).
    """
    import glob

    seen = {scenario for run in runs for scenario, _ in run.scenarios}
    directories = sorted({os.path.dirname(path) for run in runs
                          for _, path in run.scenarios if path})
    if not directories:
        return []
    from harness.core import errors
    from harness.core import scenario as scenario_mod

    found = []
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(root, directory,
                                                  '*.yaml'))):
            try:
                loaded = scenario_mod.load(path)
            except errors.ScenarioError:
                continue
            found.extend(s.id for s in loaded if s.id not in seen)
    return found


# -- worker side -----------------------------------------------------------

_IN_WORKER = False
UNITTEST_CLASS_STATE = frozenset(('tearDown_exceptions', '_classSetupFailed'))
EXIT_HUNG = 3


def _worker_init(parent):
    # The parent handles Ctrl-C and stops the workers itself; if it is
    # killed outright, the kernel stops them (Linux).
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    # Import Nova once, here, so a run's seconds are the run's own.
    import harness.cloud  # noqa: F401


def _die_with_parent(parent):
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _watchdog(job):
    """In a worker: end the process if ``job`` runs past its timeout.

    A real thread (not a greenthread) waits; on time-out it writes every
    greenthread's stack to ``job['hangs']/<pid>.json`` and exits, so the
    parent records the run as hung and goes on with a fresh worker.
    Returns an event to set when the run is over.
    """
    threading = __import__('threading')
    if 'eventlet' in sys.modules:
        from eventlet import patcher
        threading = patcher.original('threading')
    over = threading.Event()

    def watch():
        if over.wait(job['timeout']):
            return
        import gc
        import traceback
        stacks = []
        try:
            import greenlet
            for obj in gc.get_objects():
                if isinstance(obj, greenlet.greenlet) and obj.gr_frame:
                    stacks.append(''.join(traceback.format_stack(
                        obj.gr_frame)))
        except Exception as exc:  # diagnostics only
            stacks.append('no greenlet stacks: %s' % exc)
        path = os.path.join(job['hangs'], '%d.json' % os.getpid())
        with open(path, 'w') as target:
            json.dump({'item': job['item'], 'number': job['number'],
                       'timeout': job['timeout'], 'stacks': stacks},
                      target)
        os._exit(EXIT_HUNG)

    threading.Thread(target=watch, daemon=True).start()
    return over


def item_id(test_id):
    """How a test is listed: its ID without the ``tests.<suite>.`` part."""
    return test_id.split('.', 2)[-1]


def discover(root=ROOT):
    """The tests to run, as plain dicts (runs where Nova may be imported).

    ``{'items': [{'id', 'test'}...]}``: every test of ``SCENARIO_MODULE``
    and of the ``test_*.py`` modules under ``REGRESSION_PACKAGE``, as
    unittest's loader finds them (a module that does not import is a
    test that errors, as in any runner).
    """
    import unittest

    if not os.path.isfile(os.path.join(root, 'tests', '__init__.py')):
        # The harness was installed, not checked out: no suite to run.
        raise UsageError('no test suite next to the harness in %s: run it '
                         'from a checkout (pip install -e .)' % root)
    if root not in sys.path:
        sys.path.insert(0, root)
    loader = unittest.TestLoader()
    suites = [loader.loadTestsFromName(SCENARIO_MODULE),
              unittest.TestLoader().discover(
                  os.path.join(root, *REGRESSION_PACKAGE.split('.')),
                  pattern='test_*.py', top_level_dir=root)]
    items = []
    for suite in suites:
        for case in _flatten(suite):
            items.append({'id': item_id(case.id()), 'test': case.id()})
    return {'items': items}


def _flatten(suite):
    for test in suite:
        if hasattr(test, '__iter__'):
            yield from _flatten(test)
        else:
            yield test


class _Result(object):
    """What the worker keeps of one test's outcome (a testtools result)."""

    def __init__(self):
        import testtools
        outer = self

        class Result(testtools.TestResult):
            def addSuccess(self, test, details=None):
                outer.set('pass')

            def addFailure(self, test, err=None, details=None):
                outer.set('fail', outer.message(err, details))

            def addError(self, test, err=None, details=None):
                outer.set('error', outer.message(err, details))

            def addSkip(self, test, reason=None, details=None):
                if reason is None and details and 'reason' in details:
                    reason = details['reason'].as_text()
                outer.set('skip', reason or '')

            def addExpectedFailure(self, test, err=None, details=None):
                outer.set('expected failure', outer.message(err, details))

            def addUnexpectedSuccess(self, test, details=None):
                outer.set('unexpected success')

        self.result = Result()
        self.outcomes = []

    def set(self, outcome, message=''):
        self.outcomes.append((outcome, message))

    @staticmethod
    def message(err, details):
        import traceback
        if err is not None:
            return ''.join(traceback.format_exception_only(
                err[0], err[1])).strip()
        # testtools names the traceback detail "traceback" ("traceback-2"
        # and on for more than one exception).
        return '\n'.join(
            exception_message(details[name].as_text())
            for name in sorted(details or {}) if name.startswith('traceback'))

    def verdict(self):
        if not self.outcomes:
            return 'error: the test reported no outcome'
        return '\n'.join(verdict(outcome, message)
                         for outcome, message in self.outcomes)


def run_once(job):
    """Run one test of the functional suite once (see ``run_test``).

    Nova's monkey patching comes first (``harness.cloud`` does it), as in
    every functional test module: a test module imported before it would
    keep a native thread's locals where Nova's code needs greenthreads'.
    """
    from harness.cloud import fixture  # noqa: F401
    return run_test(job)


def run_test(job):
    """Run the test ``job['test']`` once; return a plain (picklable) result.

    ``job`` is ``{'item', 'test', 'number'}`` (and in a worker ``timeout``
    and ``hangs``). The test is watched through ``hooks.observing`` while
    it runs; its timeline and race-point records are made once it is over.
    """
    import resource
    import unittest

    over = _watchdog(job) if _IN_WORKER and job.get('timeout') else None
    suite = unittest.TestLoader().loadTestsFromName(job['test'])
    classes = {type(case) for case in _flatten(suite)}
    before = {cls: set(vars(cls)) for cls in classes}
    result = _Result()
    watcher = Watcher()
    started = time.perf_counter()
    try:
        with hooks.observing(watcher):
            suite.run(result.result)
    finally:
        seconds = time.perf_counter() - started
        if over is not None:
            over.set()
        # What unittest's class-fixture handling leaves on a test class
        # (as it does in any runner); gone again, so that a run inside a
        # test leaves nothing behind.
        for cls in classes:
            for name in UNITTEST_CLASS_STATE - before[cls]:
                if name in vars(cls):
                    delattr(cls, name)
    timeline = timeline_record(watcher.runs)
    points = points_record(watcher.runs, watcher.recordings)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {'item': job['item'], 'number': job['number'],
            'verdict': result.verdict(),
            'timeline': digest(timeline),
            'timeline_text': record_text('timeline', timeline),
            'points': digest(points),
            'points_text': record_text('points', points),
            'scenarios': watcher.scenarios(),
            'seconds': seconds, 'worker': os.getpid(), 'rss_mb': rss,
            'hash_seed': current_hash_seed()}


def current_hash_seed(environ=None):
    """The hash seed this process runs under: an int, "random" or None.

    What ``PYTHONHASHSEED`` says. In a spawned worker that is the
    environment the interpreter started with, so the seed its hashes use
    (Python reads it once, at start-up; nothing here sets it in a worker).
    """
    value = (os.environ if environ is None else environ).get(
        'PYTHONHASHSEED')
    if value is not None and value.strip().isdigit():
        return int(value)
    return value


# -- busy processes --------------------------------------------------------

BURN = '''
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(200000):
        pass
'''


class Burners(object):
    """``count`` processes burning CPU while in the ``with`` block.

    Each stops on leaving the block (terminate, then kill), and on its own
    when this process is gone (it watches its parent).
    """

    def __init__(self, count):
        self.count = count
        self.processes = []

    def __enter__(self):
        try:
            for _ in range(self.count):
                self.processes.append(subprocess.Popen(
                    [sys.executable, '-c', BURN, str(os.getpid())],
                    stdin=subprocess.DEVNULL))
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes = []


# -- running ---------------------------------------------------------------

class Pool(object):
    """``workers`` spawned processes, or this one for 0."""

    def __init__(self, workers, recycle=0):
        self.workers = workers
        self.recycle = recycle
        self.executor = None

    def __enter__(self):
        if self.workers:
            self.executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context('spawn'),
                initializer=_worker_init, initargs=(os.getpid(),),
                max_tasks_per_child=self.recycle or None)
        return self

    def call(self, func, *args):
        if self.executor is None:
            return func(*args)
        return self.executor.submit(func, *args).result()

    def imap(self, func, jobs):
        """``func(job)`` for each job, as they complete."""
        if self.executor is None:
            for job in jobs:
                yield func(job)
            return
        futures = [self.executor.submit(func, job) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            yield future.result()

    def __exit__(self, exc_type, exc, tb):
        if self.executor is None:
            return
        if exc_type is None:
            self.executor.shutdown(wait=True)
            return
        # Interrupted or failed: stop the workers now, not after their
        # current runs.
        processes = list((getattr(self.executor, '_processes', None)
                          or {}).values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(5)
            if process.is_alive():
                process.kill()


@dataclasses.dataclass
class Report(object):
    runs: list
    texts: dict
    wall: float
    # Scenarios no test ran (only known after a whole, unselected check).
    orphans: list = dataclasses.field(default_factory=list)
    # Runs that gave no result in time: dicts with item, number, stacks.
    hangs: list = dataclasses.field(default_factory=list)
    hang_dir: str = ''
    interrupted: bool = False
    error: str = ''
    # Wall time of the report this one resumed (its runs are in ``runs``).
    earlier_wall: float = 0.0

    @property
    def summaries(self):
        return summarise(self.runs, self.texts)


def select(items, pattern):
    """The items whose ID or test ID ``pattern`` (a regex) finds."""
    if not pattern:
        return list(items)
    regex = re.compile(pattern)
    return [item for item in items
            if regex.search(item['id']) or regex.search(item['test'])]


def jobs_for(items, runs, hash_seeds=None):
    """Round-robin: run 1 of every item, then run 2, ...

    Each job's ``hash_seed`` is the one its run number gets
    (``seed_for``), None without ``hash_seeds``.
    """
    return [{'item': item['id'], 'test': item['test'], 'number': number,
             'hash_seed': seed_for(number, hash_seeds)}
            for number in range(1, runs + 1) for item in items]


def seed_for(number, hash_seeds):
    """The hash seed run ``number`` (1-based) runs under, or None.

    Seeds go round with the run numbers: run N gets
    ``hash_seeds[(N - 1) % len(hash_seeds)]``, so every test has runs
    under every seed once there are as many runs as seeds.
    """
    if not hash_seeds:
        return None
    return hash_seeds[(number - 1) % len(hash_seeds)]


MAX_HASH_SEED = 4294967295


def parse_hash_seeds(text):
    """``--hash-seeds``' value as a list of ints; ``UsageError`` if bad."""
    seeds = []
    for part in text.split(','):
        part = part.strip()
        if not re.fullmatch('[0-9]+', part) or int(part) > MAX_HASH_SEED:
            raise UsageError('--hash-seeds %r: %r is not a hash seed (an '
                             'integer from 0 to %d)'
                             % (text, part, MAX_HASH_SEED))
        if int(part) in seeds:
            raise UsageError('--hash-seeds %r: seed %d is given twice'
                             % (text, int(part)))
        seeds.append(int(part))
    return seeds


def check_hash_seeds(hash_seeds, workers):
    """``hash_seeds`` as a list (None if none); ``UsageError`` if unusable.

    A run in this process (``workers`` 0) keeps the seed this process
    started with: only spawned workers can run under another.
    """
    if hash_seeds is None:
        return None
    seeds = list(hash_seeds)
    if not seeds:
        raise UsageError('--hash-seeds needs at least one seed')
    for seed in seeds:
        if (not isinstance(seed, int) or isinstance(seed, bool)
                or not 0 <= seed <= MAX_HASH_SEED):
            raise UsageError('--hash-seeds: %r is not a hash seed (an '
                             'integer from 0 to %d)' % (seed, MAX_HASH_SEED))
    if len(set(seeds)) < len(seeds):
        raise UsageError('--hash-seeds: a seed is given twice (%s)'
                         % ','.join(str(seed) for seed in seeds))
    if not workers:
        raise UsageError('--hash-seeds needs worker processes (--workers 1 '
                         'or more): a run in this process keeps the hash '
                         'seed it started with')
    return seeds


@contextlib.contextmanager
def hash_seed_environ(seed):
    """``PYTHONHASHSEED`` is ``seed`` in this process's environment meanwhile.

    A spawned worker starts with the environment as it is then, and a
    pool starts them on its first jobs and replaces them at any time (a
    recycled worker): so the seed is set for the pool's whole life, and
    put back as it was however the block is left. None changes nothing.
    """
    if seed is None:
        yield
        return
    before = os.environ.get('PYTHONHASHSEED')
    os.environ['PYTHONHASHSEED'] = str(seed)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop('PYTHONHASHSEED', None)
        else:
            os.environ['PYTHONHASHSEED'] = before


def check(runs=50, workers=2, pattern=None, items=None, progress=None,
          timeout=900, recycle=0, previous=None, run=None, status=None,
          hash_seeds=None):
    """Run the selected tests ``runs`` times each; return a ``Report``.

    ``workers=0`` runs them in this process (Nova gets imported here).
    ``items`` skips discovery (dicts as ``discover`` returns). A run in a
    worker that gives no result within ``timeout`` seconds is recorded as
    hung (its greenthreads' stacks kept) and the rest go on in fresh
    workers. ``recycle``: replace a worker after that many runs (0: never).
    ``previous``: a ``Report`` (see ``load_report``) whose runs count as
    done. ``run``: what runs one job (``run_once``). Without ``pattern``,
    a check that finishes names the scenarios no test ran (``orphans``).
    ``status``: a stream to show progress on (done, runs that changed from
    their test's first, time left; ``harness.runners.progress``).
    ``hash_seeds``: ints; run N runs under ``seed_for(N, hash_seeds)``,
    one seed's runs after the other, each seed's in a pool of its own
    spawned with that ``PYTHONHASHSEED`` (``UsageError`` with
    ``workers=0``, see ``check_hash_seeds``). A run whose worker had
    another seed is an error of the report.
    """
    import tempfile

    from harness.runners import progress as progress_mod

    hash_seeds = check_hash_seeds(hash_seeds, workers)
    say = progress or (lambda line: None)
    run = run or run_once
    started = time.monotonic()
    done = list(previous.runs) if previous else []
    texts = dict(previous.texts) if previous else {}
    report = Report(done, texts, 0.0)
    if previous:
        report.hangs = list(previous.hangs)
        report.earlier_wall = previous.wall
    report.hang_dir = tempfile.mkdtemp(prefix='determinism-hangs-')
    remaining = None
    counter = None
    # One pool per seed, its workers spawned under it, running that
    # seed's runs: the first seed first; a fresh pool after a hang goes on
    # with the same seed while it has runs left, then the seed of the
    # first run left.
    seed = seed_for(1, hash_seeds)
    try:
        while remaining is None or remaining:
            if remaining is not None and not any(
                    job['hash_seed'] == seed for job in remaining.values()):
                seed = next(iter(remaining.values()))['hash_seed']
            try:
                with hash_seed_environ(seed), Pool(workers, recycle) as pool:
                    if items is None:
                        found = pool.call(discover)
                        items = select(found['items'], pattern)
                        if not items:
                            raise UsageError(
                                'no test matches --select %r; known: %s'
                                % (pattern, ', '.join(
                                    i['id'] for i in found['items'])))
                    if remaining is None:
                        ran = {(r.item, r.number) for r in done}
                        jobs = jobs_for(items, runs, hash_seeds)
                        total = len(jobs)
                        remaining = collections.OrderedDict(
                            ((job['item'], job['number']), job)
                            for job in jobs
                            if (job['item'], job['number']) not in ran)
                        say('%d tests x %d runs = %d runs in %s%s%s' % (
                            len(items), runs, total,
                            '%d worker processes' % workers if workers
                            else 'this process',
                            '; %d done before (--resume)'
                            % (total - len(remaining)) if previous
                            else '',
                            '; hash seeds %s, a pool each, one after the '
                            'other' % ', '.join(map(str, hash_seeds))
                            if hash_seeds else ''))
                        if status is not None and remaining:
                            counter = progress_mod.Progress(
                                len(remaining), status, 'runs',
                                failed_word='changed')
                            say = counter.say
                    batch = [job for job in remaining.values()
                             if job['hash_seed'] == seed]
                    for job in batch:
                        job.update(timeout=timeout, hangs=report.hang_dir)
                    for result in pool.imap(run, batch):
                        remaining.pop((result['item'], result['number']))
                        _record(report, result)
                        if (seed is not None and not report.error
                                and result.get('hash_seed') != seed):
                            report.error = (
                                '%s run %d was to run under hash seed %s, '
                                'its worker had %s' % (
                                    result['item'], result['number'], seed,
                                    result.get('hash_seed')))
                        if counter is not None:
                            counter.advance(failed=_changed(report,
                                                            done[-1]))
                        say('%5d/%d  %-70s run %2d%s  %6.2f s  %s' % (
                            len(done), total, result['item'][:70],
                            result['number'], ' seed %s' % seed
                            if seed is not None else '', result['seconds'],
                            _one_line(result['verdict'], 60)))
            except concurrent.futures.BrokenExecutor as exc:
                hung = _collect_hangs(report.hang_dir)
                if not hung or remaining is None:
                    report.error = 'a worker process died: %s' % exc
                    break
                for hang in hung:
                    remaining.pop((hang['item'], hang['number']), None)
                    report.hangs.append(hang)
                    # Its worker was spawned under this pool's seed.
                    done.append(Run(hang['item'], hang['number'],
                                    'hang: no result within %d s'
                                    % hang['timeout'], 'hung', 'hung',
                                    float(hang['timeout']),
                                    hash_seed=seed))
                    say('%5d/%d  %-70s run %2d  HUNG (no result within '
                        '%d s); going on with fresh workers' % (
                            len(done), total, hang['item'][:70],
                            hang['number'], hang['timeout']))
    except KeyboardInterrupt:
        # The pool has stopped its workers on the way out.
        report.interrupted = True
    except UsageError:
        os.rmdir(report.hang_dir)
        raise
    finally:
        if counter is not None:
            counter.finish()
    if not pattern and not report.interrupted and not report.error:
        report.orphans = orphans(done)
    if any('stacks' in hang for hang in report.hangs):
        for hang in report.hangs:
            if 'stacks' not in hang:   # from the resumed report
                continue
            path = os.path.join(report.hang_dir, '%s.run%d.stacks.txt' % (
                re.sub(r'[^A-Za-z0-9_.-]+', '_', hang['item'])[:150],
                hang['number']))
            with open(path, 'w') as target:
                target.write('\n'.join(hang['stacks']) + '\n')
            hang['stacks_path'] = path
    else:
        os.rmdir(report.hang_dir)
        report.hang_dir = ''
    report.wall = report.earlier_wall + time.monotonic() - started
    return report


def _changed(report, run):
    """Whether ``run`` differs from its test's first run (for progress).

    In verdict from its first run; in timeline or points from its first
    run under the same hash seed (seeds may choose between equals).
    """
    first = next(r for r in report.runs if r.item == run.item)
    first_of_seed = next(r for r in report.runs if r.item == run.item
                         and r.hash_seed == run.hash_seed)
    return (first.verdict != run.verdict
            or (first_of_seed.timeline, first_of_seed.points)
            != (run.timeline, run.points))


def _record(report, result):
    for kind in ('timeline', 'points'):
        report.texts.setdefault((result['item'], result[kind]),
                                result[kind + '_text'])
    report.runs.append(Run(result['item'], result['number'],
                           result['verdict'], result['timeline'],
                           result['points'], result['seconds'],
                           result['worker'], result['rss_mb'],
                           result.get('scenarios', []),
                           result.get('hash_seed')))


def _collect_hangs(directory):
    """The hang records workers left in ``directory`` (then removed)."""
    hangs = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith('.json'):
            with open(path) as source:
                hangs.append(json.load(source))
            os.remove(path)
    return hangs


def to_json(report, args, identity=None):
    texts = {}
    for (item, key), text in sorted(report.texts.items()):
        texts.setdefault(item, {})[key] = text
    return {
        'settings': args,
        'code': identity or code_identity(),
        'wall_seconds': report.wall,
        'earlier_wall_seconds': report.earlier_wall,
        'interrupted': report.interrupted,
        'error': report.error,
        'orphans': report.orphans,
        'hangs': [{key: hang.get(key) for key in (
            'item', 'number', 'timeout', 'stacks_path')}
            for hang in report.hangs],
        'flaky': sum(1 for s in report.summaries if s.flaky),
        'seed_dependent': sum(1 for s in report.summaries
                              if s.seed_dependent),
        'items': [{
            'id': s.item, 'runs': s.runs, 'flaky': s.flaky,
            'mean_seconds': s.mean_seconds, 'scenarios': s.scenarios,
            'verdicts': dict(s.verdicts), 'timelines': dict(s.timelines),
            'points': dict(s.points),
            'divergence': s.divergence() if s.flaky else [],
            'seed_dependent': s.seed_dependent,
            'seed_dependence': s.seed_dependence(),
            # Per hash seed (JSON keys are strings): its runs' numbers
            # and digests.
            'by_seed': {str(seed): {
                'runs': runs.numbers, 'verdicts': dict(runs.verdicts),
                'timelines': dict(runs.timelines),
                'points': dict(runs.points)}
                for seed, runs in s.by_seed.items()},
        } for s in report.summaries],
        'runs': [dataclasses.asdict(run) for run in report.runs],
        # Each distinct timeline and recording text, by test and digest:
        # what a resumed check needs to show how a new run differs.
        'texts': texts,
    }


# Settings a resumed check must share with the report it resumes (a
# report without one had its default).
RESUME_SETTINGS = ('busy', 'select', 'hash_seeds')


def _setting_text(value):
    if isinstance(value, list):
        return ','.join(str(item) for item in value)
    return str(value)


def load_report(path, args, identity=None):
    """The ``Report`` of ``--resume PATH``, if it adds up with this check.

    One ``UsageError`` naming the file and what differs otherwise.
    """
    try:
        with open(path) as source:
            data = json.load(source)
        runs = [Run(**run) for run in data['runs']]
        texts = {(item, key): text for item, by_key in
                 data['texts'].items() for key, text in by_key.items()}
        code, settings = data['code'], data['settings']
        hangs = [dict(hang) for hang in data['hangs']]
        wall = float(data['wall_seconds'])
    except OSError as exc:
        raise UsageError('--resume %s: %s' % (path, exc.strerror or exc))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError('--resume %s: not a report of this tool (%s: %s)'
                         % (path, type(exc).__name__, exc))
    identity = identity or code_identity()
    if code != identity:
        differ = sorted(key for key in set(code) | set(identity)
                        if code.get(key) != identity.get(key))
        raise UsageError(
            '--resume %s: its runs ran other code (%s: %s there, %s here)'
            % (path, ', '.join(differ),
               ', '.join(str(code.get(k)) for k in differ),
               ', '.join(str(identity.get(k)) for k in differ)))
    for name in RESUME_SETTINGS:
        if settings.get(name) != getattr(args, name):
            option = '--' + name.replace('_', '-')
            raise UsageError('--resume %s: it ran with %s %s, this check '
                             'with %s %s' % (
                                 path, option,
                                 _setting_text(settings.get(name)), option,
                                 _setting_text(getattr(args, name))))
    return Report(runs, texts, wall, hangs=hangs)


# -- the command -------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser(prog=PROG):
    parser = _Parser(
        prog=prog,
        description='Run every scenario and regression test N times; '
                    'report those whose verdict, timeline or race points '
                    'change.')
    parser.add_argument('--runs', type=int, default=50,
                        help='runs per test (default 50)')
    parser.add_argument('--busy', type=int, default=0, metavar='K',
                        help='keep K CPU-burning processes running '
                             'meanwhile (default 0)')
    parser.add_argument('--workers', type=int, default=2,
                        help='worker processes (default 2; 0 runs in this '
                             'process)')
    parser.add_argument('--select', metavar='REGEX',
                        help='only tests whose ID this finds')
    parser.add_argument('--json', metavar='OUT',
                        help='write every run and the summary here')
    parser.add_argument('--timeout', type=int, default=900, metavar='S',
                        help='a run with no result after S seconds is '
                             'recorded as hung and its worker replaced '
                             '(default 900)')
    parser.add_argument('--recycle', type=int, default=0, metavar='N',
                        help='replace a worker process after N runs '
                             '(default 0: never; each keeps running)')
    parser.add_argument('--dump', metavar='DIR',
                        help='write the distinct timelines and recordings '
                             'of each flaky (or, with --hash-seeds, '
                             'seed-dependent) test here')
    parser.add_argument('--resume', metavar='REPORT',
                        help='a --json report of an interrupted check of '
                             'the same code: its runs count as done')
    parser.add_argument('--quiet', action='store_true',
                        help='no line per run')
    parser.add_argument('--hash-seeds', metavar='S1,S2,...',
                        help='run N under Python hash seed '
                             'S[(N-1) mod len(S)] (integers 0..%s, no '
                             'repeats; needs --workers 1 or more): Nova '
                             'chooses between equals by set order, so a '
                             'timeline may follow the seed (listed as '
                             'seed-dependent) but a verdict must not '
                             '(flaky). Default: the pinned seed of this '
                             'process' % MAX_HASH_SEED)
    return parser


def parse_args(argv, prog=PROG):
    """Parsed and checked arguments; ``UsageError`` for anything wrong."""
    args = build_parser(prog).parse_args(argv)
    if args.runs < 1:
        raise UsageError('--runs must be at least 1, not %d' % args.runs)
    if args.busy < 0:
        raise UsageError('--busy must be 0 or more, not %d' % args.busy)
    if args.timeout < 1:
        raise UsageError('--timeout must be at least 1 s, not %d'
                         % args.timeout)
    if args.recycle < 0:
        raise UsageError('--recycle must be 0 or more, not %d'
                         % args.recycle)
    if args.workers < 0:
        raise UsageError('--workers must be 0 or more, not %d'
                         % args.workers)
    if args.select:
        try:
            re.compile(args.select)
        except re.error as exc:
            raise UsageError('--select %r is not a regular expression: %s'
                             % (args.select, exc))
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory):
            raise UsageError('--json %s: no directory %s' % (args.json,
                                                             directory))
    if args.dump and os.path.exists(args.dump) and not os.path.isdir(
            args.dump):
        raise UsageError('--dump %s: not a directory' % args.dump)
    if args.hash_seeds is not None:
        args.hash_seeds = check_hash_seeds(
            parse_hash_seeds(args.hash_seeds), args.workers)
    return args


def dump(summaries, directory):
    """Write each flaky or seed-dependent test's distinct texts.

    Returns the paths. A seed-dependent test's are those of its seeds.
    """
    paths = []
    for summary in summaries:
        if not (summary.flaky or summary.seed_dependent):
            continue
        os.makedirs(directory, exist_ok=True)
        slug = re.sub(r'[^A-Za-z0-9_.-]+', '_', summary.item)[:150]
        for key, text in sorted(summary.texts.items()):
            path = os.path.join(directory, '%s.run%d.%s.txt' % (
                slug, summary.first_runs.get(key, 0), key))
            with open(path, 'w') as target:
                target.write(text + '\n')
            paths.append(path)
    return paths


def seed_dependence_section(summaries):
    """The lines on tests whose timelines follow the hash seed, if any.

    Not flakes: each seed gave one timeline (and one verdict for all
    seeds), but seeds chose differently between equals.
    """
    dependent = [s for s in summaries if s.seed_dependent]
    if not dependent:
        return []
    lines = ['', "seed-dependent timelines (Nova's choice between equals "
                 "follows the hash seed): %d tests" % len(dependent)]
    for summary in dependent:
        lines.append('')
        lines.extend(summary.seed_dependence())
    return lines


def main(argv=None, out=None, prog=PROG):
    """The command: ``harness determinism`` (see the module docstring).

    ``argv`` are the options after the verb. Bad arguments are one line
    on stderr, ``PROG: message``, and exit 2 before anything runs.
    """
    out = out or sys.stdout

    def say(line):
        print(line, file=out, flush=True)

    try:
        args = parse_args(sys.argv[1:] if argv is None else argv, prog)
        identity = code_identity()
        earlier = (load_report(args.resume, args, identity) if args.resume
                   else None)
    except UsageError as exc:
        print('%s: %s' % (prog, exc), file=sys.stderr)
        return EXIT_BAD_ARGS
    # SIGTERM, and SIGINT even when a shell started this in the background
    # with SIGINT ignored, stop the check as Ctrl-C does: the runs so far
    # are reported (and written to --json, for --resume).
    previous = {signum: signal.getsignal(signum)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, signal.default_int_handler)
    try:
        with Burners(args.busy):
            if args.busy:
                say('%d busy processes burning CPU' % args.busy)
            report = check(args.runs, args.workers, args.select,
                           progress=None if args.quiet else say,
                           timeout=args.timeout, recycle=args.recycle,
                           previous=earlier,
                           status=None if args.quiet else sys.stderr,
                           hash_seeds=args.hash_seeds)
    except UsageError as exc:
        print('%s: %s' % (prog, exc), file=sys.stderr)
        return EXIT_BAD_ARGS
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    summaries = report.summaries
    say('')
    for line in table(summaries) if summaries else ['no run finished']:
        say(line)
    for summary in summaries:
        if summary.flaky:
            say('')
            for line in summary.divergence():
                say(line)
    for line in seed_dependence_section(summaries):
        say(line)
    if report.orphans:
        say('')
        say('not run by any test (so not checked): %s'
            % ', '.join(report.orphans))
    if report.hangs:
        say('')
        for hang in report.hangs:
            say('%s run %d hung (no result within %d s); its greenthreads\' '
                'stacks: %s' % (hang['item'], hang['number'],
                                hang['timeout'], hang.get('stacks_path')))
    if report.error:
        say('')
        say('determinism: %s' % report.error)
    say('')
    say(summary_line(summaries, report.wall)
        + (' (%.0f s of it before --resume)' % report.earlier_wall
           if earlier else '')
        + (', %d hung' % len(report.hangs) if report.hangs else '')
        + (' (interrupted)' if report.interrupted else ''))
    if args.json:
        with open(args.json, 'w') as target:
            json.dump(to_json(report, vars(args), identity), target,
                      indent=1)
    if args.dump:
        written = dump(summaries, args.dump)
        if written:
            say('%d texts of flaky tests in %s' % (len(written), args.dump))
    if report.interrupted:
        return EXIT_INTERRUPTED
    if report.error or report.hangs or any(s.flaky for s in summaries):
        return EXIT_FLAKY
    return EXIT_OK


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
