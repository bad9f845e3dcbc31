"""The step registry: every step kind a scenario may use, one unit each.

Each module of this package defines one or more step kinds
(``base.StepKind`` subclasses) and exports them as ``KIND`` or ``KINDS``;
the registry finds them by walking the package, so adding an operation
is adding a module (and its tests). The loader, the runner, the explorer
and the invariants ask the registry; none has a switch on step kinds.
"""

import importlib
import pkgutil

from harness.core.steps import base

_REGISTRY = {}


def _discover():
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name == 'base':
            continue
        module = importlib.import_module('%s.%s' % (__name__, info.name))
        kinds = getattr(module, 'KINDS', None) or (module.KIND,)
        for kind in kinds:
            if kind.name in found:  # pragma: no cover - a unit's mistake
                raise RuntimeError('step kind %r is defined twice'
                                   % kind.name)
            found[kind.name] = kind
    return found


def registry():
    """Step kind name -> its unit, discovered once."""
    if not _REGISTRY:
        _REGISTRY.update(_discover())
    return _REGISTRY


def get(name):
    """The unit of step kind ``name``."""
    try:
        return registry()[name]
    except KeyError:
        raise base.unknown_kind(name, names())


def names():
    """Every step kind, operations first, each group in name order."""
    kinds = registry().values()
    return tuple(sorted((k.name for k in kinds), key=lambda n: (
        not registry()[n].operation, n)))


def operations():
    """The kinds that act on a server through Nova's API."""
    return tuple(n for n in names() if registry()[n].operation)


def moves():
    """The kinds at whose race points the explorer injects periodics."""
    return tuple(n for n in names() if registry()[n].moves)
