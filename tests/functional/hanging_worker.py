"""An explorer worker process one of whose replays hangs inside Nova.

``python -m tests.functional.hanging_worker JOBS RESULTS`` serves as the
explorer's module does (``workers.serve`` of ``explorer.replay``), but a
job with ``hang_on`` (a FIFO's path) replays with Nova's API resize
waiting to open that FIFO for reading, which nothing ever opens for
writing: the replay's main thread, which carries the API request (over
wsgi-intercept), waits there for good, in either concurrency mode (a
blocking open, which eventlet does not make green), below any bound of
the cloud's on its waits.
"""

import sys

import fixtures

from harness.runners import explorer
from harness.runners import workers


def wait_forever(fifo):
    """Wait for a writer of ``fifo`` that never comes."""
    with open(fifo) as never_written:
        never_written.read()


def replay(job, pool=None):
    if 'hang_on' not in job:
        return explorer.replay(job, pool=pool)

    def resize(*args, **kwargs):
        wait_forever(job['hang_on'])
    # By name: Nova is imported in the process's concurrency mode, by
    # the replay (harness.cloud.mode), not here.
    with fixtures.MonkeyPatch('nova.compute.api.API.resize', resize):
        return explorer.replay(job, pool=pool)


if __name__ == '__main__':
    workers.serve(replay, *sys.argv[1:])
