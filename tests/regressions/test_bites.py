"""Proof that each regression test bites.

For every registered bug: its scenarios pass on Nova as installed, and
fail with the bug's reintroduction fixture in place, with a message that
names the broken accounting (allocations, usage, tracker or pinned CPUs).
"""

import os

import ddt

from harness import bugs
from harness.runners import runner
from harness.core import scenario as scenario_mod
from harness import testing

ACCOUNTING_WORDS = ('allocations of', 'usage of', 'tracker of',
                    'pinned CPUs on')


class _Bug(object):
    """A registered bug as ddt test data (ddt names tests by __name__)."""

    def __init__(self, bug):
        self.bug = bug
        self.__name__ = 'bug_%s' % bug.id


@ddt.ddt
class TestRegressionsBite(testing.TestCase):

    @ddt.data(*[_Bug(bug) for bug in bugs.known()])
    def test_passes_installed_fails_reintroduced(self, data):
        bug = data.bug
        scenarios = scenario_mod.load(bug.scenario_path)
        for scenario in scenarios:
            self.assertIn(bug.id, scenario.bugs, scenario.name)
            installed = runner.run(scenario, keep_going=True,
                                   test_id=self.id() + '.installed')
            self.assertEqual(
                [], [(e.label, e.problems) for e in installed.failed],
                'LP#%s: %s fails on installed Nova' % (bug.id,
                                                       scenario.name))
            reintroduced = runner.run(
                scenario, keep_going=True, fixtures=[bug.reintroduce()],
                test_id=self.id() + '.reintroduced')
            problems = [p for e in reintroduced.failed for p in e.problems]
            self.assertNotEqual(
                [], problems, 'LP#%s: %s passes with the bug reintroduced'
                % (bug.id, scenario.name))
            self.assertTrue(
                any(word in p for p in problems for word in ACCOUNTING_WORDS),
                'LP#%s: the failure does not name broken accounting: %s'
                % (bug.id, problems))

    @ddt.data(*[_Bug(bug) for bug in bugs.known()])
    def test_registered_with_story_fix_and_test(self, data):
        bug = data.bug
        self.assertTrue(os.path.isfile(bug.scenario_path), bug.scenario_path)
        fixture_doc = type(bug.reintroduce()).__doc__
        self.assertIn(bug.fix.split()[0], fixture_doc,
                      'the reintroduction must name the fixing commit')
        test_module = os.path.join(os.path.dirname(__file__),
                                   'test_bug_%s.py' % bug.id)
        self.assertTrue(os.path.isfile(test_module), test_module)
