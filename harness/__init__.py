"""nova-harness: real Nova and Placement in one process, checked per step.

The public API is the names in ``__all__`` and ``__version__``; a Nova
developer needs nothing else:

- ``TestCase`` (every test's base: it fails a test that leaks config,
  patches, threads or files) and ``ScenarioTestCase`` (runs scenarios
  with the invariants on);
- ``Cloud``, the fixture that stands up Nova and Placement, and
  ``CloudPool``, which keeps a cloud between runs of one shape;
- ``load_scenarios(path)`` and ``run_scenario(scenario, ...)``;
- ``build_tests(path, loader)``, which turns a folder of scenario files
  into test classes for a ``load_tests`` hook (one class per file, one
  test per scenario);
- ``related_bug``, which ties a test to a Launchpad bug;
- for a test in Nova's own tree, on Nova's test base classes (no
  ``Cloud``): ``ProfiledCompute`` (a compute shaped by a host profile),
  ``PerHostConfig`` (each compute its own host-local options),
  ``RacePoint`` with ``periodic`` and ``kill`` (act at a compute RPC
  method), ``VirtualClock`` and ``PlacementFault``, and ``ComputeDied``;
- the errors: ``HarnessError`` (the base of all), ``ScenarioError`` (a bad
  scenario file), ``ProfileError`` (a bad host profile),
  ``OperationFailed`` (Nova did not reach the resting state) and
  ``ScenarioFailed`` (an expectation or invariant broke), and ``Problem``,
  the record a failed check carries.

Everything else (every sub-package and module under ``harness``) is
private and may change without notice.

The names resolve lazily (PEP 562): ``import harness.core`` runs this
file first, and the core must not import Nova or eventlet
(``tests/unit/test_layers.py``), so ``harness.Cloud`` imports Nova the
first time it is asked for, not before.
"""

import importlib
import typing

#: Kept in step with ``version`` in pyproject.toml (a unit test checks it).
__version__ = '0.2.0'

# Public name -> (module, attribute). The modules are private: the name
# here is the promise, where it lives is not.
_EXPORTS = {
    'TestCase': ('harness.testing.cases', 'TestCase'),
    'ScenarioTestCase': ('harness.testing.cases', 'ScenarioTestCase'),
    'Cloud': ('harness.cloud.fixture', 'Cloud'),
    'CloudPool': ('harness.cloud.reuse', 'CloudPool'),
    'load_scenarios': ('harness.core.scenario', 'load'),
    'build_tests': ('harness.testing.suites', 'build_tests'),
    'run_scenario': ('harness.runners.runner', 'run'),
    'related_bug': ('harness.bugs', 'related_bug'),
    'ProfiledCompute': ('harness.testing.in_nova', 'ProfiledCompute'),
    'PerHostConfig': ('harness.testing.host_config', 'PerHostConfig'),
    'RacePoint': ('harness.testing.in_nova', 'RacePoint'),
    'periodic': ('harness.testing.in_nova', 'periodic'),
    'kill': ('harness.testing.in_nova', 'kill'),
    'VirtualClock': ('harness.testing.in_nova', 'VirtualClock'),
    'PlacementFault': ('harness.testing.in_nova', 'PlacementFault'),
    'ComputeDied': ('harness.testing.in_nova', 'ComputeDied'),
    'HarnessError': ('harness.core.errors', 'HarnessError'),
    'ScenarioError': ('harness.core.errors', 'ScenarioError'),
    'ScenarioFailed': ('harness.core.errors', 'ScenarioFailed'),
    'OperationFailed': ('harness.core.errors', 'OperationFailed'),
    'ProfileError': ('harness.core.errors', 'ProfileError'),
    'Problem': ('harness.core.problems', 'Problem'),
}

__all__ = sorted(_EXPORTS)

if typing.TYPE_CHECKING:  # pragma: no cover
    # For type checkers and IDEs, which do not run __getattr__.
    from harness.bugs import related_bug  # noqa: F401
    from harness.cloud.fixture import Cloud  # noqa: F401
    from harness.cloud.reuse import CloudPool  # noqa: F401
    from harness.core.errors import HarnessError  # noqa: F401
    from harness.core.errors import OperationFailed  # noqa: F401
    from harness.core.errors import ProfileError  # noqa: F401
    from harness.core.errors import ScenarioError  # noqa: F401
    from harness.core.errors import ScenarioFailed  # noqa: F401
    from harness.core.problems import Problem  # noqa: F401
    from harness.core.scenario import load as load_scenarios  # noqa: F401
    from harness.runners.runner import run as run_scenario  # noqa: F401
    from harness.testing.cases import ScenarioTestCase  # noqa: F401
    from harness.testing.cases import TestCase  # noqa: F401
    from harness.testing.host_config import PerHostConfig  # noqa: F401
    from harness.testing.in_nova import ComputeDied  # noqa: F401
    from harness.testing.in_nova import kill  # noqa: F401
    from harness.testing.in_nova import periodic  # noqa: F401
    from harness.testing.in_nova import PlacementFault  # noqa: F401
    from harness.testing.in_nova import ProfiledCompute  # noqa: F401
    from harness.testing.in_nova import RacePoint  # noqa: F401
    from harness.testing.in_nova import VirtualClock  # noqa: F401
    from harness.testing.suites import build_tests  # noqa: F401


def __getattr__(name):
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(
            'module %r has no attribute %r' % (__name__, name)) from None
    value = getattr(importlib.import_module(module), attribute)
    # Once resolved, a plain attribute: __getattr__ is not asked again.
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
