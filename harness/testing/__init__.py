"""Test-case classes, the leak check and the pytest plugin."""

from harness.testing.cases import COMPARE_ENV  # noqa: F401
from harness.testing.cases import ScenarioTestCase  # noqa: F401
from harness.testing.cases import TestCase  # noqa: F401
