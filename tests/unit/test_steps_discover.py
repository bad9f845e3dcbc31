"""A compute started unmapped and ``discover_hosts``: the loader's side.

``start_compute: {host, mapped: false}`` (``harness.core.steps.computes``)
for a compute whose service was deleted, and ``discover_hosts: {maps}``
(``harness.core.steps.discover``), whose run holds what Nova mapped to
what the step says. No Nova service runs here: the cloud's
``discover_hosts`` is a stand-in answering as the cloud's does (the hosts
Nova mapped, sorted).
"""

from harness.core import errors
from harness.core import steps
from harness import testing

from tests.unit import refusals


class _Cloud(object):

    def __init__(self, mapped):
        self.mapped = mapped
        self.restarts = []

    def discover_hosts(self):
        return list(self.mapped)

    def restart_compute(self, host, **kwargs):
        self.restarts.append((host, kwargs))


class TestDiscoverHosts(refusals.StepLoaderCase):

    PATH = 'discover.yaml'
    HEAD = refusals.fake_hosts_head('discover', 'h1', 'h2')
    DELETED = ('  - stop_compute: h1\n'
               '  - delete_service: h1\n')

    def test_an_unmapped_start_and_a_discovery_load(self):
        loaded = self.load(''.join((
            self.DELETED, '  - start_compute: {host: h1, mapped: false}\n',
            '  - discover_hosts: {maps: [h1]}\n',
            '  - discover_hosts: {maps: []}\n')))
        self.assertEqual([{'host': 'h1', 'mapped': False}, {'maps': ['h1']},
                          {'maps': []}],
                         [step.args for step in loaded.steps[2:]])
        self.assertEqual(['start compute h1 (unmapped)', 'discover hosts',
                          'discover hosts'],
                         [step.label for step in loaded.steps[2:]])
        # Mapped, the default, is the start as it always was.
        loaded = self.load(''.join((
            self.DELETED, '  - start_compute: {host: h1, mapped: true}\n')))
        self.assertEqual({'host': 'h1'}, loaded.steps[2].args)

    def test_only_a_deleted_service_starts_unmapped(self):
        self.refused('  - stop_compute: h1\n'
                     '  - start_compute: {host: h1, mapped: false}\n',
                     'start_compute.mapped', "compute 'h1' has its host "
                     'mapping')
        body = self.DELETED + '  - start_compute: {host: h1, mapped: no}\n'
        self.refused(body, 'start_compute.mapped', 'true or false')
        self.refused('  - stop_compute: {host: h1, mapped: false}\n',
                     'stop_compute.mapped', 'unknown field')

    def test_bad_hosts_to_map_are_refused(self):
        self.refused('  - discover_hosts: {}\n', 'discover_hosts.maps',
                     'missing')
        self.refused('  - discover_hosts: {maps: [h9]}\n',
                     'discover_hosts.maps', "unknown host 'h9'")
        self.refused('  - discover_hosts: {maps: [h1, h1]}\n',
                     'discover_hosts.maps', 'named twice')
        self.refused('  - discover_hosts: {maps: h1}\n',
                     'discover_hosts.maps', 'expected a list')

    def test_the_run_holds_the_hosts_nova_mapped(self):
        kind = steps.get('discover_hosts')
        kind.run(_Cloud(['h1']), {'maps': ['h1']})
        kind.run(_Cloud([]), {'maps': []})
        error = self.assertRaises(errors.HarnessError, kind.run,
                                  _Cloud([]), {'maps': ['h1']})
        self.assertEqual('discover_hosts mapped no host, not h1',
                         str(error))
        error = self.assertRaises(errors.HarnessError, kind.run,
                                  _Cloud(['h1', 'h2']), {'maps': ['h1']})
        self.assertEqual('discover_hosts mapped h1, h2, not h1', str(error))

    def test_an_unmapped_start_asks_the_cloud_not_to_map(self):
        kind = steps.get('start_compute')
        cloud = _Cloud([])
        kind.run(cloud, {'host': 'h1', 'mapped': False})
        kind.run(cloud, {'host': 'h2'})
        self.assertEqual(
            [('h1', {'keep_hypervisor_state': True, 'map_host': False}),
             ('h2', {'keep_hypervisor_state': True})], cloud.restarts)


class TestDiscoverIsNoOperation(testing.TestCase):

    def test_it_arms_nothing_and_moves_no_server(self):
        kind = steps.get('discover_hosts')
        self.assertFalse(kind.arms)
        self.assertFalse(kind.operation)
