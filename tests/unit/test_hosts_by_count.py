"""Hosts by count: ``hosts: {rack: {count: N, profile: P}}``.

An entry with ``count`` names N hosts, ``rack01`` to ``rackNN`` (the
number padded to the count's width), each with the entry's profile or
driver; steps refer to them by those names. No Nova service runs here.
"""

from harness.core import scenario
from tests.unit import test_scenario_loader as loader

COUNTED = """\
name: many hosts
hosts:
  rack: {count: %s, profile: dev-1s-8c-smt2}
  spare: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: %s}
"""


class TestHostsByCount(loader.LoaderTestCase):

    def test_count_names_numbered_hosts_with_the_entry_s_profile(self):
        [loaded] = scenario.load(self.write(COUNTED % (12, 'rack07')))
        self.assertEqual(['rack%02d' % n for n in range(1, 13)] + ['spare'],
                         sorted(loaded.hosts))
        self.assertTrue(all(loaded.hosts['rack%02d' % n].profile.endswith(
            'dev-1s-8c-smt2') for n in range(1, 13)))
        self.assertIsNone(loaded.hosts['spare'].profile)

    def test_numbers_are_padded_to_the_count_s_width(self):
        [loaded] = scenario.load(self.write(COUNTED % (100, 'rack100')))
        self.assertIn('rack001', loaded.hosts)
        self.assertIn('rack100', loaded.hosts)
        self.assertEqual(101, len(loaded.hosts))

    def test_a_count_of_one_is_numbered_too(self):
        [loaded] = scenario.load(self.write(COUNTED % (1, 'rack1')))
        self.assertEqual(['rack1', 'spare'], sorted(loaded.hosts))

    def test_a_step_naming_a_host_beyond_the_count_is_refused(self):
        self.assertRefused(COUNTED % (12, 'rack13'), 'rack13', step=1)

    def test_count_must_be_a_positive_whole_number(self):
        for bad, fragment in (('0', 'must be at least 1'),
                              ('2.5', 'expected a whole number'),
                              ('"ten"', 'expected a whole number'),
                              ('1001', 'at most')):
            self.assertRefused(COUNTED % (bad, 'spare'), fragment,
                               field='hosts.rack.count')

    def test_a_counted_name_clashing_with_another_host_is_refused(self):
        self.assertRefused(
            COUNTED.replace('spare: {driver: fake}',
                            'rack02: {driver: fake}') % (12, 'rack01'),
            'host rack02 is named twice', field='hosts.rack02')

    def test_the_document_keeps_the_count(self):
        [loaded] = scenario.load(self.write(COUNTED % (5, 'rack3')))
        doc = loaded.document()
        self.assertEqual(5, doc['hosts']['rack']['count'])
        again = scenario.parse(doc, loaded.path, loaded.path)
        self.assertEqual(sorted(loaded.hosts), sorted(again.hosts))
