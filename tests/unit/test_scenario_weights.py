"""A scenario's ``weights:`` (the scheduler's host preference), checked."""

import yaml

from harness.core import scenario
from harness.core import shapes
from harness import testing
from tests.unit import test_scenario_loader as loader_tests

HEAD = loader_tests.HEAD


class TestWeights(loader_tests.LoaderTestCase):

    def load(self, text):
        return scenario.load(self.write(text, 'weights.yaml'))[0]

    def test_weights_by_host(self):
        loaded = self.load('weights: {host1: 100, host2: -5}\n' + HEAD)
        self.assertEqual({'host1': 100, 'host2': -5}, loaded.weights)
        self.assertEqual({}, loaded.config)

    def test_none_given(self):
        self.assertEqual({}, self.load(HEAD).weights)

    def test_unknown_host(self):
        self.assertRefused('weights: {other: 1}\n' + HEAD,
                           "unknown host 'other'", field='weights.other')

    def test_not_a_whole_number(self):
        self.assertRefused('weights: {host1: high}\n' + HEAD,
                           'expected a whole number', field='weights.host1')

    def test_too_heavy(self):
        self.assertRefused('weights: {host1: 10000001}\n' + HEAD,
                           'at most', field='weights.host1')

    def test_not_with_weight_classes(self):
        self.assertRefused(
            'weights: {host1: 1}\nconfig: {filter_scheduler: {weight_classes: '
            'nova.scheduler.weights.all_weighers}}\n' + HEAD,
            'give weights or weight_classes, not both',
            field='config.filter_scheduler.weight_classes')


class TestWeightsShapeTheCloud(testing.TestCase):

    def test_other_weights_other_cloud(self):
        # The scheduler loads its weighers at start: a kept cloud keeps
        # them, so other weights need another cloud.
        def shape(weights):
            return shapes.cloud_shape(scenario.parse(
                dict(yaml.safe_load(HEAD), weights=weights), 'x.yaml'))
        self.assertNotEqual(shape({'host1': 2}), shape({'host1': 3}))
        self.assertEqual(shape({'host1': 2}), shape({'host1': 2}))
