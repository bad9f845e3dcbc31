"""``start_compute`` with ``config:``: what the loader takes and refuses.

A compute started again with its ``nova.conf`` changed
(``harness.core.steps.computes``): host-local options only, values of
their type, checked against the host's profile as the earlier starts left
it, before any service starts. No Nova service runs here.
"""

from harness.core import scenario
from harness.core import steps
from harness import testing

from tests.unit import refusals

PATH = 'restart.yaml'
HEAD = """\
name: restart with changed config
hosts:
  dev: {profile: dev-1s-8c-smt2}
  fake: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - stop_compute: dev
  - stop_compute: fake
"""


def _load(body):
    return scenario.load_file(PATH, HEAD + body)[1][0]


class TestStartWithConfig(testing.TestCase):

    def refused(self, body, field, *fragments):
        return refusals.refused(self, PATH, field, fragments, _load,
                                body)

    # -- what the loader takes ---------------------------------------------

    def test_profiled_host_config_is_checked_and_normalised(self):
        loaded = _load(
            "  - start_compute:\n"
            "      host: dev\n"
            "      guests: gone\n"
            "      config:\n"
            "        compute: {cpu_dedicated_set: '2-5,10-13',\n"
            "                  cpu_shared_set: '0-1,6-9,14-15'}\n"
            "        DEFAULT: {cpu_allocation_ratio: 2,\n"
            "                  reserved_host_memory_mb: 1024,\n"
            "                  reserved_huge_pages:\n"
            "                    [{node: 0, size: 2M, count: 512}]}\n")
        args = loaded.steps[2].args
        self.assertEqual('gone', args['guests'])
        self.assertEqual(
            {'compute': {'cpu_dedicated_set': '2-5,10-13',
                         'cpu_shared_set': '0-1,6-9,14-15'},
             'DEFAULT': {'cpu_allocation_ratio': 2.0,
                         'reserved_host_memory_mb': 1024,
                         'reserved_huge_pages': [
                             {'node': 0, 'size': '2M', 'count': 512}]}},
            args['config'])
        self.assertIn('start compute dev (guests gone) with ',
                      loaded.steps[2].label)

    def test_fake_host_takes_ratios_and_reserved_amounts(self):
        loaded = _load(
            "  - start_compute:\n"
            "      host: fake\n"
            "      config: {DEFAULT: {ram_allocation_ratio: 1.5,\n"
            "                         disk_allocation_ratio: 2,\n"
            "                         reserved_host_memory_mb: 1024,\n"
            "                         reserved_host_disk_mb: 2048}}\n")
        self.assertEqual(
            {'DEFAULT': {'ram_allocation_ratio': 1.5,
                         'disk_allocation_ratio': 2.0,
                         'reserved_host_memory_mb': 1024,
                         'reserved_host_disk_mb': 2048}},
            loaded.steps[2].args['config'])

    def test_null_removes_a_cpu_set(self):
        loaded = _load(
            "  - start_compute: {host: dev,\n"
            "      config: {compute: {cpu_shared_set: null}}}\n")
        self.assertEqual({'compute': {'cpu_shared_set': None}},
                         loaded.steps[2].args['config'])

    def test_config_persists_for_the_checks_of_later_starts(self):
        # The first start moves core 7 to the shared set; a later start
        # that gives it back to the dedicated set alone overlaps.
        self.refused(
            "  - start_compute: {host: dev, config: {compute: {\n"
            "      cpu_dedicated_set: '2-6,10-14',\n"
            "      cpu_shared_set: '0-1,7-9,15'}}}\n"
            "  - stop_compute: dev\n"
            "  - start_compute: dev\n"
            "  - stop_compute: dev\n"
            "  - start_compute: {host: dev, config: {compute: {\n"
            "      cpu_dedicated_set: '2-7,10-15'}}}\n",
            'start_compute.config.compute.cpu_shared_set',
            'step 7', 'CPU(s) 7,15 are also in cpu_dedicated_set')

    def test_a_refused_start_may_be_expected_and_leaves_it_stopped(self):
        loaded = _load(
            "  - start_compute: {host: dev,\n"
            "      config: {compute: {cpu_shared_set: null}}}\n"
            "    error: has unpinned instances\n"
            "  - start_compute: {host: dev,\n"
            "      config: {compute: {cpu_shared_set: '0-1,8-9'}}}\n")
        self.assertEqual('has unpinned instances', loaded.steps[2].error)
        self.assertTrue(steps.get('start_compute').operation)
        # Had the refused start counted as running, the next would be
        # refused by the loader as a start of a running compute.
        self.assertEqual(4, len(loaded.steps))

    def test_a_refused_start_changed_the_file(self):
        # The refused start removed cpu_shared_set: a later dedicated set
        # may take its CPUs.
        loaded = _load(
            "  - start_compute: {host: dev,\n"
            "      config: {compute: {cpu_shared_set: null}}}\n"
            "    error: has unpinned instances\n"
            "  - start_compute: {host: dev,\n"
            "      config: {compute: {cpu_dedicated_set: '0-15'}}}\n")
        self.assertEqual({'compute': {'cpu_dedicated_set': '0-15'}},
                         loaded.steps[3].args['config'])

    # -- what it refuses -----------------------------------------------------

    def test_config_on_stop_compute(self):
        self.refused(
            "  - start_compute: dev\n"
            "  - stop_compute: {host: dev, config: {DEFAULT: {\n"
            "      cpu_allocation_ratio: 2.0}}}\n",
            'stop_compute.config', 'unknown field')

    def test_config_not_a_mapping(self):
        self.refused("  - start_compute: {host: dev, config: [1]}\n",
                     'start_compute.config', 'expected a mapping')

    def test_empty_config(self):
        self.refused("  - start_compute: {host: dev, config: {}}\n",
                     'start_compute.config', 'at least one option')

    def test_empty_group(self):
        self.refused(
            "  - start_compute: {host: dev, config: {compute: {}}}\n",
            'start_compute.config.compute', 'at least one option')

    def test_unknown_group(self):
        self.refused(
            "  - start_compute: {host: dev, config: {libvirt: {\n"
            "      cpu_mode: host-model}}}\n",
            'start_compute.config.libvirt', 'unknown key')

    def test_option_that_is_not_per_host(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      service_down_time: 120}}}\n",
            'start_compute.config.DEFAULT.service_down_time', 'unknown key',
            'cpu_allocation_ratio')

    def test_option_in_the_wrong_group(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      cpu_dedicated_set: '2-7'}}}\n",
            'start_compute.config.DEFAULT.cpu_dedicated_set', 'unknown key')

    def test_ratio_not_a_number(self):
        self.refused(
            "  - start_compute: {host: fake, config: {DEFAULT: {\n"
            "      cpu_allocation_ratio: lots}}}\n",
            'start_compute.config.DEFAULT.cpu_allocation_ratio',
            'must be a number')

    def test_ratio_zero(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      ram_allocation_ratio: 0}}}\n",
            'start_compute.config.DEFAULT.ram_allocation_ratio',
            'greater than 0')

    def test_null_for_an_option_that_cannot_be_removed(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      cpu_allocation_ratio: null}}}\n",
            'start_compute.config.DEFAULT.cpu_allocation_ratio',
            'must be a number')

    def test_reserved_memory_negative(self):
        self.refused(
            "  - start_compute: {host: fake, config: {DEFAULT: {\n"
            "      reserved_host_memory_mb: -1}}}\n",
            'start_compute.config.DEFAULT.reserved_host_memory_mb',
            'at least 0')

    def test_reserved_memory_beyond_the_profiled_host(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      reserved_host_memory_mb: 32768}}}\n",
            'start_compute.config.DEFAULT.reserved_host_memory_mb',
            'not less than the host memory 32768')

    def test_reserved_memory_beyond_the_fake_host(self):
        self.refused(
            "  - start_compute: {host: fake, config: {DEFAULT: {\n"
            "      reserved_host_memory_mb: 8192}}}\n",
            'start_compute.config.DEFAULT.reserved_host_memory_mb',
            'at most 8191')

    def test_cpu_set_on_a_fake_host(self):
        self.refused(
            "  - start_compute: {host: fake, config: {compute: {\n"
            "      cpu_dedicated_set: '0-3'}}}\n",
            'start_compute.config.compute', 'unknown key')

    def test_huge_pages_on_a_fake_host(self):
        self.refused(
            "  - start_compute: {host: fake, config: {DEFAULT: {\n"
            "      reserved_huge_pages: []}}}\n",
            'start_compute.config.DEFAULT.reserved_huge_pages',
            'unknown key')

    def test_cpu_set_syntax(self):
        self.refused(
            "  - start_compute: {host: dev, config: {compute: {\n"
            "      cpu_dedicated_set: '2-x'}}}\n",
            'start_compute.config.compute.cpu_dedicated_set',
            'bad CPU spec')

    def test_cpu_set_beyond_the_host(self):
        self.refused(
            "  - start_compute: {host: dev, config: {compute: {\n"
            "      cpu_dedicated_set: '2-7,10-17'}}}\n",
            'start_compute.config.compute.cpu_dedicated_set',
            'CPU(s) 16-17 that the host does not have')

    def test_dedicated_set_overlapping_the_profile_shared_set(self):
        self.refused(
            "  - start_compute: {host: dev, config: {compute: {\n"
            "      cpu_dedicated_set: '0-7'}}}\n",
            'start_compute.config.compute.cpu_shared_set',
            'CPU(s) 0-1 are also in cpu_dedicated_set')

    def test_huge_pages_beyond_the_pool(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      reserved_huge_pages: [{node: 0, size: 2M,\n"
            "                             count: 2048}]}}}\n",
            'start_compute.config.DEFAULT.reserved_huge_pages[0].count',
            'cell 0 has only 1024')

    def test_huge_pages_of_a_missing_pool(self):
        self.refused(
            "  - start_compute: {host: dev, config: {DEFAULT: {\n"
            "      reserved_huge_pages: [{node: 0, size: 1G, count: 1}]}}}\n",
            'start_compute.config.DEFAULT.reserved_huge_pages[0].size',
            'no 1G pool')

    def test_error_on_a_start_that_cannot_fail_is_still_a_start(self):
        # error: is allowed (start_compute is an operation), but the
        # running compute cannot be started.
        self.refused(
            "  - start_compute: dev\n"
            "  - start_compute: dev\n"
            "    error: anything\n",
            'start_compute.host', 'running; stop it first')
