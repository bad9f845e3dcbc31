"""Worker processes, their watchdog, busy processes and hash seeds.

``Pool`` runs jobs in ``workers`` spawned processes (or in this one):
each worker stops with its parent, imports Nova once, and ends itself
when a run outlives its timeout (``watchdog``), leaving every
greenthread's stack for the parent (``collect_hangs``). ``Burners`` keep
CPUs busy meanwhile. A pool's workers run under the hash seed its
environment had when they were spawned (``hash_seed_environ``); which
seed a run gets is ``seed_for``'s choice.
"""

import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys

from harness.runners import determinism
from harness.runners import options

# Whether this process is a pool's worker (its runs get a watchdog).
_IN_WORKER = False
EXIT_HUNG = 3
MAX_HASH_SEED = 4294967295


def _worker_init(parent):
    # The parent handles Ctrl-C and stops the workers itself; if it is
    # killed outright, the kernel stops them (Linux).
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    if determinism.ROOT not in sys.path:
        sys.path.insert(0, determinism.ROOT)
    os.chdir(determinism.ROOT)
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


def watchdog(job):
    """In a worker: end the process if ``job`` runs past its timeout.

    A real thread (not a greenthread) waits; on time-out it writes every
    greenthread's stack to ``job['hangs']/<pid>.json`` and exits, so the
    parent records the run as hung and goes on with a fresh worker.
    Returns an event to set when the run is over; None (no watchdog) in
    a process that is no worker, or for a job without a timeout.
    """
    if not (_IN_WORKER and job.get('timeout')):
        return None
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


def seed_for(number, hash_seeds):
    """The hash seed run ``number`` (1-based) runs under, or None.

    Seeds go round with the run numbers: run N gets
    ``hash_seeds[(N - 1) % len(hash_seeds)]``, so every test has runs
    under every seed once there are as many runs as seeds.
    """
    if not hash_seeds:
        return None
    return hash_seeds[(number - 1) % len(hash_seeds)]


def parse_hash_seeds(text):
    """``--hash-seeds``' value as a list of ints; ``UsageError`` if bad."""
    seeds = []
    for part in text.split(','):
        part = part.strip()
        if not re.fullmatch('[0-9]+', part) or int(part) > MAX_HASH_SEED:
            raise options.UsageError(
                '--hash-seeds %r: %r is not a hash seed (an integer from 0 '
                'to %d)' % (text, part, MAX_HASH_SEED))
        if int(part) in seeds:
            raise options.UsageError(
                '--hash-seeds %r: seed %d is given twice' % (text, int(part)))
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
        raise options.UsageError('--hash-seeds needs at least one seed')
    for seed in seeds:
        if (not isinstance(seed, int) or isinstance(seed, bool)
                or not 0 <= seed <= MAX_HASH_SEED):
            raise options.UsageError(
                '--hash-seeds: %r is not a hash seed (an integer from 0 to '
                '%d)' % (seed, MAX_HASH_SEED))
    if len(set(seeds)) < len(seeds):
        raise options.UsageError(
            '--hash-seeds: a seed is given twice (%s)'
            % ','.join(str(seed) for seed in seeds))
    if not workers:
        raise options.UsageError(
            '--hash-seeds needs worker processes (--workers 1 or more): a '
            'run in this process keeps the hash seed it started with')
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


def collect_hangs(directory):
    """The hang records workers left in ``directory`` (then removed)."""
    hangs = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith('.json'):
            with open(path) as source:
                hangs.append(json.load(source))
            os.remove(path)
    return hangs
