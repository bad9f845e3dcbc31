"""A failure the explorer finds again is named by its finding.

findings/resize_dest_periodic_before_finish_resize.yaml puts a periodic
on the destination before finish_resize of a resize; the explorer's
shrunk reproducer of that failure has the same one injection and fails
at the resize. ``known.Known`` names the finding for it (after running
the finding once: it still fails, at its resize), and nothing for the
same failure with the periodic on the source, or for a failure at
another kind of step.
"""

import os

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


def reproducer(role):
    return {'name': 'shrunk', 'hosts': {'src': {'driver': 'fake'},
                                        'dst': {'driver': 'fake'}},
            'flavors': {'small': {'vcpus': 1, 'ram': 512, 'disk': 1},
                        'large': {'vcpus': 2, 'ram': 1024, 'disk': 2}},
            'steps': [
                {'boot': {'server': 'vm1', 'flavor': 'small',
                          'host': 'src'}},
                {'inject': {'before': 'finish_resize',
                            'run': 'update_available_resource',
                            'on': role, 'server': 'vm1', 'at_host': 'dst'}},
                {'resize': {'server': 'vm1', 'flavor': 'large'}}]}


class TestKnownFindings(testing.TestCase):

    def write(self, document):
        return self.write_yaml(document, 'shrunk.yaml')

    def test_the_finding_is_named_and_nothing_else(self):
        findings = known.Known(FINDINGS)
        # The resize (step 3) failed first, as in the finding.
        failed_at_resize = explorer.Outcome((), True, 3, 'resize vm1')
        dest = reproducer('dest')
        self.assertEqual(FINDING, findings.finding_for(
            dest['steps'], failed_at_resize, self.write(dest)))
        source = reproducer('source')
        self.assertIsNone(findings.finding_for(
            source['steps'], failed_at_resize, self.write(source)))
        failed_at_boot = explorer.Outcome((), True, 1, 'boot vm1')
        self.assertIsNone(findings.finding_for(
            dest['steps'], failed_at_boot, self.write(dest)))
