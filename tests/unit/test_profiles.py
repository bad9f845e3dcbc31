"""Host profiles: the shipped ones load and expand as their machines are
built; a bad profile gets one error naming the file and the field.
"""

import copy
import os

import ddt
import fixtures
import yaml

from harness.core import errors
from harness.core import profiles
from harness import testing

SHIPPED = profiles.known_profiles()
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# A small valid profile the error cases start from: 1 socket, 2 cells of
# 2 cores x 2 threads, siblings numbered as Linux does (0,4).
VALID = {
    'description': 'a test host',
    'sockets': 1,
    'disk_gb': 100,
    'cells': [
        {'socket': 0, 'cpus': '0-1,4-5', 'siblings': [[0, 4], [1, 5]],
         'memory_mb': 4096, 'pages': {'2M': 512, '1G': 1}},
        {'socket': 0, 'cpus': '2-3,6-7', 'siblings': [[2, 6], [3, 7]],
         'memory_mb': 4096},
    ],
    'nova': {
        'compute': {'cpu_dedicated_set': '1-3,5-7',
                    'cpu_shared_set': '0,4'},
        'DEFAULT': {'reserved_host_memory_mb': 1024,
                    'reserved_huge_pages': [
                        {'node': 0, 'size': '1G', 'count': 1}]},
    },
}


class TestWhereProfilesAre(testing.TestCase):
    """The shipped profiles are data at the top of the checkout.

    The build maps ``fixtures/`` to ``harness._fixtures``; that an
    installed wheel reads its own copy is tests/functional/test_wheel.py's
    proof.
    """

    def test_from_a_checkout_they_are_its_top_level_fixtures(self):
        hosts = os.path.join(REPO, 'fixtures', 'hosts')
        self.assertEqual(hosts, profiles.PROFILE_DIR)
        self.assertIn('dev-1s-8c-smt2', SHIPPED)
        self.assertEqual(sorted(name[:-len('.yaml')]
                                for name in os.listdir(hosts)
                                if name.endswith('.yaml')), SHIPPED)
        self.assertFalse(os.path.exists(os.path.join(REPO, 'harness',
                                                     'data')))

    def test_fixtures_is_data_and_shadows_no_library(self):
        # A package named fixtures at the top of the checkout (on sys.path
        # when tests run from it) would hide testing-cabal's library.
        for folder, _, files in os.walk(os.path.join(REPO, 'fixtures')):
            self.assertNotIn('__init__.py', files, folder)
        self.assertFalse(fixtures.__file__.startswith(
            os.path.join(REPO, 'fixtures') + os.sep), fixtures.__file__)
        self.assertTrue(issubclass(fixtures.TempDir, fixtures.Fixture))

    def test_the_installed_package_comes_before_the_checkout(self):
        # Any importable package stands in for an installed wheel's.
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.profiles.PROFILE_PACKAGE', 'harness.core.steps'))
        self.assertEqual(os.path.join(REPO, 'harness', 'core', 'steps'),
                         profiles._profile_dir())

    def test_neither_installed_nor_in_a_checkout(self):
        elsewhere = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.profiles.PROFILE_PACKAGE',
            'harness._no_such_package.hosts'))
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.profiles._PACKAGE_DIR',
            os.path.join(elsewhere, 'harness')))
        self.assertIsNone(profiles._profile_dir())
        os.makedirs(os.path.join(elsewhere, 'fixtures', 'hosts'))
        self.assertEqual(os.path.join(elsewhere, 'fixtures', 'hosts'),
                         profiles._profile_dir())

    def test_no_profiles_is_one_clear_error(self):
        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.profiles.PROFILE_DIR', None))
        self.assertEqual([], profiles.known_profiles())
        exc = self.assertRaises(errors.ProfileError, profiles.load_profile,
                                'dev-1s-8c-smt2')
        self.assertIn("unknown host profile 'dev-1s-8c-smt2': no profiles "
                      "are installed (package harness._fixtures.hosts not "
                      "found", str(exc))
        # A profile given by path needs no shipped ones.
        self.assertEqual('dev-1s-8c-smt2', profiles.load_profile(
            os.path.join(REPO, 'fixtures', 'hosts',
                         'dev-1s-8c-smt2.yaml')).name)


@ddt.ddt
class TestShippedProfiles(testing.TestCase):

    @ddt.data(*SHIPPED)
    def test_loads_and_is_consistent(self, name):
        profile = profiles.load_profile(name)
        self.assertEqual(name, profile.name)
        self.assertTrue(profile.description)
        # libvirt reports CPUs 0..N-1 online.
        self.assertEqual(set(range(len(profile.cpus))), set(profile.cpus))
        for cell in profile.cells:
            self.assertEqual(cell.cpus, frozenset().union(*cell.siblings))
            memory_kb = sum(size * n for size, n in cell.pages.items())
            self.assertEqual(cell.memory_mb * 1024, memory_kb)

    def test_the_five_machines_the_issue_asks_for(self):
        self.assertLessEqual({'dev-1s-8c-smt2', 'xeon-2s-20c-smt2',
                              'epyc-2s-64c-smt2-nps4', 'mixed-1s-16c-smt2',
                              'nfv-2s-10c-smt2-reserved'}, set(SHIPPED))

    def test_dev_host(self):
        dev = profiles.load_profile('dev-1s-8c-smt2')
        self.assertEqual((1, 1, 8 * 2),
                         (dev.sockets, len(dev.cells), len(dev.cpus)))
        self.assertEqual({0, 8}, dev.core_of(0))
        self.assertEqual({2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15},
                         dev.dedicated_cpus)
        self.assertEqual({0, 1, 8, 9}, dev.shared_cpus)

    def test_xeon_two_sockets(self):
        xeon = profiles.load_profile('xeon-2s-20c-smt2')
        self.assertEqual(2 * 20 * 2, len(xeon.cpus))
        self.assertEqual([0, 1], [cell.socket for cell in xeon.cells])
        # Linux numbering: socket 0 has cores 0-19, their siblings +40.
        self.assertEqual(set(range(0, 20)) | set(range(40, 60)),
                         xeon.cells[0].cpus)
        self.assertEqual({0, 40}, xeon.core_of(40))
        self.assertEqual({19, 59}, xeon.core_of(19))
        for cell in xeon.cells:
            self.assertEqual(192 * 1024, cell.memory_mb)
            self.assertEqual(16, cell.pages[1024 * 1024])
            self.assertEqual(4096, cell.pages[2048])
            # 4K pool = what 8 GiB of 2M and 16 GiB of 1G pages leave.
            self.assertEqual((192 - 8 - 16) * 1024 * 1024 // 4,
                             cell.pages[4])

    def test_epyc_nps4(self):
        epyc = profiles.load_profile('epyc-2s-64c-smt2-nps4')
        self.assertEqual(2 * 64 * 2, len(epyc.cpus))
        self.assertEqual([0] * 4 + [1] * 4, [c.socket for c in epyc.cells])
        # 16 cores per node; node 4 is the first of socket 1.
        self.assertEqual(set(range(64, 80)) | set(range(192, 208)),
                         epyc.cells[4].cpus)
        self.assertEqual({0, 128}, epyc.core_of(0))

    def test_nfv_host_reserves_pages(self):
        nfv = profiles.load_profile('nfv-2s-10c-smt2-reserved')
        self.assertEqual(4, nfv.reserved_pages(0, 1024 * 1024))
        self.assertEqual(1024, nfv.reserved_pages(1, 2048))
        self.assertEqual(0, nfv.reserved_pages(0, 2048))
        self.assertEqual(
            [{'node': '0', 'size': '1048576', 'count': '4'},
             {'node': '1', 'size': '1048576', 'count': '4'},
             {'node': '1', 'size': '2048', 'count': '1024'}],
            nfv.conf_overrides()[(None, 'reserved_huge_pages')])


class TestBadProfiles(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def write(self, doc, name='host.yaml'):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        return path

    def assertRefused(self, doc, field, *words):
        path = self.write(doc)
        exc = self.assertRaises(errors.ProfileError,
                                profiles.load_profile, path)
        message = str(exc)
        self.assertTrue(message.startswith(path + ': '), message)
        self.assertIn(field, message)
        for word in words:
            self.assertIn(word, message)
        return message

    def variant(self):
        return copy.deepcopy(VALID)

    def test_hypervisor_versions(self):
        doc = self.variant()
        doc['hypervisor'] = {'libvirt': '10.0.0', 'qemu': '8.2'}
        profile = profiles.load_profile(self.write(doc))
        self.assertEqual({'libvirt': (10, 0, 0), 'qemu': (8, 2, 0)},
                         profile.hypervisor)
        # Unsaid: the oldest versions Nova supports (harness.cloud.libvirt).
        self.assertEqual({}, profiles.load_profile(
            self.write(VALID)).hypervisor)

    def test_hypervisor_version_not_a_version(self):
        doc = self.variant()
        doc['hypervisor'] = {'libvirt': 10.0}
        self.assertRefused(doc, 'hypervisor.libvirt', 'major.minor.micro')

    def test_hypervisor_unknown_key(self):
        doc = self.variant()
        doc['hypervisor'] = {'kvm': '8.2.2'}
        self.assertRefused(doc, 'hypervisor.kvm')

    def test_the_base_document_is_valid(self):
        profile = profiles.load_profile(self.write(VALID))
        self.assertEqual(8, len(profile.cpus))
        self.assertEqual(1, profile.reserved_pages(0, 1024 * 1024))

    def test_overlapping_cpus(self):
        doc = self.variant()
        doc['cells'][1]['cpus'] = '1-3,6-7'
        doc['cells'][1]['siblings'] = [[1], [2, 6], [3, 7]]
        self.assertRefused(doc, 'cells[1].cpus', 'CPU 1', 'cells[0]')

    def test_sibling_set_across_cells(self):
        doc = self.variant()
        doc['cells'][0]['siblings'] = [[0, 4], [1, 6]]
        self.assertRefused(doc, 'cells[0].siblings[1]', 'span cells')

    def test_cpu_in_no_sibling_set(self):
        doc = self.variant()
        doc['cells'][0]['siblings'] = [[0, 4]]
        self.assertRefused(doc, 'cells[0].siblings', '1,5')

    def test_cpu_set_names_missing_cpus(self):
        doc = self.variant()
        doc['nova']['compute']['cpu_dedicated_set'] = '1-3,5-9'
        self.assertRefused(doc, 'nova.compute.cpu_dedicated_set', '8-9')

    def test_dedicated_and_shared_overlap(self):
        doc = self.variant()
        doc['nova']['compute']['cpu_shared_set'] = '0-1'
        self.assertRefused(doc, 'nova.compute.cpu_shared_set', 'CPU(s) 1')

    def test_pages_exceed_memory(self):
        doc = self.variant()
        doc['cells'][0]['pages'] = {'1G': 5}
        self.assertRefused(doc, 'cells[0].pages', '5120 MiB', '4096')

    def test_explicit_pools_must_add_up(self):
        doc = self.variant()
        doc['cells'][1]['pages'] = {'4K': 1000}
        self.assertRefused(doc, 'cells[1].pages', 'memory_mb 4096')

    def test_reserved_pages_exceed_pool(self):
        doc = self.variant()
        doc['nova']['DEFAULT']['reserved_huge_pages'][0]['count'] = 2
        self.assertRefused(
            doc, 'nova.DEFAULT.reserved_huge_pages[0].count', 'only 1')

    def test_reserved_pages_of_a_missing_pool(self):
        doc = self.variant()
        doc['nova']['DEFAULT']['reserved_huge_pages'][0]['node'] = 1
        self.assertRefused(
            doc, 'nova.DEFAULT.reserved_huge_pages[0].size', 'no 1G pool')

    def test_reserved_memory_exceeds_host(self):
        doc = self.variant()
        doc['nova']['DEFAULT']['reserved_host_memory_mb'] = 8192
        self.assertRefused(doc, 'reserved_host_memory_mb', '8192')

    def test_cpu_gap(self):
        doc = self.variant()
        doc['cells'][1]['cpus'] = '2-3,6,8'
        doc['cells'][1]['siblings'] = [[2, 6], [3, 8]]
        doc['nova']['compute']['cpu_dedicated_set'] = '1-3,5-6'
        self.assertRefused(doc, 'cells', 'missing: 7')

    def test_wrong_type(self):
        doc = self.variant()
        doc['sockets'] = 'two'
        self.assertRefused(doc, 'sockets', 'integer')

    def test_bool_is_not_a_count(self):
        doc = self.variant()
        doc['cells'][0]['memory_mb'] = True
        self.assertRefused(doc, 'cells[0].memory_mb', 'integer')

    def test_unknown_top_key(self):
        doc = self.variant()
        doc['numa_cells'] = []
        self.assertRefused(doc, 'numa_cells', 'unknown key', 'cells')

    def test_unknown_nested_key(self):
        doc = self.variant()
        doc['cells'][0]['hugepages'] = {}
        self.assertRefused(doc, 'cells[0].hugepages', 'unknown key')

    def test_unknown_nova_option(self):
        doc = self.variant()
        doc['nova']['DEFAULT']['vcpu_pin_set'] = '0-3'
        self.assertRefused(doc, 'nova.DEFAULT.vcpu_pin_set', 'unknown key')

    def test_unknown_page_size(self):
        doc = self.variant()
        doc['cells'][0]['pages'] = {'16M': 1}
        self.assertRefused(doc, 'cells[0].pages.16M', '4K, 2M, 1G')

    def test_missing_description(self):
        doc = self.variant()
        del doc['description']
        self.assertRefused(doc, '(top)', "'description'")

    def test_socket_without_a_cell(self):
        doc = self.variant()
        doc['sockets'] = 2
        self.assertRefused(doc, 'sockets', 'socket 1 has no cell')

    def test_layout_and_explicit_cpus(self):
        doc = self.variant()
        doc['layout'] = {'cores_per_cell': 2, 'threads_per_core': 2,
                         'numbering': 'linux'}
        self.assertRefused(doc, 'cells[0].cpus', 'layout')

    def test_layout_expands_linux_numbering(self):
        doc = self.variant()
        doc['layout'] = {'cores_per_cell': 2, 'threads_per_core': 2,
                         'numbering': 'linux'}
        for cell in doc['cells']:
            del cell['cpus'], cell['siblings']
        profile = profiles.load_profile(self.write(doc))
        self.assertEqual(VALID['cells'][1]['siblings'],
                         [sorted(c) for c in profile.cells[1].siblings])

    def test_yaml_syntax_error(self):
        self.assertRefused('sockets: [1, 2\ncells: x\n', 'not valid YAML',
                           'line')

    def test_unsafe_yaml_is_refused(self):
        self.assertRefused('!!python/object/apply:os.system ["true"]\n',
                           'not valid YAML')

    def test_not_a_mapping(self):
        self.assertRefused('- 1\n- 2\n', '(top)', 'mapping')

    def test_unknown_profile_lists_known_ones(self):
        exc = self.assertRaises(errors.ProfileError, profiles.load_profile,
                                'cray-1')
        self.assertIn("'cray-1'", str(exc))
        for name in SHIPPED:
            self.assertIn(name, str(exc))

    def test_missing_file(self):
        path = os.path.join(self.dir, 'nope.yaml')
        exc = self.assertRaises(errors.ProfileError, profiles.load_profile,
                                path)
        self.assertIn(path, str(exc))
