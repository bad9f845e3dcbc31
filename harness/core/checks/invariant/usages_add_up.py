"""``usages_add_up``: each provider's usage is what its consumers hold."""

from harness.core.checks import base
from harness.core.problems import Problem


class UsagesAddUp(base.Invariant):
    """Each provider's usage is what its consumers hold.

    Placement's usage of each provider, class by class, is the sum of the
    allocations against it.
    """

    name = 'usages_add_up'
    order = 10
    summary = ("Each provider's usage is the sum of the allocations "
               "against it.")

    def check(self, context):
        return usages_add_up(context.snapshot)


def usages_add_up(snap):
    problems = []
    for name in sorted(snap.providers):
        total = {}
        held = snap.allocations_against(name)
        for resources in held.values():
            for rc, amount in resources.items():
                total[rc] = total.get(rc, 0) + amount
        usages = snap.providers[name].usages
        for rc in sorted(set(total) | set(usages)):
            if total.get(rc, 0) != usages.get(rc, 0):
                parts = ', '.join(
                    '%s=%s' % (consumer, held[consumer][rc])
                    for consumer in sorted(held) if rc in held[consumer])
                problems.append(Problem(
                    'usages_add_up', 'provider %s, %s' % (name, rc),
                    expected=total.get(rc, 0), actual=usages.get(rc, 0),
                    text=(
                        'usages_add_up: provider %s, %s: Placement usage %s, '
                        'allocations add up to %s (%s)' % (
                            name, rc, usages.get(rc, 0), total.get(rc, 0),
                            parts or 'no consumer'))))
    return problems


CHECK = UsagesAddUp()
