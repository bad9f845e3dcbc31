"""Comparing runs: per test, its verdicts and digests, flaky or steady.

A ``Run`` is what one run of a test left (its digests, not its texts);
``summarise`` groups them per test into ``Summary`` objects, which say
whether a test is flaky or only seed-dependent and show where two of its
runs first differ; ``table`` and ``summary_line`` are the report's lines.
"""

import collections
import dataclasses
import statistics
import typing

from harness.runners.determinism import records


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
                    count, one_line(text), ' (%s)' % _seeds_text(
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
        found = records.first_divergence(left, self.texts.get(two, ''))
        if not found:
            return []
        number, shown = found
        where = records.headings(left, number)
        return (['  line %d%s:' % (number, ' (%s)' % ', '.join(where)
                                   if where else '')]
                + ['    ' + line for line in shown])


def _seeds_text(seeds):
    return '%s %s' % ('seed' if len(seeds) == 1 else 'seeds',
                      ', '.join(str(seed) for seed in seeds))


def one_line(text, width=160):
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
