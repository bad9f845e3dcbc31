"""A failure the explorer finds again is named by its finding.

findings/resize_dest_periodic_before_finish_resize.yaml puts a periodic
on the destination before finish_resize of a resize. The explorer
injects at the first point of each Nova state (``recorded_points``):
its shrunk reproducer of that failure has the periodic on the
destination after resize_instance's save of ``instance.host`` on the
source, the same state (nothing is written between that save and
finish_resize's start), and fails at the resize. ``known.Known`` names
the finding for it (after running the finding once: it still fails, at
its resize), and nothing for the same failure with the periodic on the
source, with the periodic at a point of another state of the resize
(once finish_resize wrote the migration's status), or for a failure at
another kind of step.

A finding whose window spans several Nova states has a scenario for
each: the revert findings' windows start where drop_move_claim_at_dest
saves the migration reverted, a state before the claim's drop writes;
the explorer's reproducer of a periodic there is named by the finding's
second scenario, and by nothing without it (``TestWindowStates``).
"""

import os

import fixtures

from harness.core import scenario as scenario_mod
from harness.runners import explorer
from harness.runners import known
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FINDINGS = os.path.join(ROOT, 'findings')
FINDING = os.path.join(FINDINGS,
                       'resize_dest_periodic_before_finish_resize.yaml')
# Where the explorer puts the periodic (its first point of the state).
AFTER_THE_SAVE = {'after': 'instance.host', 'at_host': 'src'}
# After finish_resize on the destination set the migration finished.
ONCE_FINISHED = {'after': 'migration.status=finished', 'at_host': 'dst'}
# Where a revert finding's window starts (revert_resize's
# drop_move_claim_at_dest saved the migration reverted).
ONCE_REVERTED = {'after': 'migration.status=reverted', 'at_host': 'dst'}
REVERT_FINDINGS = {
    role: os.path.join(FINDINGS, 'revert_%s_periodic_before_finish_revert_'
                       'resize.yaml' % role)
    for role in ('source', 'dest')}


def reproducer(role, point=AFTER_THE_SAVE):
    """The explorer's shrunk reproducer, on the finding's fake hosts."""
    return {'name': 'shrunk', 'hosts': {'src': {'driver': 'fake'},
                                        'dst': {'driver': 'fake'}},
            'flavors': {'small': {'vcpus': 1, 'ram': 512, 'disk': 1},
                        'large': {'vcpus': 2, 'ram': 1024, 'disk': 2}},
            'steps': [
                {'boot': {'server': 'vm1', 'flavor': 'small',
                          'host': 'src'}},
                {'inject': dict(point, run='update_available_resource',
                                on=role, server='vm1')},
                {'resize': {'server': 'vm1', 'flavor': 'large'}}]}


class TestKnownFindings(testing.TestCase):

    def write(self, document, name):
        return self.write_yaml(document, name + '.yaml')

    def test_the_finding_is_named_and_nothing_else(self):
        findings = known.Known(FINDINGS)
        # The resize (step 3) failed first, as in the finding.
        failed_at_resize = explorer.Outcome((), True, 3, 'resize vm1')
        dest = reproducer('dest')
        self.assertEqual(FINDING, findings.finding_for(
            dest['steps'], failed_at_resize, self.write(dest, 'dest')))
        source = reproducer('source')
        self.assertIsNone(findings.finding_for(
            source['steps'], failed_at_resize, self.write(source, 'source')))
        finished = reproducer('dest', ONCE_FINISHED)
        self.assertIsNone(findings.finding_for(
            finished['steps'], failed_at_resize,
            self.write(finished, 'finished')))
        failed_at_boot = explorer.Outcome((), True, 1, 'boot vm1')
        self.assertIsNone(findings.finding_for(
            dest['steps'], failed_at_boot, self.write(dest, 'dest')))
        # The three reproducers differ only in their injections: one run
        # without them read their states.
        self.assertEqual(1, len(findings._plain))


def revert_reproducer(role):
    """The explorer's reproducer of a periodic where a revert's window starts.

    As ``harness explore`` shrank it from
    tests/functional/scenarios/resize_revert.yaml on 2026-12-07.
    """
    document = reproducer(role, ONCE_REVERTED)
    boot, inject, resize = document['steps']
    document['steps'] = [boot, resize, inject, {'revert': 'vm1'}]
    return document


class TestWindowStates(testing.TestCase):

    def test_each_state_of_a_revert_window_is_named(self):
        # The revert (step 4) failed first, as in the findings.
        failed_at_revert = explorer.Outcome((), True, 4, 'revert vm1')
        findings = known.Known(FINDINGS)
        for role, finding in sorted(REVERT_FINDINGS.items()):
            document = revert_reproducer(role)
            self.assertEqual(finding, findings.finding_for(
                document['steps'], failed_at_revert,
                self.write_yaml(document, role + '.yaml')))

    def test_the_finding_s_own_point_alone_names_nothing_there(self):
        # The source's finding with its first scenario only (the periodic
        # before finish_revert_resize): that point is in another state.
        directory = self.useFixture(fixtures.TempDir()).path
        first = scenario_mod.load(REVERT_FINDINGS['source'])[0]
        self.write_yaml(first.document(), os.path.join(
            directory, os.path.basename(REVERT_FINDINGS['source'])))
        document = revert_reproducer('source')
        self.assertIsNone(known.Known(directory).finding_for(
            document['steps'], explorer.Outcome((), True, 4, 'revert vm1'),
            self.write_yaml(document, 'source.yaml')))
