"""Nova and Placement in one process: the ``Cloud`` fixture and its parts.

Importing any module here imports Nova, in the concurrency mode this
process runs it in (``harness.core.concurrency``): native threading (Nova
34's default: eventlet is then poisoned, as Nova's own services do it) or
eventlet (the process is monkey-patched first).
"""

# Patched (or poisoned) before any module here imports Nova (reuse.py, say,
# imports nova.context before nova_env): oslo.db keeps a context's open
# transaction in a threading.local subclass made when oslo.db is imported,
# so made before eventlet's patching it is one per OS thread, shared by
# every greenthread; a greenthread's write then joins another's
# transaction and is lost with it (a build's port allocation left an empty
# network info cache whenever the first harness module imported was not
# nova_env).
from harness.cloud import mode  # noqa: F401
