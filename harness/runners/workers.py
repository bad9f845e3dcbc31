"""The explorer's replays from the start, in worker processes.

``run_in_workers`` gives each of N processes (``python -m MODULE JOBS
RESULTS``: the explorer's module, whose main is ``serve``) every N-th
job in a file; each replays its jobs (``explorer.replay``) on one cloud
kept for all of them (``reuse.CloudPool``: put back to its state before
any step between them) and writes their results to another file.
"""

import os
import pickle
import subprocess
import sys
import tempfile

from harness.core import errors


def run_in_workers(module, jobs, workers, kept_cloud=True, done=None):
    """Replay each job in ``workers`` processes; results in job order.

    Each process runs ``python -m module``, which ``serve``s.

    ``done(failed=...)`` is called as each job ends (each process notes
    that in a file the explorer reads while it waits).

    Each process gets every ``workers``-th job in a file and writes its
    results to another; the explorer only waits for the processes to end.
    Not ``multiprocessing``: its queues and its pool's manager are
    threads, which Nova's eventlet patching makes green threads of, and
    the manager's wait blocks the one real thread they share, so a job
    sometimes never reached a worker and the exploration hung.
    """
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get('PYTHONPATH', '').split(
            os.pathsep) if p]))
    with tempfile.TemporaryDirectory(prefix='harness-explore-') as tmp:
        running = []
        options = [] if kept_cloud else ['--cloud-per-replay']
        for number in range(workers):
            jobs_path = os.path.join(tmp, 'jobs-%d' % number)
            results_path = os.path.join(tmp, 'results-%d' % number)
            with open(jobs_path, 'wb') as out:
                pickle.dump(jobs[number::workers], out)
            running.append((results_path, subprocess.Popen(
                [sys.executable, '-m', module, jobs_path, results_path]
                + options, env=env, stdin=subprocess.DEVNULL)))
        results = [None] * len(jobs)
        try:
            if done is not None:
                _follow(running, done)
            for number, (results_path, process) in enumerate(running):
                if process.wait() != 0:
                    raise errors.HarnessError(
                        'an explorer worker process failed (exit %d); its '
                        'output is above' % process.returncode)
                with open(results_path, 'rb') as source:
                    results[number::workers] = pickle.load(source)
        finally:
            for _, process in running:
                if process.poll() is None:
                    process.kill()
                    process.wait()
    return results


def _follow(running, done):
    """Call ``done`` for each job the worker processes note as ended."""
    seen = {}
    while True:
        for results_path, _ in running:
            try:
                with open(results_path + '.done') as note:
                    marks = note.read().split()
            except FileNotFoundError:
                marks = []
            for mark in marks[seen.get(results_path, 0):]:
                done(failed=mark == 'F')
            seen[results_path] = len(marks)
        alive = [process for _, process in running if process.poll() is None]
        if not alive:
            return
        try:
            # A bounded wait on one of them, not a sleep: it returns as
            # soon as that process ends.
            alive[0].wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass


def serve(replay, jobs_path, results_path, *options):
    """A worker process: ``replay(job, pool=...)`` each job in the file."""
    from harness.cloud import reuse
    with open(jobs_path, 'rb') as source:
        jobs = pickle.load(source)
    results = []

    def done(failed):
        # One line a job, for the explorer's progress (_follow).
        with open(results_path + '.done', 'a') as note:
            note.write('F\n' if failed else '.\n')

    with reuse.CloudPool() as pool:
        kept = None if '--cloud-per-replay' in options else pool
        for job in jobs:
            results.append(replay(job, pool=kept))
            done(results[-1]['failed'])
    with open(results_path, 'wb') as out:
        pickle.dump(results, out)
