"""Expectations checked at a race point, while the operation waits there.

A live migration between Nova's fake hosts: when the source's
``live_migration`` starts, the conductor has given the guest's
allocation to the destination and left the source's to the migration
(``LiveMigrationTask``: ``replace_allocation_with_migration``, then the
scheduler's claim on the destination); after the step, the migration's
is gone (``_post_live_migration``).
"""

from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.runners import runner
from harness import testing

SMALL = 'small'


def _scenario(at_point):
    return scenario_mod.parse({
        'name': 'check at a point',
        'hosts': {'src': {'driver': 'fake'}, 'dst': {'driver': 'fake'}},
        'flavors': {SMALL: {'vcpus': 1, 'ram': 512, 'disk': 1}},
        'steps': [
            {'boot': {'server': 'vm1', 'flavor': SMALL, 'host': 'src'}},
            {'inject': {'before': 'live_migration',
                        'check': {'allocations': at_point}}},
            {'live_migrate': {'server': 'vm1', 'host': 'dst'},
             'expect': {'allocations': {'vm1': {'dst': SMALL}}}},
        ]}, 'points.yaml')


class TestCheckAtPoint(testing.TestCase):

    def test_what_the_point_shows(self):
        runner.run(_scenario({'vm1': {'dst': SMALL},
                              'migration(vm1)': {'src': SMALL}}))

    def test_a_difference_fails_the_step_that_passed_the_point(self):
        # What the step's own expect says after it: true after, not there.
        failed = self.assertRaises(errors.ScenarioFailed, runner.run,
                                   _scenario({'vm1': {'dst': SMALL}}))
        self.assertEqual(3, failed.step.index)
        self.assertIn('at before live_migration on src (vm1): ',
                      str(failed))
        self.assertIn('migration(vm1)', str(failed))
        self.assertEqual(['allocations'],
                         sorted({p.check for p in failed.problems}))
