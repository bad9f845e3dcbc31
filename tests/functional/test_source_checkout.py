"""The Nova under test is found where it is installed: wheel or source tree.

A developer runs the harness on a Nova checkout installed editable
(``pip install -e ~/src/nova``); ``tox -e source`` does that with the tree
``$NOVA_SOURCE`` (Nova 34.0.0's sdist, unpacked, when unset) and runs this
module there, with ``HARNESS_EXPECT_NOVA_SOURCE`` naming the tree. Then the
API's paste config, Nova's test fixtures (``nova.tests``) and Nova's
version must all come from that tree. Anywhere else (``tox -e functional``)
Nova is a wheel, and the paste config comes from the wheel's data files.
Either way a scenario runs on that Nova.
"""

from importlib import metadata
import os

from harness.cloud import install
from harness.core import scenario as scenario_mod
from harness import testing

EXPECTED_TREE = os.environ.get('HARNESS_EXPECT_NOVA_SOURCE')

SCENARIO = """
scenarios:
  - name: boot and delete on the Nova under test
    hosts: {h1: {driver: fake}}
    flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
    steps:
      - boot: {server: vm1, flavor: small, host: h1}
        expect:
          allocations: {vm1: {h1: small}}
          tracker: {h1: small}
      - delete: vm1
        expect: {allocations: {}, tracker: {}}
"""


def _under(path, directory):
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


class TestNovaUnderTest(testing.ScenarioTestCase):

    def test_paste_config_and_fixtures_come_from_the_nova_under_test(self):
        import nova
        from nova.tests import fixtures as nova_fixtures
        tree = install.source_tree()
        paste = install.nova_api_paste_ini()
        self.assertTrue(os.path.isfile(paste), paste)
        if EXPECTED_TREE:
            # tox -e source: the editable tree, not a wheel's copy.
            self.assertIsNotNone(tree, 'nova is imported from %s, not from '
                                 'a source tree' % nova.__file__)
            self.assertEqual(os.path.realpath(EXPECTED_TREE),
                             os.path.realpath(tree))
            self.assertEqual(os.path.join(tree, 'etc', 'nova',
                                          'api-paste.ini'), paste)
            self.assertTrue(_under(nova_fixtures.__file__, tree),
                            nova_fixtures.__file__)
            pkg_info = os.path.join(tree, 'PKG-INFO')
            if os.path.isfile(pkg_info):
                # An sdist: pbr took the version from it (PBR_VERSION).
                with open(pkg_info, encoding='utf-8') as info:
                    version = [line.split(':', 1)[1].strip()
                               for line in info
                               if line.startswith('Version:')][0]
                self.assertEqual(version, metadata.version('nova'))
        else:
            # A wheel: no etc/ next to the package; the wheel's data.
            self.assertIsNone(tree)
            self.assertFalse(_under(paste, os.path.dirname(
                os.path.dirname(nova.__file__))), paste)
            self.assertEqual(os.path.join('etc', 'nova', 'api-paste.ini'),
                             os.path.join(*paste.split(os.sep)[-3:]))

    def test_a_scenario_runs_on_it(self):
        _, scenarios = scenario_mod.load_file('here.yaml', text=SCENARIO)
        self.run_scenario(scenarios[0])
