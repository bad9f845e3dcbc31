"""What invariants share: views of a snapshot in a tracker's terms, a
step's units, and the words problems are written in."""

from harness.core import snapshot as snapshot_mod
from harness.core import steps as steps_mod
from harness.core.steps import base as steps_base

# An evacuation whose source has not cleaned up yet (Nova's evacuate uses
# no migration consumer; see one_compute_node_per_consumer).
EVACUATING = frozenset(('accepted', 'pre-migrating', 'done'))
EVACUATION = 'evacuation'
# What tracker_agrees compares, per host, and Placement's classes behind
# each: the same keys the step kinds' windows bound.
TRACKER_KEYS = steps_base.TRACKER_KEYS
KEY_RCS = steps_base.KEY_RCS
KEY_NAMES = {'vcpus': 'vcpus_used (VCPU+PCPU)',
             'memory_mb': 'memory_mb_used (MEMORY_MB)',
             'local_gb': 'local_gb_used (DISK_GB)',
             'pinned': 'pinned CPUs (PCPU)'}


def latest(snap, server):
    """The latest migration of ``server``, or ``None``."""
    return snap.migrations.get(snapshot_mod.MIGRATION % server)


def reserved(snap, node, rc):
    rp = snap.providers.get(node)
    if rp is None:
        return 0
    return rp.inventories.get(rc, {}).get('reserved', 0)


def tracker_view(snap, node):
    """The guests a tracker counts, in ``TRACKER_KEYS`` (reserved off)."""
    tracker = snap.trackers[node]
    return {'vcpus': tracker.vcpus_used - reserved(snap, node, 'VCPU'),
            'memory_mb': (tracker.memory_mb_used
                          - reserved(snap, node, 'MEMORY_MB')),
            'local_gb': (tracker.local_gb_used
                         - reserved(snap, node, 'DISK_GB')),
            'pinned': len(tracker.pinned_cpus)}


def step_units(step):
    """(unit, args) of a step's kind and of the requests sent in it.

    A request sent in the middle of a step (``inject: do``) is tied to it
    by the loader (``Step.interjected``): its windows are the step's.
    """
    return [(steps_mod.get(step.kind), step.args)] + [
        (steps_mod.get(sent.kind), sent.args)
        for sent in getattr(step, 'interjected', ())]


def fmt(resources):
    return ' '.join('%s=%s' % (rc, resources[rc])
                    for rc in sorted(resources)) or 'nothing'


def fmt_held(held):
    return '; '.join('%s on %s' % (fmt(res), provider)
                     for provider, res in sorted(held.items()))


def cpus(ids):
    return '[%s]' % snapshot_mod.format_cpus(ids)
