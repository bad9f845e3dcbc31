"""Make pytest's unittest integration tolerate nova.test.TestCase cleanup.

pytest (_pytest/unittest.py, TestCaseFunction.runtest) sets the test method
as an instance attribute on the TestCase and delattr()s it after the run.
Nova's TestCase._clear_attrs cleanup has already deleted every public
instance attribute by then, so that delattr() raises AttributeError.
"""

from _pytest import unittest as pytest_unittest
import pytest


def _is_runtest_delattr_error(exc, item, testcase):
    """Whether exc is pytest's own failed delattr of the test method."""
    if not isinstance(exc, AttributeError) or item.name in vars(testcase):
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    # Raised directly in runtest() itself, not by anything it called.
    runtest = pytest_unittest.TestCaseFunction.runtest
    return tb.tb_frame.f_code is runtest.__code__


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item):
    if not isinstance(item, pytest_unittest.TestCaseFunction):
        return (yield)
    testcase = item.instance
    try:
        return (yield)
    except AttributeError as exc:
        if not _is_runtest_delattr_error(exc, item, testcase):
            raise
        # The test outcome was already recorded through item._excinfo by
        # the unittest result protocol; only the redundant delattr failed.
        return None
