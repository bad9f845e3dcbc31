"""Deep copies of Nova's state that keep its in-memory object graphs.

``copy.deepcopy`` of a Nova object goes through
``VersionedObject.__deepcopy__``, which copies the object's fields only:
whatever else the object holds in memory is dropped. Nova builds some of
its graphs from exactly such attributes: a ``PciDevice``'s
``parent_device`` and ``child_devices`` (the PF/VF tree the PCI tracker
builds, "not proper fields ... as they would hold circular references"),
which ``claim``, ``allocate`` and ``free`` follow to make a PF unavailable
while one of its VFs is used and available again once they are all free.
A checkpoint put back from such copies has lost the tree: a VF claimed
after it leaves its PF claimable.

``keeping_links(thing, memo)`` copies as ``copy.deepcopy`` does and then
gives every copied Nova object the attributes outside its fields that the
original had, copied through the same memo: a VF's copy names its PF's
copy as ``parent_device``, and that PF's copy lists the VFs' copies,
the very objects in the copied device list.
"""

import copy

from oslo_versionedobjects import base as ovo_base

# What VersionedObject.__deepcopy__ sets itself (fields are stored as
# '_obj_<name>'): everything else an object holds is put back here.
_OWN = frozenset(('_context', '_changed_fields'))


def keeping_links(thing, memo=None):
    """A deep copy of ``thing`` whose Nova objects keep their links.

    ``memo`` is ``copy.deepcopy``'s: what it maps is shared, not copied.
    """
    memo = {} if memo is None else memo
    copied = copy.deepcopy(thing, memo)
    done = set()
    while True:
        # copy.deepcopy keeps every original it copied alive in the list
        # at memo[id(memo)]; copying the extra attributes below may copy
        # more Nova objects, so go round until none is new.
        originals = [original for original in memo.get(id(memo), ())
                     if isinstance(original, ovo_base.VersionedObject)
                     and id(original) not in done]
        if not originals:
            return copied
        for original in originals:
            done.add(id(original))
            twin = memo[id(original)]
            for name, value in list(vars(original).items()):
                if name in _OWN or name.startswith('_obj_'):
                    continue
                vars(twin)[name] = copy.deepcopy(value, memo)
