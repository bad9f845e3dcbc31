"""The harness's fixtures for a test in Nova's tree, without running Nova.

What they refuse and decide before any service runs: a race point that
is no compute RPC method, the calls among those methods, and two profiled
computes of one test that need different options (Nova's config is one
per process). Their use on Nova's test base classes is proven by running
the docs' example in Nova's runner (tests/functional/test_in_nova.py).
"""

from harness.core import errors
from harness import testing
from harness.testing import in_nova


class FakeNovaTest(object):
    """What ProfiledCompute uses of a Nova ServersTestBase test."""

    def __init__(self):
        self.flagged = []
        self.started = []
        self.computes = {}
        self.libvirt = self

    def flags(self, group=None, **options):
        self.flagged.append((group, options))

    def update_sriov_mac_address_mapping(self, mapping):
        pass

    def start_compute(self, hostname, connection=None):
        self.started.append((hostname, connection))
        self.computes[hostname] = 'service of %s' % hostname


class TestRacePoint(testing.TestCase):

    def test_a_point_is_before_or_after_a_compute_rpc_method(self):
        for point in ('during finish_resize', 'before no_such_method',
                      'finish_resize', 'before _do_live_migration'):
            error = self.assertRaises(errors.HarnessError, in_nova.RacePoint,
                                      point, lambda: None)
            self.assertIn('say "before <method>" or "after <method>"',
                          str(error))
            self.assertIn('finish_resize', str(error))

    def test_times_is_a_count_or_none(self):
        self.assertIsNone(in_nova.RacePoint(
            'after confirm_resize', lambda: None, times=None).times)
        error = self.assertRaises(errors.HarnessError, in_nova.RacePoint,
                                  'after confirm_resize', lambda: None,
                                  times=0)
        self.assertIn('times is a whole number of 1 or more', str(error))

    def test_calls_and_casts_as_the_compute_rpc_api_sends_them(self):
        # nova/compute/rpcapi.py: the destination's live-migration checks
        # and pre_live_migration are calls; a resize's steps are casts.
        for called in ('check_can_live_migrate_destination',
                       'pre_live_migration'):
            self.assertIn(called, in_nova.CALLED)
        for cast in ('prep_resize', 'resize_instance', 'finish_resize',
                     'confirm_resize', 'live_migration'):
            self.assertNotIn(cast, in_nova.CALLED)


class TestProfiledCompute(testing.TestCase):

    def test_options_set_and_compute_started_on_the_profile(self):
        test = FakeNovaTest()
        compute = self.useFixture(in_nova.ProfiledCompute(
            test, 'host1', 'dev-1s-8c-smt2'))
        self.assertIn(('compute', {'cpu_dedicated_set': '2-7,10-15'}),
                      test.flagged)
        [(hostname, connection)] = test.started
        self.assertEqual('host1', hostname)
        # One socket of eight cores, two threads each.
        self.assertEqual(16, connection.host_info.cpus)
        self.assertEqual('service of host1', compute.service)

    def test_computes_of_one_test_share_their_options(self):
        test = FakeNovaTest()
        self.useFixture(in_nova.ProfiledCompute(
            test, 'host1', 'dev-1s-8c-smt2'))
        self.useFixture(in_nova.ProfiledCompute(
            test, 'host2', 'dev-1s-8c-smt2'))
        error = self.assertRaises(
            errors.HarnessError, in_nova.ProfiledCompute,
            test, 'host3', 'xeon-2s-20c-smt2')
        self.assertIn('compute host3 (profile xeon-2s-20c-smt2) needs '
                      'options that compute host1 (profile dev-1s-8c-smt2) '
                      'has otherwise: compute.cpu_dedicated_set, '
                      'compute.cpu_shared_set, pci.device_spec',
                      str(error))
        self.assertEqual(['host1', 'host2'],
                         [name for name, _ in test.started])
