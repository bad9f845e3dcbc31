"""The check: every selected test run N times, round-robin, pool by pool.

``check`` finds the tests (``suite.discover``, in a worker: Nova stays
out of this process), sends run 1 of every test, then run 2..., to a
pool of workers per hash seed, records each result as it comes, goes on
in fresh workers after a hang, and stops (reporting what it has) on
SIGINT; ``report`` and ``compare`` make the rest.
"""

import collections
import concurrent.futures
import os
import re
import time

from harness.runners.determinism import compare
from harness.runners.determinism import pool
from harness.runners.determinism import report as report_mod
from harness.runners.determinism import suite
from harness.runners import options


def jobs_for(items, runs, hash_seeds=None):
    """Round-robin: run 1 of every item, then run 2, ...

    Each job's ``hash_seed`` is the one its run number gets
    (``seed_for``), None without ``hash_seeds``.
    """
    return [{'item': item['id'], 'test': item['test'], 'number': number,
             'hash_seed': pool.seed_for(number, hash_seeds)}
            for number in range(1, runs + 1) for item in items]


def check(runs=50, workers=2, pattern=None, items=None, progress=None,
          timeout=900, recycle=0, previous=None, run=None, status=None,
          hash_seeds=None, sources=None):
    """Run the selected tests ``runs`` times each; return a ``Report``.

    ``workers=0`` runs them in this process (Nova gets imported here).
    ``sources``: where the tests come from (``suite.Source``; by default
    ``suite.sources()``: the checkout's scenarios and the bug registry).
    ``items`` skips discovery (dicts as ``discover`` returns; without
    ``sources``, each test is loaded by its name). A run in a
    worker that gives no result within ``timeout`` seconds is recorded as
    hung (its greenthreads' stacks kept) and the rest go on in fresh
    workers. ``recycle``: replace a worker after that many runs (0: never).
    ``previous``: a ``Report`` (see ``load_report``) whose runs count as
    done. ``run``: what runs one job (``suite.run_once``). Without
    ``pattern``,
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

    hash_seeds = pool.check_hash_seeds(hash_seeds, workers)
    say = progress or (lambda line: None)
    run = run or suite.run_once
    started = time.monotonic()
    done = list(previous.runs) if previous else []
    texts = dict(previous.texts) if previous else {}
    report = report_mod.Report(done, texts, 0.0)
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
    seed = pool.seed_for(1, hash_seeds)
    try:
        while remaining is None or remaining:
            if remaining is not None and not any(
                    job['hash_seed'] == seed for job in remaining.values()):
                seed = next(iter(remaining.values()))['hash_seed']
            try:
                with (pool.hash_seed_environ(seed),
                      pool.Pool(workers, recycle) as workers_pool):
                    if items is None:
                        sources = sources or suite.sources()
                        found = workers_pool.call(suite.discover, sources)
                        items = suite.select(found['items'], pattern)
                        if not items:
                            raise options.UsageError(
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
                        job.update(timeout=timeout, hangs=report.hang_dir,
                                   sources=sources)
                    for result in workers_pool.imap(run, batch):
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
                            compare.one_line(result['verdict'], 60)))
            except concurrent.futures.BrokenExecutor as exc:
                hung = pool.collect_hangs(report.hang_dir)
                if not hung or remaining is None:
                    report.error = 'a worker process died: %s' % exc
                    break
                for hang in hung:
                    remaining.pop((hang['item'], hang['number']), None)
                    report.hangs.append(hang)
                    # Its worker was spawned under this pool's seed.
                    done.append(compare.Run(
                        hang['item'], hang['number'],
                        'hang: no result within %d s' % hang['timeout'],
                        'hung', 'hung', float(hang['timeout']),
                        hash_seed=seed))
                    say('%5d/%d  %-70s run %2d  HUNG (no result within '
                        '%d s); going on with fresh workers' % (
                            len(done), total, hang['item'][:70],
                            hang['number'], hang['timeout']))
    except KeyboardInterrupt:
        # The pool has stopped its workers on the way out.
        report.interrupted = True
    except options.UsageError:
        os.rmdir(report.hang_dir)
        raise
    finally:
        if counter is not None:
            counter.finish()
    if not pattern and not report.interrupted and not report.error:
        report.orphans = report_mod.orphans(done)
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
    report.runs.append(compare.Run(
        result['item'], result['number'], result['verdict'],
        result['timeline'], result['points'], result['seconds'],
        result['worker'], result['rss_mb'], result.get('scenarios', []),
        result.get('hash_seed')))
