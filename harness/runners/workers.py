"""The explorer's replays from the start, in worker processes.

``run_in_workers`` gives each of N processes (``python -m MODULE JOBS
RESULTS``: the explorer's module, whose main is ``serve``) every N-th
job in a file; each replays its jobs (``explorer.replay``) on one cloud
kept for all of them (``reuse.CloudPool``: put back to its state before
any step between them) and writes their results to another file.

A job still running ``timeout`` seconds after it started (a deadlock
inside Nova or its fixtures, a wait without a bound) ends the
exploration, as a forked replay does (``harness.runners.branching``):
each process notes when it starts each job and when it ends it, in files
beside its results, which the explorer reads while it waits
(``_follow``). Past a job's bound the explorer signals its process
(``branching.STACKS_SIGNAL``), which writes every thread's stack (and
green thread's, under eventlet) to a file and ends
(``branching.arm_stacks``); it is given ``branching.DUMP_GRACE`` for
that, then killed, as are the other processes; the stacks are kept in
``dump_dir`` and ``WorkerHung`` is raised, naming the job.
"""

import os
import pickle
import subprocess
import sys
import tempfile
import time

from harness.core import errors
from harness.runners import branching

#: Seconds between two looks at the processes' notes while none ends
#: (the progress shown; a job's bound is looked at when it falls due).
FOLLOW_EVERY = 2.0


class WorkerHung(branching.ChildHung):
    """A replay in a worker process still running past its bound: killed.

    As ``ChildHung`` (which a caller catches for either): ``replay``,
    what it replays; ``seconds``, its bound; ``stacks``, the file they
    were kept in; ``pid``, its worker process's (killed, with the other
    workers). ``status`` is None and ``forked_by`` empty.
    """

    def __init__(self, replay, seconds, stacks, pid):
        self.replay = replay
        self.seconds = seconds
        self.stacks = stacks
        self.pid = pid
        self.status = None
        self.forked_by = ()
        errors.HarnessError.__init__(self, (
            'a replay in an explorer worker process was still running '
            'after %s s (--replay-timeout), and was killed with the '
            'workers: %s (pid %d); its stacks are in %s' % (
                '%g' % seconds, replay, pid, stacks)))

    def __reduce__(self):
        return (WorkerHung, (self.replay, self.seconds, self.stacks,
                             self.pid))


def run_in_workers(module, jobs, workers, kept_cloud=True, done=None,
                   timeout=None, dump_dir=None, describe=None):
    """Replay each job in ``workers`` processes; results in job order.

    Each process runs ``python -m module``, which ``serve``s.

    ``done(failed=...)`` is called as each job ends (each process notes
    that in a file the explorer reads while it waits).

    ``timeout``: seconds a job may run (``branching.replay_timeout``:
    ``REPLAY_TIMEOUT`` unless given); one still running then raises
    ``WorkerHung``, named by ``describe(number)`` (its index in
    ``jobs``), its stacks kept in ``dump_dir`` (default: the system's
    temporary directory). See the module docstring.

    Each process gets every ``workers``-th job in a file and writes its
    results to another; the explorer only waits for the processes to end.
    Not ``multiprocessing``: its queues and its pool's manager are
    threads, which Nova's eventlet patching makes green threads of, and
    the manager's wait blocks the one real thread they share, so a job
    sometimes never reached a worker and the exploration hung.
    """
    timeout = branching.replay_timeout(timeout)
    dump_dir = dump_dir or tempfile.gettempdir()
    describe = describe or (lambda number: 'replay %d' % number)
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
            # Its temporary files in here, which goes at the end: a
            # worker killed (hung) leaves nothing behind.
            own_tmp = os.path.join(tmp, 'tmp-%d' % number)
            os.mkdir(own_tmp)
            running.append((results_path, subprocess.Popen(
                [sys.executable, '-m', module, jobs_path, results_path]
                + options, env=dict(env, TMPDIR=own_tmp),
                stdin=subprocess.DEVNULL)))
        results = [None] * len(jobs)
        try:
            hung = _follow(running, done or (lambda failed: None), timeout)
            if hung is not None:
                number, nth = hung
                raise _hung(running[number], number + nth * workers,
                            timeout, dump_dir, describe)
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


def _follow(running, done, timeout):
    """Call ``done`` for each job the worker processes note as ended.

    Returns once every process has ended (None), or as soon as one's job
    has run past ``timeout`` seconds: ``(its process's number, which of
    its jobs)``, the one that started first if several have.
    """
    seen = {}
    while True:
        deadlines = []
        for number, (results_path, process) in enumerate(running):
            # Started, then ended: a job counted as running was, when its
            # end was looked for.
            started = _notes(results_path + '.started')
            marks = _notes(results_path + '.done')
            for mark in marks[seen.get(results_path, 0):]:
                done(failed=mark == 'F')
            seen[results_path] = len(marks)
            if len(started) > len(marks) and process.poll() is None:
                deadlines.append((float(started[len(marks)]) + timeout,
                                  number, len(marks)))
        now = time.monotonic()
        past = sorted(deadline for deadline in deadlines
                      if deadline[0] <= now)
        if past:
            return past[0][1:]
        alive = [process for _, process in running if process.poll() is None]
        if not alive:
            return None
        try:
            # A bounded wait on one of them, not a sleep: it returns as
            # soon as that process ends, and at the first job's bound.
            alive[0].wait(timeout=min(
                [FOLLOW_EVERY] + [until - now for until, _, _ in deadlines]))
        except subprocess.TimeoutExpired:
            pass


def _notes(path):
    """The whole lines of a process's notes file (none if not yet made)."""
    try:
        with open(path) as source:
            text = source.read()
    except FileNotFoundError:
        return []
    # The last is being written, or empty.
    return text.split('\n')[:-1]


def _hung(worker, number, timeout, dump_dir, describe):
    """The worker process running job ``number``, past its bound.

    Takes its stacks, kills it; returns the error to raise
    (``WorkerHung``). ``worker``: ``(results path, process)``.
    """
    results_path, process = worker
    try:
        process.send_signal(branching.STACKS_SIGNAL)
    except OSError:
        pass
    try:
        # It writes its stacks and ends (``branching.arm_stacks``), unless
        # its main thread never gets back to Python: faulthandler wrote
        # its part by then.
        process.wait(timeout=branching.DUMP_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    path = branching.keep_stacks(
        results_path + '.stacks', dump_dir, process.pid, timeout,
        '%s (pid %d), in an explorer worker process of pid %d' % (
            describe(number), process.pid, os.getpid()))
    return WorkerHung(describe(number), timeout, path, process.pid)


def serve(replay, jobs_path, results_path, *options, pool=None):
    """A worker process: ``replay(job, pool=...)`` each job in the file.

    ``pool``: a context manager giving the cloud pool the jobs share
    (default: a ``reuse.CloudPool``); with ``--cloud-per-replay`` in
    ``options`` it is not handed to ``replay``.
    """
    if pool is None:
        from harness.cloud import reuse
        pool = reuse.CloudPool()
    with open(jobs_path, 'rb') as source:
        jobs = pickle.load(source)
    results = []
    # Its stacks on the explorer's signal, for a job past its bound.
    branching.arm_stacks(results_path + '.stacks')

    def note(suffix, line):
        # One line a job, for the explorer (``_follow``).
        with open(results_path + suffix, 'a') as sink:
            sink.write(line + '\n')

    with pool as kept:
        if '--cloud-per-replay' in options:
            kept = None
        for job in jobs:
            # time.monotonic is system-wide on Linux: the explorer's.
            note('.started', repr(time.monotonic()))
            results.append(replay(job, pool=kept))
            note('.done', 'F' if results[-1]['failed'] else '.')
    with open(results_path, 'wb') as out:
        pickle.dump(results, out)
