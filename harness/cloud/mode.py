"""The process's concurrency mode, applied before Nova is imported.

``harness.core.concurrency.chosen()`` says which; here Nova's own
``monkey_patch.patch`` applies it, as Nova's service entry points do:
``backend='threading'`` leaves the process unpatched, starts oslo.service's
threading backend and poisons eventlet's import (nothing may import it
from then on: ``nova.monkey_patch.poison_eventlet``); ``'eventlet'``
monkey-patches the process. ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` is set
to match, so that Nova (and processes started from this one) read the same
mode wherever they ask.
"""

import inspect
import os
import sys

from harness.core import concurrency
from harness.core import errors

MODE = concurrency.chosen()
THREADING = MODE == concurrency.THREADING
EVENTLET = not THREADING


def _apply(mode):
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = (
        'true' if mode == concurrency.THREADING else 'false')
    from nova import monkey_patch
    # Nova 31 patches when nova.monkey_patch is imported and has no patch().
    if not hasattr(monkey_patch, 'patch'):
        if mode == concurrency.THREADING:
            raise errors.SetupError(
                'this Nova has no native threading mode; run it with %s=%s'
                % (concurrency.ENV, concurrency.EVENTLET))
        return
    if mode == concurrency.THREADING and 'eventlet' in sys.modules:
        raise errors.SetupError(
            'Nova is to run in native threading here, but eventlet was '
            'imported before harness.cloud (futurist, oslo.service and '
            'nova.context import it where they can): import harness.cloud, '
            'or the runner, before them, or set %s=%s' % (
                concurrency.ENV, concurrency.EVENTLET))
    if 'backend' in inspect.signature(monkey_patch.patch).parameters:
        monkey_patch.patch(backend=mode)
    else:
        # Nova 32's patch() takes no backend: it reads the variable set
        # above, as its services do.
        monkey_patch.patch()
    if monkey_patch.is_patched() != (mode == concurrency.EVENTLET):
        raise errors.SetupError(
            'Nova runs in %s mode here, not %s: something patched the '
            'process (or imported eventlet) before harness.cloud' % (
                concurrency.EVENTLET if monkey_patch.is_patched()
                else concurrency.THREADING, mode))


_apply(MODE)
concurrency.mark_running(MODE)


def original(name):
    """Module ``name`` as the interpreter has it, unpatched by eventlet.

    Under eventlet, its ``patcher.original``: a real ``os.waitpid`` or
    ``select.poll`` blocks the whole process instead of switching
    greenthreads. Under native threading nothing is patched.
    """
    if EVENTLET:
        from eventlet import patcher
        return patcher.original(name)
    import importlib
    return importlib.import_module(name)
