"""A scenario's ``config:`` is checked against Nova's options up front.

Each case is refused (or taken) as oslo.config would take the value for
the option Nova registers: ``resize_confirm_window`` is an IntOpt in
[DEFAULT], ``cpu_dedicated_set`` a StrOpt in [compute],
``enabled_filters`` a ListOpt in [filter_scheduler].
"""

import io
import os

import ddt
import fixtures

from harness.cloud import config
from harness.cloud import fixture as cloud_mod
from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.runners import cli
from harness.runners import runner
from harness import testing

BASE = {'name': 'config', 'hosts': {'h': {'driver': 'fake'}},
        'steps': [{'run_periodic': 'update_available_resource'}]}


def _scenario(conf):
    return scenario_mod.parse(dict(BASE, config=conf), 'c.yaml', 'c.yaml')


@ddt.ddt
class TestConfigChecked(testing.TestCase):

    @ddt.data({'DEFAULT': {'resize_confirm_window': 60}},
              {'compute': {'cpu_dedicated_set': '2-7'}},
              {'filter_scheduler': {'enabled_filters': ['ComputeFilter']}},
              {'DEFAULT': {'allow_resize_to_same_host': True}})
    def test_taken(self, conf):
        config.validate(_scenario(conf))

    @ddt.unpack
    @ddt.data(({'DEFAULT': {'resize_confirm_windo': 60}},
               'config.DEFAULT.resize_confirm_windo',
               "no option 'resize_confirm_windo' in [DEFAULT]"),
              ({'computes': {'cpu_dedicated_set': '2-7'}},
               'config.computes', "no option group 'computes'"),
              ({'compute': {'cpu_dedicated': '2-7'}},
               'config.compute.cpu_dedicated', 'in [compute]'),
              ({'DEFAULT': {'resize_confirm_window': 'soon'}},
               'config.DEFAULT.resize_confirm_window',
               "'soon' is not a value of this Integer option"))
    def test_refused_naming_the_field(self, conf, field, words):
        error = self.assertRaises(errors.ScenarioError, config.validate,
                                  _scenario(conf))
        self.assertIn('c.yaml, field "%s"' % field, str(error))
        self.assertIn(words, str(error))

    def test_a_reconfigure_steps_options_too(self):
        doc = dict(BASE, steps=BASE['steps'] + [{'reconfigure': {
            'config': {'filter_scheduler': {'host_subset_size': 'two'}}}}])
        error = self.assertRaises(
            errors.ScenarioError, config.validate,
            scenario_mod.parse(doc, 'c.yaml', 'c.yaml'))
        self.assertIn('c.yaml, step 2, field "reconfigure.config.'
                      'filter_scheduler.host_subset_size"', str(error))
        self.assertIn("'two' is not a value of this Integer option",
                      str(error))

    def test_refused_before_any_service_starts(self):
        started = []
        real = cloud_mod.Cloud._setUp

        def counting(cloud):
            started.append(cloud)
            return real(cloud)
        self.useFixture(fixtures.MonkeyPatch(
            'harness.cloud.fixture.Cloud._setUp', counting))
        self.assertRaises(errors.ScenarioError, runner.run,
                          _scenario({'DEFAULT': {'no_such_option': 1}}))
        self.assertEqual([], started)


# [pci] alias entries (Nova's JSON strings).
# Two specs of one name must agree on device_type (Nova compares them).
WITH_IDS = ('{"name": "nvme", "vendor_id": "8086", "product_id": "0b60", '
            '"device_type": "type-PCI"}')
OTHER_IDS = ('{"name": "nvme", "vendor_id": "144d", "product_id": "a80a", '
             '"device_type": "type-PCI"}')
NO_IDS = '{"name": "nvme", "device_type": "type-PCI"}'
WITH_RC = '{"name": "nvme", "resource_class": "CUSTOM_NVME"}'
IN_PLACEMENT = {'filter_scheduler': {'pci_in_placement': True}}


@ddt.ddt
class TestPciAliasAsNovaParsesIt(testing.TestCase):
    """[pci] alias, parsed by Nova's parser as the API and computes do.

    ``nova.pci.request``: an alias needs vendor and product IDs, or, with
    ``[filter_scheduler] pci_in_placement``, a resource class instead;
    with Placement one spec per alias name.
    """

    @ddt.data({'pci': {'alias': [WITH_IDS]}},
              {'pci': {'alias': [WITH_IDS, OTHER_IDS]}},
              dict(IN_PLACEMENT, pci={'alias': [WITH_RC]}))
    def test_taken(self, conf):
        config.validate(_scenario(conf))

    @ddt.unpack
    @ddt.data(({'pci': {'alias': [NO_IDS]}},
               'does not have vendor_id and product_id fields set.'),
              ({'pci': {'alias': [WITH_RC]}},
               'does not have vendor_id and product_id fields set.'),
              (dict(IN_PLACEMENT, pci={'alias': [NO_IDS]}),
               'does not have vendor_id and product_id fields set or '
               'resource_class field set.'),
              (dict(IN_PLACEMENT, pci={'alias': [WITH_IDS, OTHER_IDS]}),
               'have multiple specs'))
    def test_refused_naming_the_scenario_and_option(self, conf, reason):
        error = self.assertRaises(errors.ScenarioError, config.validate,
                                  _scenario(conf))
        self.assertIn('c.yaml, scenario \'config\', field "config.pci.alias"'
                      ': Nova refuses to start on it: The PCI alias(es) '
                      'nvme ', str(error))
        self.assertIn(reason, str(error))

    def test_nova_config_and_cache_stay_as_they_were(self):
        from nova.pci import request as pci_request
        conf = config.nova_env.CONF
        before = pci_request.get_alias_from_config.cache_info()
        self.assertRaises(errors.ScenarioError, config.validate, _scenario(
            dict(IN_PLACEMENT, pci={'alias': [NO_IDS]})))
        self.assertEqual([], conf.pci.alias)
        self.assertFalse(conf.filter_scheduler.pci_in_placement)
        # Neither filled nor read: Nova's cached aliases are its own.
        self.assertEqual(before,
                         pci_request.get_alias_from_config.cache_info())


class TestCliRefusesBadConfig(testing.TestCase):

    def test_exit_2_naming_the_field_before_the_first_scenario_runs(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        good = os.path.join(tmp, 'good.yaml')
        bad = os.path.join(tmp, 'bad.yaml')
        with open(good, 'w') as out:
            out.write(GOOD)
        with open(bad, 'w') as out:
            out.write(GOOD.replace('config: {}', 'config: {DEFAULT: '
                                   '{resize_confirm_windo: 60}}'))
        stdout, stderr = io.StringIO(), io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', stderr))
        # The good file comes first; nothing of it may run.
        self.assertEqual(2, cli.main(['run', good, bad], out=stdout))
        self.assertEqual('', stdout.getvalue())
        self.assertIn('bad.yaml, field "config.DEFAULT.resize_confirm_windo"'
                      ': Nova registers no option', stderr.getvalue())

    def test_a_pci_alias_nova_refuses_is_exit_2_before_any_start(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        bad = os.path.join(tmp, 'alias.yaml')
        with open(bad, 'w') as out:
            out.write(GOOD.replace('config: {}', 'config: {pci: {alias: '
                                   "['%s']}}" % NO_IDS))
        started = []
        self.useFixture(fixtures.MonkeyPatch(
            'harness.cloud.fixture.Cloud._setUp', started.append))
        stdout, stderr = io.StringIO(), io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', stderr))
        self.assertEqual(2, cli.main(['run', bad], out=stdout))
        self.assertEqual([], started)
        self.assertEqual('', stdout.getvalue())
        self.assertEqual(
            'harness: %s, scenario \'good\', field "config.pci.alias": Nova '
            'refuses to start on it: The PCI alias(es) nvme does not have '
            'vendor_id and product_id fields set.\n' % bad,
            stderr.getvalue())


GOOD = """
name: good
config: {}
hosts: {h: {driver: fake}}
steps:
  - run_periodic: update_available_resource
"""
