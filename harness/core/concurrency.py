"""Which concurrency mode Nova runs in: native threading or eventlet.

One process runs one mode (Nova's ``monkey_patch`` patches, or poisons
eventlet, once per process). The mode is chosen before anything imports
Nova: ``HARNESS_CONCURRENCY`` (``threading`` or ``eventlet``), which the
CLI's ``--concurrency`` sets for its own process and its children; unset,
the mode the installed Nova release deploys by default
(``default_for``): from Nova 34 (2026.2) every service starts in native
threading (``nova/conf/base.py``, ``concurrency_backend = auto``), before
it the compute service runs under eventlet.

Nothing here imports Nova or eventlet.
"""

import os

from harness.core import errors
from harness.core import versions

ENV = 'HARNESS_CONCURRENCY'
THREADING = 'threading'
EVENTLET = 'eventlet'
MODES = (THREADING, EVENTLET)
#: The first Nova release whose services default to native threading.
THREADING_DEFAULT_FROM = (34, 0, 0)


def default_for(version):
    """The mode Nova ``version`` (a tuple) deploys its compute in."""
    return THREADING if tuple(version) >= THREADING_DEFAULT_FROM \
        else EVENTLET


def chosen(environ=None):
    """The mode this process runs Nova in (see the module docstring)."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, '').strip().lower()
    if not value:
        return default_for(versions.nova_version())
    if value not in MODES:
        raise errors.SetupError(
            '%s=%r: say %s (unset: the installed Nova\'s default, %s)' % (
                ENV, environ.get(ENV), ' or '.join(MODES),
                default_for(versions.nova_version())))
    return value


def choose(mode, environ=None):
    """Run Nova in ``mode`` in this process and the processes it starts.

    Before anything imports Nova; a process that runs Nova already in
    another mode cannot change (one mode per process).
    """
    environ = os.environ if environ is None else environ
    if mode not in MODES:
        raise errors.SetupError('concurrency %r: say %s' % (
            mode, ' or '.join(MODES)))
    running = running_mode()
    if running is not None and running != mode:
        raise errors.SetupError(
            'this process already runs Nova in %s mode; %s mode needs a '
            'process of its own (one concurrency mode per process)' % (
                running, mode))
    environ[ENV] = mode


#: Set by ``harness.cloud`` once it has patched (or poisoned) the process.
_RUNNING = []


def running_mode():
    """The mode Nova runs in here, once ``harness.cloud`` is imported."""
    return _RUNNING[0] if _RUNNING else None


def mark_running(mode):
    _RUNNING[:] = [mode]
