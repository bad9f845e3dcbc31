"""Hypervisor faults in scenario files: what the loader takes and refuses.

A fake host may carry ``fail: <driver method>``; the loader checks it
before any service starts and turns it into the compute driver that
fails there (``harness.faults``). No Nova service runs here.
"""

import os

import fixtures
# Imported here, not in a test: a first import of Nova registers its config
# options, which the leak check would count against the test.
from nova.virt import driver as virt_driver
from nova.virt import fake

from harness.cloud import faults
from harness.core import errors
from harness.core import scenario
from harness import testing

SCENARIO = """\
name: a confirm that fails on the source
hosts:
  src: %s
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - resize: {server: vm1, flavor: large}
  - confirm: vm1
    error: injected hypervisor fault
    expect: {migrations: {vm1: error}, servers: {vm1: ERROR}}
"""


class TestHostFaults(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def load(self, host_spec):
        path = os.path.join(self.dir, 'faults.yaml')
        with open(path, 'w') as out:
            out.write(SCENARIO % host_spec)
        return path, scenario.load(path)

    def refused(self, host_spec, *fragments):
        path = os.path.join(self.dir, 'faults.yaml')
        with open(path, 'w') as out:
            out.write(SCENARIO % host_spec)
        exc = self.assertRaises(errors.ScenarioError, scenario.load, path)
        message = str(exc)
        self.assertIn(path, message)
        self.assertIn('field "hosts.src.fail"', message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn('Traceback', message)
        return message

    def test_fault_becomes_a_failing_fake_driver(self):
        _, (loaded,) = self.load('{driver: fake, fail: confirm_migration}')
        self.assertEqual('harness_faults.MediumFakeDriverFailingConfirm'
                         'Migration', loaded.hosts['src'].driver)
        self.assertEqual('fake.MediumFakeDriver', loaded.hosts['dst'].driver)

    def test_failing_driver_loads_as_nova_loads_drivers(self):
        _, (loaded,) = self.load('{driver: fake, fail: confirm_migration}')
        loaded_driver = virt_driver.load_compute_driver(
            None, loaded.hosts['src'].driver)
        self.assertIsInstance(loaded_driver, fake.MediumFakeDriver)
        loaded_driver._host = 'src'
        exc = self.assertRaises(faults.InjectedFault,
                                loaded_driver.confirm_migration,
                                None, None, None, None)
        self.assertIn('confirm_migration failed on src', str(exc))

    def test_fault_round_trips_through_document(self):
        _, (loaded,) = self.load('{driver: fake, fail: confirm_migration}')
        again = scenario.parse(loaded.document(), 'again')
        self.assertEqual(loaded.hosts['src'].driver,
                         again.hosts['src'].driver)

    def test_unknown_method_refused_with_the_known_listed(self):
        self.refused('{driver: fake, fail: reboot}',
                     "unknown driver method 'reboot'", 'confirm_migration',
                     'finish_migration', 'finish_revert_migration',
                     'migrate_disk_and_power_off')

    def test_every_move_step_of_the_hypervisor_can_fail(self):
        # Each is reached by a cast, whose failure the cloud keeps on the
        # compute that raised it (nova_env.CastsWaited), so each is offered.
        self.assertEqual(
            {'migrate_disk_and_power_off', 'finish_migration',
             'confirm_migration', 'finish_revert_migration'},
            set(scenario.FAULT_METHODS))
        for method, args in (
                ('migrate_disk_and_power_off', (None,) * 5),
                ('finish_migration', (None,) * 8),
                ('confirm_migration', (None,) * 4),
                ('finish_revert_migration', (None,) * 4)):
            _, (loaded,) = self.load('{driver: fake, fail: %s}' % method)
            name = loaded.hosts['src'].driver
            self.assertEqual(faults.driver_name(method), name)
            loaded_driver = virt_driver.load_compute_driver(None, name)
            self.assertIsInstance(loaded_driver, fake.MediumFakeDriver)
            loaded_driver._host = 'src'
            exc = self.assertRaises(faults.InjectedFault,
                                    getattr(loaded_driver, method), *args)
            self.assertIn('%s failed on src' % method, str(exc))
            # Only the named method fails: the others are the fake's.
            for other in set(scenario.FAULT_METHODS) - {method}:
                self.assertIs(getattr(fake.MediumFakeDriver, other),
                              getattr(type(loaded_driver), other))

    def test_finish_migration_fault_on_the_destination(self):
        # LP#1825537's scenario: the destination's finish_resize fails.
        path = os.path.join(self.dir, 'dst.yaml')
        with open(path, 'w') as out:
            out.write(SCENARIO.replace(
                'dst: {driver: fake}',
                'dst: {driver: fake, fail: finish_migration}')
                % '{driver: fake}')
        (loaded,) = scenario.load(path)
        self.assertEqual('fake.MediumFakeDriver',
                         loaded.hosts['src'].driver)
        self.assertEqual('harness_faults.MediumFakeDriverFailingFinish'
                         'Migration', loaded.hosts['dst'].driver)

    def test_fault_needs_a_fake_driver(self):
        self.refused('{fail: confirm_migration}', 'driver: fake')

    def test_fault_on_a_profiled_host_refused(self):
        self.refused('{profile: dev-1s-8c-smt2, fail: confirm_migration}',
                     'driver: fake')

    def test_fault_must_be_a_name(self):
        self.refused('{driver: fake, fail: [confirm_migration]}',
                     'expected a name')

    def test_failed_resize_may_expect_its_migration(self):
        # A resize expected to fail still leaves a migration to assert on.
        path = os.path.join(self.dir, 'resize.yaml')
        with open(path, 'w') as out:
            out.write(RESIZE_FAILS)
        (loaded,) = scenario.load(path)
        self.assertEqual({'vm1': 'error'},
                         loaded.steps[1].expect['migrations'])


RESIZE_FAILS = """\
name: a resize that fails
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - resize: {server: vm1, flavor: large}
    error: some failure
    expect: {migrations: {vm1: error}}
  - delete: vm1
"""
