"""``within_capacity``: no usage exceeds what a provider can give."""

from harness.core.checks import base
from harness.core.problems import Problem


class WithinCapacity(base.Invariant):
    """No usage exceeds what a provider can give.

    No usage exceeds ``(total - reserved) * allocation_ratio``, and no
    provider uses a class it has no inventory of.
    """

    name = 'within_capacity'
    order = 70
    summary = 'No usage exceeds (total - reserved) x allocation_ratio.'

    def check(self, context):
        return within_capacity(context.snapshot)


def within_capacity(snap):
    problems = []
    for name in sorted(snap.providers):
        rp = snap.providers[name]
        for rc, used in sorted(rp.usages.items()):
            inventory = rp.inventories.get(rc)
            if inventory is None:
                problems.append(Problem(
                    'within_capacity', 'provider %s, %s' % (name, rc),
                    text=(
                        'within_capacity: provider %s uses %s %s but has no '
                        'inventory of it' % (name, used, rc))))
                continue
            capacity = ((inventory['total'] - inventory.get('reserved', 0))
                        * inventory.get('allocation_ratio', 1.0))
            if used > capacity:
                problems.append(Problem(
                    'within_capacity', 'provider %s, %s' % (name, rc),
                    expected=_number(capacity), actual=used,
                    text=(
                        'within_capacity: provider %s, %s: usage %s exceeds '
                        'capacity %s = (total %s - reserved %s) x '
                        'allocation_ratio %s (consumers: %s)' % (
                            name, rc, used, _number(capacity),
                            inventory['total'], inventory.get('reserved', 0),
                            inventory.get('allocation_ratio', 1.0), ', '.join(
                                '%s=%s' % (c, res[rc]) for c, res in sorted(
                                    snap.allocations_against(name).items())
                                if rc in res)))))
    return problems


def _number(value):
    return int(value) if float(value).is_integer() else value


CHECK = WithinCapacity()
