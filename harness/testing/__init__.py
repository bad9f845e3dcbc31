"""Test-case classes, suites built from scenario files, the leak check.

The pytest plugin is ``harness.testing.pytest_plugin``.
"""

from harness.testing.cases import COMPARE_ENV  # noqa: F401
from harness.testing.cases import ScenarioTestCase  # noqa: F401
from harness.testing.cases import TestCase  # noqa: F401
from harness.testing.suites import build_bug_tests  # noqa: F401
from harness.testing.suites import build_tests  # noqa: F401
from harness.testing.suites import in_shape_order  # noqa: F401
from harness.testing.suites import OrderedSuite  # noqa: F401
from harness.testing.suites import scenario_of  # noqa: F401
