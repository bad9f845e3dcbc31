"""Nova and Placement in one process: the ``Cloud`` fixture and its parts.

Importing any module here imports Nova (and lets it patch the process for
eventlet).
"""

# Eventlet's patching before any module here imports Nova (reuse.py, say,
# imports nova.context before nova_env): oslo.db keeps a context's open
# transaction in a threading.local subclass made when oslo.db is imported,
# so made before the patching it is one per OS thread, shared by every
# greenthread; a greenthread's write then joins another's transaction and
# is lost with it (a build's port allocation left an empty network info
# cache whenever the first harness module imported was not nova_env).
from nova import monkey_patch

# Nova 31 patches when nova.monkey_patch is imported and has no patch().
if hasattr(monkey_patch, 'patch'):
    monkey_patch.patch()
