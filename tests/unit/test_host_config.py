"""harness.PerHostConfig: a compute's own host-local options (no service).

Reads are made as Nova's own modules make them, from a method of a
resource tracker of a host (the proxy answers by the compute on the
stack); that it holds in Nova's runner is proven by the exported tests
that use it (tests/export/test_nova_proofs.py PerHostConfigProofs and the
finding restart_pinned_guest_outside_dedicated_set).
"""

from nova.compute import resource_tracker
from nova.virt import hardware

from harness.core import errors
from harness import testing
from harness.testing import host_config


class Tracker(resource_tracker.ResourceTracker):
    """A resource tracker of ``host``, built bare: it only reads."""

    def __init__(self, host):
        self.host = host

    def dedicated(self):
        # As nova.virt.hardware.get_cpu_dedicated_set reads it.
        return hardware.CONF.compute.cpu_dedicated_set


class TestPerHostConfig(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(host_config.PerHostConfig())
        # The test's config, every host's but one with its own.
        hardware.CONF.set_override('cpu_dedicated_set', '2-7',
                                   group='compute')
        self.addCleanup(hardware.CONF.clear_override, 'cpu_dedicated_set',
                        group='compute')

    def test_a_host_reads_its_own_value(self):
        self.conf.set_host('h1', {'compute': {'cpu_dedicated_set': '3-7'}})
        self.assertEqual('3-7', Tracker('h1').dedicated())
        self.assertEqual('2-7', Tracker('h2').dedicated())
        # No compute on the stack (a controller, the test): the config's.
        self.assertEqual('2-7', hardware.CONF.compute.cpu_dedicated_set)

    def test_get_is_what_the_host_s_compute_reads(self):
        self.conf.set_host('h1', {'DEFAULT': {
            'reserved_host_memory_mb': 8192}})
        self.assertEqual(8192, self.conf.get('h1', 'reserved_host_memory_mb'))
        self.assertEqual(512, self.conf.get('h2', 'reserved_host_memory_mb'))
        self.assertEqual('2-7', self.conf.get(
            'h1', 'cpu_dedicated_set', group='compute'))

    def test_set_host_replaces_the_host_s_values(self):
        self.conf.set_host('h1', {None: {'reserved_host_memory_mb': 1}})
        self.conf.set_host('h1', {'compute': {'cpu_dedicated_set': '4'}})
        self.assertEqual(512, self.conf.get('h1', 'reserved_host_memory_mb'))
        self.assertEqual('4', Tracker('h1').dedicated())

    def test_an_option_no_host_sets_for_itself(self):
        error = self.assertRaises(errors.HarnessError, self.conf.set_host,
                                  'h1', {'DEFAULT': {'host': 'h9'}})
        self.assertIn('[DEFAULT] host is not an option a host sets for '
                      'itself', str(error))
        self.assertIn('[compute] cpu_dedicated_set', str(error))

    def test_one_per_process(self):
        # A second fixture shares the proxy in place.
        second = self.useFixture(host_config.PerHostConfig())
        second.set_host('h1', {'compute': {'cpu_dedicated_set': '5'}})
        self.assertEqual('5', self.conf.get(
            'h1', 'cpu_dedicated_set', 'compute'))

    def test_the_options_and_modules_are_perhost_s(self):
        self.assertIn('cpu_dedicated_set', host_config.OPTIONS['compute'])
        self.assertIn('nova.virt.hardware', host_config.MODULES)
