"""``harness export nova-test`` of profiled hosts (no Nova).

A profiled host is written as Nova's libvirt tests build theirs: a class
on ``ServersTestBase``, the profile as fakelibvirt's ``HostInfo`` with its
cells edited to the profile's, its devices, its options as
``self.flags``. The exported source is compiled and its parts read back;
whether it passes on Nova and fails with the bug put back is proved by
``tests/export/test_nova_proofs.py``.
"""

import ast
import logging
import re

from harness.core import profiles
from harness.export import libvirt
from harness.export import nova_test
from tests.unit import test_export

HEAD = '''\
bug: {id: 1, title: a test bug, fix: abc, story: s}
scenarios:
  - name: the scenario
    hosts:
      src: {profile: dev-1s-8c-smt2}
      dst: {profile: dev-1s-8c-smt2}
    flavors:
      pin2: {vcpus: 2, ram: 512, disk: 1,
             extra_specs: {"hw:cpu_policy": dedicated}}
    steps:
'''


class LibvirtExportTestCase(test_export.ExportTestCase):

    def export(self, steps, head=HEAD, **kwargs):
        source = nova_test.export(self.path(steps, head), **kwargs)
        module = ast.parse(source)
        classes = [n for n in module.body if isinstance(n, ast.ClassDef)]
        self.assertEqual(['TestBug1'], [c.name for c in classes])
        self.assertEqual('base.ServersTestBase',
                         ast.unparse(classes[0].bases[0]))
        return source

    def method(self, source, name='test_the_scenario'):
        return source[source.index('    def %s(' % name):]


class ProfiledHostTest(LibvirtExportTestCase):

    def test_a_class_on_nova_libvirt_base(self):
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        self.assertIn('from nova.tests.functional.libvirt import base\n',
                      source)
        self.assertIn('from nova.tests.fixtures import libvirt as '
                      'fakelibvirt\n', source)
        self.assertNotIn('harness', source.split('"""')[2])
        self.assertIn("    ADDITIONAL_FILTERS = ['NUMATopologyFilter', "
                      "'PciPassthroughFilter']\n", source)
        # A cast's failure stays with its service, as in the harness.
        self.assertIn('    CAST_AS_CALL = False\n', source)

    def test_the_profile_inline_as_fakelibvirt_host_info(self):
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        self.assertIn(
            '        host_info = fakelibvirt.HostInfo(\n'
            '            cpu_nodes=1, cpu_sockets=1, cpu_cores=8, '
            'cpu_threads=2,\n', source)
        self.assertIn('            kB_mem=32768)\n', source)
        # Linux numbering (siblings n and n + 8), not fakelibvirt's
        # (n and n + 1): the cells are edited to the profile's.
        self.assertIn('                [2, 10],\n', source)
        self.assertIn('             {4: 7864320, 2048: 1024}),\n', source)
        self.assertIn('    def _shape_cells(self, host_info, cells):',
                      source)
        self.assertIn('cpu.siblings = set(core)', source)

    def test_its_devices(self):
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        self.assertIn(
            '        pci_info.add_device(\n'
            "            dev_type='PCI', bus=2, slot=0, function=0,\n"
            '            iommu_group=40, numa_node=0,\n'
            "            vend_id='144d', prod_id='a80a',", source)

    def test_its_options_before_its_computes_start(self):
        method = self.method(self.export(
            '- boot: {server: vm1, flavor: pin2}'))
        flags = method.index(
            "        self.flags(cpu_dedicated_set='2-7,10-15', "
            "group='compute')\n")
        start = method.index(
            '        self.start_compute(\n'
            "            hostname='dst', "
            'host_info=self._host_info_dev_1s_8c_smt2(),\n'
            '            pci_info=self._pci_info_dev_1s_8c_smt2())\n')
        self.assertLess(flags, start)
        self.assertIn("        self.flags(device_spec=[\n"
                      "            '{\"product_id\": \"a80a\", \"vendor_id\": "
                      "\"144d\"}',\n"
                      "        ], group='pci')\n", method)

    def test_sixteen_cpus_or_more_widen_the_base_connection(self):
        # ServersTestBase's _get_connection refuses 16 CPUs or more.
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        self.assertIn('    def _get_connection(\n', source)
        # 0-15 online is the base's own patch: not patched again.
        self.assertNotIn('get_online_cpus', source)
        head = HEAD.replace('dev-1s-8c-smt2', 'xeon-2s-20c-smt2')
        source = self.export('- boot: {server: vm1, flavor: pin2}', head)
        self.assertIn("            'nova.virt.libvirt.host.Host."
                      "get_online_cpus',\n"
                      '            lambda host: set(range(80))))', source)
        # Its SR-IOV functions as sysfs shows them.
        self.assertIn("            in ['0000:3b:00.0']))", source)
        self.assertIn("            '0000:3b:00.4': 3,\n", source)

    def test_flavor_extra_specs(self):
        method = self.method(self.export(
            '- boot: {server: vm1, flavor: pin2}'))
        self.assertIn("            ephemeral=0, swap=0,\n"
                      "            extra_spec={'hw:cpu_policy': "
                      "'dedicated'})\n", method)

    def test_a_restart_keeps_the_host_s_fake_libvirt(self):
        method = self.method(self.export('- stop_compute: src\n'
                                         '- start_compute: src'))
        self.assertIn("        self.restart_compute_service('src')\n"
                      "        self._schedule('src')\n", method)

    def test_a_machine_booted_afresh_is_its_profile_again(self):
        # guests: gone: a new fake libvirt built as at the first start
        # (the harness's is its profile's, empty), not the old connection.
        head = HEAD.replace('src: {profile: dev-1s-8c-smt2}',
                            'src: {profile: xeon-2s-20c-smt2}').replace(
            'dst: {profile: dev-1s-8c-smt2}',
            'dst: {profile: xeon-2s-20c-smt2}')
        method = self.method(self.export(
            '- stop_compute: src\n'
            '- start_compute: {host: src, guests: gone}', head=head))
        start = method[method.index("hostname='src'"):].split(')\n')[0]
        self.assertIn(
            "        # 2. start compute src (guests gone)\n"
            "        self.restart_compute_service(\n"
            "            'src', keep_hypervisor_state=False,\n"
            "            host_info=self._host_info_xeon_2s_20c_smt2(),\n"
            "            pci_info=self._pci_info_xeon_2s_20c_smt2())\n"
            "        self._schedule('src')\n", method)
        self.assertIn('pci_info=self._pci_info_xeon_2s_20c_smt2(', start)

    def test_a_device_spec_changed_at_a_start_is_set_before_it(self):
        # [pci] device_spec is read as a compute starts: set before each
        # start to what that host starts with, as Nova's PCI tests do.
        spec = ("[\n            "
                "'{\"product_id\": \"a80a\", \"vendor_id\": \"144d\"}',"
                "\n        ]")
        method = self.method(self.export(
            '- stop_compute: src\n'
            '- start_compute: {host: src, config: {pci: {device_spec: []}}}\n'
            '- stop_compute: dst\n'
            '- start_compute: dst\n'
            '- stop_compute: src\n'
            '- start_compute: src'))
        self.assertIn("        self.flags(device_spec=%s, group='pci')\n"
                      % spec, method)
        self.assertIn(
            "        # 2. start compute src with device_spec=[]\n"
            "        self.flags(device_spec=[], group='pci')\n"
            "        self.restart_compute_service('src')\n", method)
        # dst starts with its own, src again with its changed one.
        self.assertIn(
            "        # 4. start compute dst\n"
            "        self.flags(device_spec=%s, group='pci')\n"
            "        self.restart_compute_service('dst')\n" % spec, method)
        self.assertIn(
            "        # 6. start compute src\n"
            "        self.flags(device_spec=[], group='pci')\n"
            "        self.restart_compute_service('src')\n", method)

    def test_an_option_of_a_running_compute_on_the_only_host(self):
        head = HEAD.replace("      dst: {profile: dev-1s-8c-smt2}\n", '')
        method = self.method(self.export(
            '- stop_compute: src\n'
            '- start_compute: {host: src, config: {compute: '
            '{cpu_dedicated_set: "3-7,11-15", cpu_shared_set: null}}}',
            head=head))
        self.assertIn(
            "        self.flags(cpu_dedicated_set='3-7,11-15', "
            "group='compute')\n"
            "        self.flags(cpu_shared_set=None, group='compute')\n"
            "        self.restart_compute_service('src')\n", method)

    def test_a_vgpu_host(self):
        # Its [devices] option, its GPUs as fakelibvirt's mdev-capable
        # devices, and a vGPU made as the GPU's driver makes one.
        head = HEAD.replace('dev-1s-8c-smt2', 'xeon-2s-20c-smt2-m60')
        source = self.export('- boot: {server: vm1, flavor: pin2}\n'
                             '  expect: {devices: {src: {vgpus: 0}}, '
                             'mdevs: {vm1: {src: 1}}}', head=head)
        self.assertIn("        self.flags(enabled_mdev_types=['nvidia-11'], "
                      "group='devices')\n", source)
        self.assertIn("            dev_type='MDEV_TYPES', bus=175, slot=0, "
                      "function=0,\n", source)
        self.assertIn("        self.useFixture(fixtures.MonkeyPatch(\n"
                      "            'nova.virt.libvirt.driver.LibvirtDriver."
                      "_create_mdev',\n            create_mdev))\n", source)
        # The type's availableInstances counts down, as in sysfs.
        self.assertIn("max(int(match.group(2)) - 1, 0)", source)
        self.assertIn("        self.assertDevices('src', {\n"
                      "            'vgpus': 0,\n", source)
        self.assertIn("        self.assertMdevs('vm1', {'src': 1})\n",
                      source)
        for name in ('from oslo_utils import uuidutils',
                     'from nova.virt.libvirt import utils as libvirt_utils'):
            self.assertIn(name + '\n', source)
        # A VGPU on a GPU's provider is its host's, as the harness's
        # allocations count it.
        held = source[source.index('    def _held('):]
        held = held[:held.index('\n    def ', 10)]
        self.assertIn("_pci_[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]'", held)
        self.assertIn("hosts[rp['uuid']] = host", held)

    def test_fake_and_profiled_scenarios_make_two_classes(self):
        head = HEAD + '''\
      - boot: {server: vm1, flavor: pin2}
  - name: another
    hosts:
      h1: {driver: fake}
    flavors:
      small: {vcpus: 1, ram: 512, disk: 1}
    steps:
'''
        source = nova_test.export(self.path(
            '- boot: {server: vm1, flavor: small}', head))
        classes = [(n.name, ast.unparse(n.bases[0]))
                   for n in ast.parse(source).body
                   if isinstance(n, ast.ClassDef)]
        # In the file's order.
        self.assertEqual(
            [('TestBug1Libvirt', 'base.ServersTestBase'),
             ('TestBug1', 'integrated_helpers.ProviderUsageBaseTestCase')],
            classes)

    def test_scenarios_of_another_config_make_another_class(self):
        head = HEAD + '''\
      - boot: {server: vm1, flavor: pin2}
  - name: another
    config: {DEFAULT: {cpu_allocation_ratio: 2.0}}
    hosts:
      h1: {profile: dev-1s-8c-smt2}
    flavors:
      pin2: {vcpus: 2, ram: 512, disk: 1}
    steps:
'''
        source = nova_test.export(self.path(
            '- boot: {server: vm1, flavor: pin2}', head))
        self.assertEqual(['TestBug1', 'TestBug12'], [
            n.name for n in ast.parse(source).body
            if isinstance(n, ast.ClassDef)])
        # The config before the services start, which read it.
        second = source[source.index('class TestBug12'):]
        self.assertLess(second.index('self.flags(cpu_allocation_ratio=2.0)'),
                        second.index('super().setUp()'))


class ExpectationTest(LibvirtExportTestCase):

    def body(self, steps, head=HEAD):
        method = self.method(self.export(steps, head))
        return method[method.index('        # 1. '):]

    def test_pinned_cpus(self):
        body = self.body('- boot: {server: vm1, flavor: pin2, host: src}\n'
                         '  expect: {pinned_cpus: {src: [2, 10], '
                         'dst: {0: 0}}}')
        self.assertIn("        self.assertPinnedCpus({\n"
                      "            'dst': {0: 0},\n"
                      "            'src': [2, 10],\n"
                      "        })\n", body)

    def test_pci_and_devices(self):
        body = self.body('- boot: {server: vm1, flavor: pin2, host: src}\n'
                         '  expect: {pci: {vm1: {src: 1}}, '
                         'devices: {src: {allocated: 1, placement: 0}}}')
        self.assertIn("        self.assertPci('vm1', {'src': 1})\n", body)
        self.assertIn("        self.assertDevices('src', {\n"
                      "            'allocated': 1,\n"
                      "            'placement': 0,\n"
                      "        })\n", body)
        # The device providers of the host's tree, as Nova's helper reads
        # them (Placement's in_tree needs microversion 1.14: at the
        # client's default, 1.0, Placement answers 400).
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        helper = source[source.index('    def assertDevices('):]
        helper = helper[:helper.index('\n    def ', 10)]
        self.assertIn('self._get_all_rps_in_a_tree(root)', helper)
        self.assertNotIn('in_tree', helper)
        # Allocations are by host, what a server holds in a host's device
        # providers left to devices' placement, as the harness counts
        # them (a PCI alias's unit in Placement: LP#2115905's scenario).
        held = source[source.index('    def _held('):]
        held = held[:held.index('\n    def ', 10)]
        self.assertIn("if set(by_provider) - set(hosts):", held)
        self.assertIn("            if rp in devices:\n"
                      "                continue\n", held)

    def test_device_providers(self):
        body = self.body('- boot: {server: vm1, flavor: pin2, host: src}\n'
                         '  expect: {device_providers: {src: '
                         '{"0000:81:00.0": {class: CUSTOM_NVME, total: 1, '
                         'used: 1, traits: []}}, dst: {}}}')
        self.assertIn("        self.assertDeviceProviders('dst', {\n"
                      "        })\n"
                      "        self.assertDeviceProviders('src', {\n"
                      "            '0000:81:00.0': {\n"
                      "                'class': 'CUSTOM_NVME',\n"
                      "                'total': 1,\n"
                      "                'traits': [],\n"
                      "                'used': 1,\n"
                      "            },\n"
                      "        })\n", body)
        # Placement's providers under the host, by PCI address: a PCI
        # device's and a GPU's; exactly those named, the keys named of
        # each; the traits Nova gives every device provider left out.
        source = self.export('- boot: {server: vm1, flavor: pin2}\n'
                             '  expect: {device_providers: {src: {}}}')
        helper = source[source.index('    def assertDeviceProviders('):]
        helper = helper[:helper.index('\n    def ', 10)]
        self.assertIn("if (rp['root_provider_uuid'] != root or rp['uuid'] "
                      "== root or\n"
                      "                    not rp['name'].startswith("
                      "host + '_')):", helper)
        self.assertIn("re.match(r'^[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}"
                      "\\.[0-7]$',", helper)
        self.assertIn("address = '%s:%s:%s.%s' % tuple(name.split('_')"
                      "[1:])", helper)
        self.assertIn("{'COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'}),",
                      helper)
        self.assertIn("self.assertEqual(sorted(expected), sorted(found),",
                      helper)
        self.assertIn("want, {key: found[address][key] for key in want},",
                      helper)
        self.assertNotIn('def assertDeviceProviders(', self.export(
            '- boot: {server: vm1, flavor: pin2}'))

    def test_a_tracker_s_cells(self):
        body = self.body('- boot: {server: vm1, flavor: pin2, host: src}\n'
                         '  expect: {tracker: {src: {cells: {0: '
                         '{cpu_usage: 0}}}}}')
        self.assertIn("        self.assertTrackers({\n"
                      "        }, skip=['src'])\n"
                      "        self.assertTrackerFields('src', {'cells': "
                      "{0: {'cpu_usage': 0}}})\n", body)

    def test_the_helpers_are_defined(self):
        source = self.export('- boot: {server: vm1, flavor: pin2}')
        for helper in ('assertPinnedCpus', 'assertPci', 'assertDevices',
                       'assertTrackerFields', '_shape_cells'):
            self.assertIn('    def %s(self' % helper, source)


class RefusalTest(LibvirtExportTestCase):

    def assertRefused(self, steps, *words, head=HEAD):
        return super().assertRefused(steps, *words, head=head)

    def test_hosts_that_need_different_options(self):
        head = HEAD.replace('dst: {profile: dev-1s-8c-smt2}',
                            'dst: {profile: nfv-2s-10c-smt2-pf}')
        self.assertRefused('- boot: {server: vm1, flavor: pin2}',
                           "hosts 'dst' and 'src' need different options",
                           'compute.cpu_dedicated_set',
                           "--with-harness exports it, each host its own "
                           "with the harness's PerHostConfig", head=head)

    def test_a_vdpa_host(self):
        head = HEAD.replace('dev-1s-8c-smt2', 'nfv-2s-10c-smt2-vdpa')
        self.assertRefused('- boot: {server: vm1, flavor: pin2}',
                           'vDPA and remote-managed functions', head=head)

    def test_an_option_of_a_running_compute_for_one_host_of_two(self):
        # A running compute reads its CPU sets at each resource pass: dst
        # would read src's.
        self.assertRefused(
            '- stop_compute: src\n'
            '- start_compute: {host: src, config: {compute: '
            '{cpu_dedicated_set: "3-7,11-15"}}}',
            'step 2 (start_compute)', 'option compute.cpu_dedicated_set',
            "host 'src' starts with '3-7,11-15', host 'dst' has "
            "'2-7,10-15'", 'the computes of one test share one config',
            "--with-harness exports it, each host its own with the "
            "harness's PerHostConfig")

    def test_device_providers_of_a_host_without_profile(self):
        self.assertRefused(
            '- boot: {server: vm1, flavor: small}\n'
            '  expect: {device_providers: {src: {}}}',
            'expect: device_providers', "host 'dst' has no profile",
            head=test_export.HEAD)

    def test_pinned_cpus_of_a_host_without_profile(self):
        self.assertRefused(
            '- boot: {server: vm1, flavor: small}\n'
            '  expect: {pinned_cpus: {src: 0}}',
            'expect: pinned_cpus', "host 'dst' has no profile",
            head=test_export.HEAD)


class PerHostConfigTest(LibvirtExportTestCase):
    """--with-harness: hosts of different options, each its own."""

    RESTART = ('- stop_compute: src\n'
               '- start_compute: {host: src, config: {compute: '
               '{cpu_dedicated_set: "3-7,11-15"}}}')

    def export(self, steps, head=HEAD.replace(
            'bug: {id: 1, title: a test bug, fix: abc, story: s}\n', ''),
            **kwargs):
        source = nova_test.export(self.path(steps, head), with_harness=True)
        module = ast.parse(source)
        [cls] = [n for n in module.body if isinstance(n, ast.ClassDef)]
        self.assertEqual('base.ServersTestBase', ast.unparse(cls.bases[0]))
        return source

    def test_a_start_with_an_option_of_its_own(self):
        # A finding (no bug): the harness for the per-host config only.
        source = self.export(self.RESTART)
        self.assertIn('\nimport harness\n', source)
        self.assertNotIn('from harness import bugs', source)
        self.assertNotIn('HARNESS_REINTRODUCE', source)
        self.assertIn(
            "        # nova.conf in a deployment: Nova's test config is one "
            "per\n", source)
        self.assertIn('        self.host_config = self.useFixture('
                      'harness.PerHostConfig())\n', source)
        # The hosts' shared options stay self.flags, set at the start.
        self.assertIn("        self.flags(cpu_dedicated_set='2-7,10-15', "
                      "group='compute')\n", self.method(source))
        self.assertIn(
            "        # 2. start compute src with "
            "cpu_dedicated_set=3-7,11-15\n"
            "        # The options src has otherwise (its own nova.conf).\n"
            "        self.host_config.set_host('src', {\n"
            "            'compute': {\n"
            "                'cpu_dedicated_set': '3-7,11-15',\n"
            "            },\n"
            "        })\n"
            "        self.restart_compute_service('src')\n", source)

    def test_an_option_of_its_own_stays_its_own(self):
        # Back to the shared value: src's own again, not self.flags (the
        # proxy answers src with its own value before the test's).
        source = self.export(self.RESTART + '\n- stop_compute: src\n'
                             '- start_compute: {host: src, config: '
                             '{compute: {cpu_dedicated_set: "2-7,10-15"}}}')
        step = source[source.index('        # 4. start compute src'):]
        self.assertIn("        self.host_config.set_host('src', {\n"
                      "            'compute': {\n"
                      "                'cpu_dedicated_set': '2-7,10-15',\n",
                      step)
        self.assertEqual(1, self.method(source).count('self.flags('
                                                      'cpu_dedicated_set'))

    def test_hosts_of_different_profiles(self):
        # lp1983753's: src reserves memory and pages, its device_spec
        # names VFs; dst's names a PF; their CPU sets are the same.
        head = HEAD.replace(
            'bug: {id: 1, title: a test bug, fix: abc, story: s}\n', ''
        ).replace('src: {profile: dev-1s-8c-smt2}',
                  'src: {profile: nfv-2s-10c-smt2-reserved}'
                  ).replace('dst: {profile: dev-1s-8c-smt2}',
                            'dst: {profile: nfv-2s-10c-smt2-pf}')
        method = self.method(self.export(
            '- boot: {server: vm1, flavor: pin2}', head=head))
        # What they share by self.flags; each host's own set before its
        # compute starts.
        self.assertIn("        self.flags(cpu_dedicated_set="
                      "'2-9,12-19,22-29,32-39', group='compute')\n",
                      method)
        dst = method.index("        self.host_config.set_host('dst', {\n")
        src = method.index("        self.host_config.set_host('src', {\n")
        self.assertLess(dst, method.index("hostname='dst'"))
        self.assertLess(method.index("hostname='dst'"), src)
        self.assertLess(src, method.index("hostname='src'"))
        self.assertIn("            'DEFAULT': {\n"
                      "                'reserved_host_memory_mb': 8192,\n",
                      method[src:])
        self.assertNotIn('reserved_host_memory_mb', method[dst:src])
        self.assertIn('"product_id": "1592"', method[dst:src])
        self.assertNotIn('self.flags(device_spec', method)
        self.assertNotIn('self.flags(reserved', method)

    def test_trackers_read_each_host_s_reserved_amounts(self):
        source = self.export(self.RESTART)
        helper = source[source.index('    def assertTrackers('):]
        helper = helper[:helper.index('\n    def ', 1)]
        self.assertIn("                'memory_mb_used': self.host_config."
                      "get(\n"
                      "                    host, 'reserved_host_memory_mb'),",
                      helper)
        self.assertNotIn('CONF.reserved_host_memory_mb', helper)
        # Without per-host options, the test's config (as before).
        plain = nova_test.export(self.path(
            '- boot: {server: vm1, flavor: pin2}', head=HEAD))
        self.assertIn("'memory_mb_used': CONF.reserved_host_memory_mb,",
                      plain)
        self.assertNotIn('host_config', plain)

    def test_a_confirm_held_on_a_stopped_source(self):
        # The confirm is cast to the stopped source and runs when it
        # starts: the start waits for its end.
        source = self.export(
            '- boot: {server: vm1, flavor: pin2, host: src}\n'
            '- migrate: {server: vm1, host: dst}\n'
            '- stop_compute: src\n'
            '- confirm: vm1\n'
            '  error: did not reach its resting state\n'
            '  expect: {migrations: {vm1: confirming}}\n'
            '- start_compute: {host: src, config: {compute: '
            '{cpu_dedicated_set: "3-7,11-15"}}}')
        self.assertIn(
            "        # 4. confirm vm1\n"
            "        self.api.post_server_action(\n"
            "            self.servers['vm1']['id'], {'confirmResize': None})\n"
            "        # Cast to the source compute, stopped: it waits on the "
            "bus for its start.\n"
            "        self.assertIn(objects.Migration.get_by_id(\n"
            "            self.context, self._migrations_of('vm1')[-1]['id']\n"
            "        ).source_compute, ['src'])\n"
            "        self.assertLatestMigration('vm1', 'confirming')\n",
            source)
        self.assertIn(
            "        self.restart_compute_service('src')\n"
            "        self._schedule('src')\n"
            "        # The confirm of vm1 held on its bus runs now: wait for "
            "its end.\n"
            "        self._wait_for_event_end(\n"
            "            self.servers['vm1'], 'confirmResize', "
            "'compute_confirm_resize')\n", source)
        self.assertIn('    def _wait_for_event_end(self, server, '
                      'action_name, event_name):\n', source)
        # Polled by integrated_helpers' own retrying wait.
        self.assertIn('        self._wait_for_assert(ended)\n', source)


class LogsTest(test_export.ExportTestCase):

    def test_the_step_s_records_after_its_mark(self):
        body = self.body('- boot: {server: vm1, flavor: small}\n'
                         '  expect: {logs: {any: {absent: {level: '
                         'WARNING, pattern: "went wrong"}}}}')
        self.assertEqual(
            ['# 1. boot vm1 (small)',
             'log_mark = len(self.stdlog.logger.output)'], body[:2])
        self.assertEqual("self.assertLogged(log_mark, 'WARNING', "
                         "'went wrong')", body[-1])

    def test_present(self):
        body = self.body('- boot: {server: vm1, flavor: small}\n'
                         '  expect: {logs: {any: {present: {level: '
                         'ERROR}}}}')
        self.assertEqual("self.assertLogged(log_mark, 'ERROR', None, "
                         "present=True)", body[-1])

    def test_absent_from_one_service_is_absent_from_all(self):
        # Stronger than the scenario (the test's log does not tell
        # services apart), and said so in the test.
        body = self.body('- boot: {server: vm1, flavor: small}\n'
                         '  expect: {logs: {"nova-compute on src": '
                         '{absent: {level: ERROR}}}}')
        self.assertEqual(
            ['# The scenario says none from nova-compute on src: none '
             'from any',
             "# service here, stronger (the test's log does not tell them "
             "apart).",
             "self.assertLogged(log_mark, 'ERROR', None)"], body[-3:])

    def test_present_in_one_service_is_refused(self):
        # Another service's record would do.
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '  expect: {logs: {nova-compute: {present: '
                           '{level: ERROR}}}}',
                           'expect: logs', "service 'nova-compute': present",
                           'say any')

    def test_debug_is_refused(self):
        self.assertRefused('- boot: {server: vm1, flavor: small}\n'
                           '  expect: {logs: {any: {absent: '
                           '{level: DEBUG}}}}',
                           'expect: logs', 'level DEBUG')

    def assertLoggedRuns(self, output, level, pattern, present):
        """Run the exported assertLogged on ``output``: its failure."""
        source = nova_test.LOG_HELPERS

        class FakeTest(object):
            def assertEqual(self, want, got, message):
                if want != got:
                    raise AssertionError(message)

            def assertNotEqual(self, want, got, message):
                if want == got:
                    raise AssertionError(message)

        namespace = {'re': re}
        exec('class Helpers(object):\n' + source, namespace)
        test = type('T', (namespace['Helpers'], FakeTest), {})()
        test.stdlog = type('S', (), {})()
        test.stdlog.logger = type('L', (), {'output': output})()
        try:
            test.assertLogged(10, level, pattern, present)
        except AssertionError as exc:
            return str(exc)
        return None

    def test_assert_logged_reads_level_and_pattern_after_the_mark(self):
        before = '2026-12-06 10:00:00,000 ERROR [x] went wrong early\n'
        output = ('x' * 10 + '2026-12-06 10:00:01,000 INFO [nova] fine\n'
                  '2026-12-06 10:00:02,000 WARNING [nova.compute] went '
                  'wrong\nand on\n')
        self.assertIsNone(self.assertLoggedRuns(output, 'ERROR', None,
                                                False))
        self.assertIn('records at WARNING', self.assertLoggedRuns(
            output, 'WARNING', 'went', False))
        self.assertIsNone(self.assertLoggedRuns(output, 'WARNING',
                                                'went wrong', True))
        self.assertIsNone(self.assertLoggedRuns(output, 'INFO', 'fine',
                                                True))
        self.assertIn('no record at ERROR', self.assertLoggedRuns(
            output, 'ERROR', None, True))
        # Records before the mark are another step's.
        self.assertIsNone(self.assertLoggedRuns(
            before[:10] + output[10:], 'ERROR', None, False))
        self.assertEqual(('INFO', 'WARNING', 'ERROR', 'CRITICAL'), tuple(
            logging.getLevelName(logging.getLevelName(name))
            for name in ('INFO', 'WARNING', 'ERROR', 'CRITICAL')))


class HostsTest(test_export.ExportTestCase):

    def test_every_shipped_profile_is_translated_or_refused_by_name(self):
        for name in profiles.known_profiles():
            head = HEAD.replace('dev-1s-8c-smt2', name)
            path = self.path('- boot: {server: vm1, flavor: pin2}', head)
            try:
                source = nova_test.export(path)
            except nova_test.refusal.Refused as exc:
                self.assertIn('profile %s' % name, str(exc))
                continue
            compile(source, name, 'exec')
            self.assertIn('def _host_info_%s(self)' % libvirt.slug(name),
                          source)
