"""Which scenario tests compare runs with and without checks."""

import fixtures
import testtools

from harness.core import errors
from harness.testing import cases


class TestComparePolicy(testtools.TestCase):

    def policy(self, value):
        self.useFixture(fixtures.EnvironmentVariable(cases.COMPARE_ENV,
                                                     value))
        return cases.compare_policy()

    def test_every_test_compares_unless_told(self):
        self.assertEqual('all', self.policy(None))
        self.assertEqual('all', self.policy(''))

    def test_one_per_file(self):
        self.assertEqual('one-per-file', self.policy('one-per-file'))

    def test_a_policy_we_do_not_know_is_refused_by_name(self):
        error = self.assertRaises(errors.HarnessError, self.policy, 'some')
        self.assertIn(cases.COMPARE_ENV, str(error))
        self.assertIn("'some'", str(error))
        self.assertIn('one-per-file', str(error))
