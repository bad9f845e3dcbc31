"""A worker process for ``run_in_workers`` whose jobs replay nothing.

``python -m tests.unit.stand_in_worker JOBS RESULTS`` serves as the
explorer's module does (``workers.serve``), with no cloud: each job is a
dict saying what its stand-in replay does, in this order:

- ``pid_to``: write this process's pid to that file;
- ``met``: open that FIFO for reading and close it (it waits until
  another job opens it for writing: the two meet there);
- ``meet``: open that FIFO for writing and close it (it waits for a
  ``met``);
- ``wait_on``: open that FIFO for reading, which nothing ever opens for
  writing: it waits there for good (``wait_forever``);
- ``lasts``: take that many seconds (a replay's length: a sleep,
  waiting on nothing);

and its result is ``{'failed': job['failed'], 'name': job['name']}``.
"""

import contextlib
import errno
import os
import sys
import time

from harness.runners import workers


def wait_forever(fifo):
    """Wait for a writer of ``fifo`` that never comes."""
    with open(fifo) as never_written:
        never_written.read()


def release(fifo):
    """End any wait to open ``fifo`` for reading (and its reads)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as exc:
        # Nobody is waiting to read it.
        if exc.errno != errno.ENXIO:
            raise


def replay(job, pool=None):
    if 'pid_to' in job:
        with open(job['pid_to'], 'w') as note:
            note.write('%d\n' % os.getpid())
    if 'met' in job:
        open(job['met']).close()
    if 'meet' in job:
        open(job['meet'], 'w').close()
    if 'wait_on' in job:
        wait_forever(job['wait_on'])
    if 'lasts' in job:
        time.sleep(job['lasts'])
    return {'failed': job.get('failed', False), 'name': job['name']}


if __name__ == '__main__':
    workers.serve(replay, *sys.argv[1:], pool=contextlib.nullcontext())
