"""The check registry: every expectation key and invariant, one unit each.

Each module of ``harness.core.checks.expect`` is one expectation key and
each module of ``harness.core.checks.invariant`` one invariant; each
exports its unit (``base.Expectation``, ``base.Invariant``) as ``CHECK``.
The registry finds them by walking the two packages, as the step
registry finds step kinds, so adding a check is adding a module (and its
tests): the loader (``harness.core.expect``), the ``Checker``
(``harness.core.invariants``), ``Problem.kind`` and ``Problem.accounting``
and the lists of names derived from these (``expect.EXPECT_KEYS``,
``invariants.INVARIANTS``, ``problems.EXPECTATIONS``,
``problems.ACCOUNTING``) ask the registry and nothing else.
"""

import importlib
import pkgutil

from harness.core.checks import base

_REGISTRY = {}
# Sub-package -> the kind of unit each of its modules exports.
_PACKAGES = (('expect', base.Expectation), ('invariant', base.Invariant))


def _discover():
    found = {}
    for package_name, kind in _PACKAGES:
        package = importlib.import_module('%s.%s' % (__name__, package_name))
        for info in sorted(pkgutil.iter_modules(package.__path__),
                           key=lambda info: info.name):
            module = importlib.import_module('%s.%s' % (package.__name__,
                                                        info.name))
            unit = getattr(module, 'CHECK', None)
            if not isinstance(unit, kind):
                raise RuntimeError('%s exports no %s as CHECK' % (
                    module.__name__, kind.__name__))
            if unit.name in found:
                raise RuntimeError('check %r is defined twice' % unit.name)
            found[unit.name] = unit
    return dict(sorted(found.items(),
                       key=lambda item: (item[1].order, item[0])))


def registry():
    """Check name -> its unit, each kind in its declared order."""
    if not _REGISTRY:
        _REGISTRY.update(_discover())
    return _REGISTRY


def expectations():
    """Expectation key -> its unit, in the order keys are checked."""
    return {name: unit for name, unit in registry().items()
            if isinstance(unit, base.Expectation)}


def invariants():
    """Invariant name -> its unit, in the order the Checker runs them."""
    return {name: unit for name, unit in registry().items()
            if isinstance(unit, base.Invariant)}


def get(name):
    """The unit of check ``name`` (an expectation key or an invariant)."""
    try:
        return registry()[name]
    except KeyError:
        raise ValueError('unknown check %r; known: %s' % (
            name, ', '.join(registry())))


def accounting():
    """The checks whose failure is wrong accounting."""
    return frozenset(name for name, unit in registry().items()
                     if unit.accounting)
