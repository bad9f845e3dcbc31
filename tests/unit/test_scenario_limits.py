"""A scenario's ``limits:`` (Keystone unified limits), checked up front."""

import yaml

from harness.core import scenario
from harness.core import shapes
from harness import testing
from tests.unit import test_scenario_loader as loader_tests

HEAD = loader_tests.HEAD


class TestLimits(loader_tests.LoaderTestCase):

    def load(self, text):
        return scenario.load(self.write(text, 'limits.yaml'))[0]

    def test_limits_and_the_driver_that_reads_them(self):
        loaded = self.load(
            'limits: {servers: 2, "class:VCPU": 4, key_pairs: 0}\n' + HEAD)
        self.assertEqual({'servers': 2, 'class:VCPU': 4, 'key_pairs': 0},
                         loaded.limits)
        self.assertEqual({'quota': {'driver': scenario.UNIFIED_LIMITS_DRIVER}},
                         loaded.config)
        # The scenario as written is left as written.
        self.assertNotIn('config', loaded.raw)

    def test_the_driver_named_too(self):
        loaded = self.load(
            'limits: {servers: 2}\nconfig: {quota: {driver: '
            'nova.quota.UnifiedLimitsDriver, recheck_quota: false}}\n' + HEAD)
        self.assertEqual({'driver': scenario.UNIFIED_LIMITS_DRIVER,
                          'recheck_quota': False}, loaded.config['quota'])

    def test_another_driver_is_refused(self):
        self.assertRefused(
            'limits: {servers: 2}\nconfig: {quota: {driver: '
            'nova.quota.DbQuotaDriver}}\n' + HEAD,
            "unified limits, read by nova.quota.UnifiedLimitsDriver, not "
            "'nova.quota.DbQuotaDriver'", field='config.quota.driver')

    def test_not_a_limit_nova_reads(self):
        for name in ('cores', 'class:vcpu', 'class:'):
            self.assertRefused(
                'limits: {%s: 2}\n' % yaml.safe_dump(name).split('\n')[0]
                + HEAD, 'not a limit Nova reads',
                field='limits.%s' % name)

    def test_a_negative_limit(self):
        self.assertRefused('limits: {servers: -1}\n' + HEAD, '0 or more',
                           field='limits.servers')

    def test_no_limits_no_driver(self):
        loaded = self.load(HEAD)
        self.assertEqual({}, loaded.limits)
        self.assertEqual({}, loaded.config)


class TestLimitsShapeTheCloud(testing.TestCase):

    def test_other_limits_other_cloud(self):
        # A kept cloud keeps its limits: a scenario with other limits needs
        # another cloud.
        def shape(limits):
            return shapes.cloud_shape(scenario.parse(
                dict(yaml.safe_load(HEAD), limits=limits), 'x.yaml'))
        self.assertNotEqual(shape({'servers': 2}), shape({'servers': 3}))
        self.assertEqual(shape({'servers': 2}), shape({'servers': 2}))
