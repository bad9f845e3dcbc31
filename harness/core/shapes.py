"""What a cloud must have for a scenario to run on it, as a key.

Two scenarios with the same key can run one after the other on one
cloud put back to its checkpoint (``harness.cloud.reuse``): the same
Nova options, and the same hosts (name, driver, profile and whatever
else a host entry says). Flavors and images are not part of it: a kept
cloud's checkpoint is taken before any is made, and each run makes its
own after the cloud is put back.
"""

import dataclasses


def cloud_shape(scenario):
    """The key of the cloud ``scenario`` needs (comparable, printable)."""
    return (
        sorted((group, sorted(options.items()))
               for group, options in scenario.config.items()),
        sorted(repr(dataclasses.astuple(host))
               for host in scenario.hosts.values()),
        sorted(scenario.limits.items()),
        sorted(scenario.weights.items()))


def in_shape_order(scenarios):
    """``scenarios`` with those of one shape together (a stable order).

    Shapes come in the order of their first scenario; within a shape the
    scenarios keep their order. Run in this order, each shape's cloud is
    stood up once.
    """
    first = {}
    for scenario in scenarios:
        first.setdefault(repr(cloud_shape(scenario)), len(first))
    return sorted(scenarios,
                  key=lambda s: first[repr(cloud_shape(s))])
