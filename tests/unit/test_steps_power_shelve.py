"""Power and shelve step kinds: the states the loader lets each take.

The accepted states are those of ``@check_instance_state`` on each
method of nova/compute/api.py; a refusal is one ScenarioError naming the
step and the field, before anything runs. No Nova service runs here.
"""

from harness.core import errors
from harness.core import scenario
from harness.core import steps
from harness.core.steps import shelve as shelve_step
from harness import testing

WHERE = 'power_shelve.yaml'


def document(steps_text, config=''):
    return ("""\
name: power and shelve
%shosts:
  host1: {driver: fake}
  host2: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: host1}
""" % config) + steps_text


class StepsTestCase(testing.TestCase):

    def load(self, steps_text, config=''):
        return scenario.parse(
            scenario.safe_load(document(steps_text, config)), WHERE)

    def assertRefused(self, steps_text, field, *fragments, config=''):
        exc = self.assertRaises(errors.ScenarioError, self.load,
                                steps_text, config)
        message = str(exc)
        self.assertIn(WHERE, message)
        self.assertIn('field "%s"' % field, message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn('\n', message)
        return message


class TestRegistry(testing.TestCase):

    def test_kind_names_are_what_server_ops_looks_up(self):
        # harness.cloud.servers.ServerOps settles on steps.get(<name>).
        for name, status in (('stop', 'SHUTOFF'), ('start', 'ACTIVE'),
                             ('reboot', 'ACTIVE'), ('pause', 'PAUSED'),
                             ('unpause', 'ACTIVE'),
                             ('suspend', 'SUSPENDED'),
                             ('resume', 'ACTIVE'), ('shelve', 'SHELVED'),
                             ('shelve_offload', 'SHELVED_OFFLOADED'),
                             ('unshelve', 'ACTIVE')):
            unit = steps.get(name)
            self.assertTrue(unit.operation, name)
            self.assertEqual(status, unit.resting['status'], name)

    def test_power_points_are_their_compute_rpc_method(self):
        for name in ('stop', 'start', 'reboot', 'pause', 'unpause',
                     'suspend', 'resume'):
            self.assertEqual({'%s_instance' % name},
                             set(steps.get(name).points))


class TestPowerStates(StepsTestCase):

    def test_a_full_power_cycle_loads(self):
        loaded = self.load("""\
  - stop: vm1
  - start: vm1
  - reboot: vm1
  - pause: vm1
  - unpause: vm1
  - suspend: vm1
  - resume: vm1
  - stop: vm1
  - reboot: {server: vm1, hard: true}
""")
        self.assertEqual('hard reboot vm1', loaded.steps[-1].label)
        self.assertEqual('soft reboot vm1', loaded.steps[3].label)

    def test_start_of_an_active_server_refused(self):
        self.assertRefused('  - start: vm1\n', 'start.server',
                           'cannot start vm1: it is active',
                           'must be stopped (SHUTOFF)')

    def test_stop_of_a_paused_server_refused(self):
        # Nova stops ACTIVE and ERROR servers only.
        self.assertRefused('  - pause: vm1\n  - stop: vm1\n', 'stop.server',
                           'cannot stop vm1: it is paused')

    def test_suspend_of_a_paused_server_refused(self):
        self.assertRefused('  - pause: vm1\n  - suspend: vm1\n',
                           'suspend.server', 'it is paused')

    def test_resume_of_a_paused_server_refused(self):
        self.assertRefused('  - pause: vm1\n  - resume: vm1\n',
                           'resume.server', 'must be suspended')

    def test_unpause_of_an_active_server_refused(self):
        self.assertRefused('  - unpause: vm1\n', 'unpause.server',
                           'must be paused')

    def test_soft_reboot_of_a_stopped_server_refused(self):
        self.assertRefused('  - stop: vm1\n  - reboot: vm1\n',
                           'reboot.server', 'cannot reboot vm1: it is '
                           'stopped')

    def test_hard_reboot_of_a_suspended_server_loads(self):
        self.load('  - suspend: vm1\n  - reboot: {server: vm1, hard: true}\n')

    def test_hard_must_be_a_boolean(self):
        self.assertRefused('  - reboot: {server: vm1, hard: "yes"}\n',
                           'reboot.hard', 'expected true or false')

    def test_unknown_field_refused(self):
        self.assertRefused('  - stop: {server: vm1, force: true}\n',
                           'stop.force', 'unknown field')

    def test_power_op_of_an_unknown_server_refused(self):
        self.assertRefused('  - stop: vm9\n', 'stop.server',
                           "no server 'vm9'")

    def test_stop_of_a_server_in_error_loads(self):
        # Nova stops an ERROR server (one with a host); a boot expected to
        # fail leaves the loader's state 'error'.
        self.load('  - boot: {server: vm2, flavor: small}\n'
                  '    error: no valid host\n'
                  '  - stop: vm2\n    error: it has no host\n')
        self.load('  - boot: {server: vm2, flavor: small}\n'
                  '    error: no valid host\n'
                  '  - reboot: {server: vm2, hard: true}\n'
                  '    error: it has no host\n')

    def test_reboot_of_a_shelved_server_refused(self):
        self.assertRefused('  - shelve: vm1\n'
                           '  - reboot: {server: vm1, hard: true}\n',
                           'reboot.server', 'it is shelved and offloaded')

    def test_a_failing_stop_leaves_the_state(self):
        # error: the stop is expected to fail, so vm1 stays active and a
        # start after it is refused.
        self.assertRefused('  - stop: vm1\n    error: refused\n'
                           '  - start: vm1\n', 'start.server',
                           'it is active')


class TestShelveStates(StepsTestCase):

    def test_unshelve_of_an_active_server_refused(self):
        self.assertRefused('  - unshelve: vm1\n', 'unshelve.server',
                           'cannot unshelve vm1: it is active')

    def test_shelve_offload_of_an_unshelved_server_refused(self):
        self.assertRefused(
            '  - shelve: vm1\n  - unshelve: vm1\n  - shelve_offload: vm1\n',
            'shelve_offload.server', 'it is active',
            config='config: {DEFAULT: {shelved_offload_time: -1}}\n')

    def test_shelve_offload_after_an_immediate_offload_refused(self):
        # Nova's default shelved_offload_time 0 offloads in the shelve.
        self.assertRefused('  - shelve: vm1\n  - shelve_offload: vm1\n',
                           'shelve_offload.server',
                           'it is shelved and offloaded')

    def test_shelve_of_a_shelved_server_refused(self):
        self.assertRefused('  - shelve: vm1\n  - shelve: vm1\n',
                           'shelve.server', 'cannot shelve vm1')

    def test_shelve_of_stopped_paused_suspended_loads(self):
        for before in ('stop', 'pause', 'suspend'):
            self.load('  - %s: vm1\n  - shelve: vm1\n' % before)

    def test_unshelve_with_host_of_a_shelved_server_refused(self):
        self.assertRefused(
            '  - shelve: vm1\n  - unshelve: {server: vm1, host: host2}\n',
            'unshelve.host', 'cannot unshelve vm1 to a named host',
            'only for an offloaded server',
            config='config: {DEFAULT: {shelved_offload_time: -1}}\n')

    def test_unshelve_with_host_expected_to_fail_loads(self):
        # error: says Nova refuses it (409), so the loader lets it through.
        self.load('  - shelve: vm1\n'
                  '  - unshelve: {server: vm1, host: host2}\n'
                  '    error: not offloaded\n',
                  config='config: {DEFAULT: {shelved_offload_time: -1}}\n')

    def test_unshelve_to_an_unknown_host_refused(self):
        self.assertRefused(
            '  - shelve: vm1\n  - unshelve: {server: vm1, host: host9}\n',
            'unshelve.host', 'host9')

    def test_unshelve_with_host_after_offload_loads(self):
        loaded = self.load(
            '  - shelve: vm1\n  - unshelve: {server: vm1, host: host2}\n')
        self.assertEqual('unshelve vm1 to host2', loaded.steps[-1].label)

    def test_offload_before_its_time_not_counted(self):
        # 200 s is not more than 300 s: the periodic leaves it SHELVED.
        self.assertRefused(
            '  - shelve: vm1\n  - advance_clock: 200\n'
            '  - run_periodic: _poll_shelved_instances\n'
            '  - unshelve: {server: vm1, host: host2}\n',
            'unshelve.host', 'it is shelved (still on its host)',
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_time_passed_without_the_periodic_not_counted(self):
        # The periodic's spacing is 3600 s: 400 s alone does not run it.
        self.assertRefused(
            '  - shelve: vm1\n  - advance_clock: 400\n'
            '  - unshelve: {server: vm1, host: host2}\n',
            'unshelve.host', 'it is shelved (still on its host)',
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_periodic_after_the_time_offloads(self):
        self.load(
            '  - shelve: vm1\n  - advance_clock: 400\n'
            '  - run_periodic: _poll_shelved_instances\n'
            '  - unshelve: {server: vm1, host: host2}\n',
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_the_clock_fires_the_periodic_at_its_spacing(self):
        self.load(
            '  - shelve: vm1\n  - advance_clock: %d\n'
            '  - unshelve: {server: vm1, host: host2}\n'
            % shelve_step.POLL_SPACING,
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_the_clock_too_soon_after_the_shelve(self):
        # Shelved at 3500 s: at 3600 s only 100 s have passed; the next
        # run is at 7200 s.
        text = ('  - advance_clock: 3500\n  - shelve: vm1\n'
                '  - advance_clock: %d\n'
                '  - unshelve: {server: vm1, host: host2}\n')
        config = 'config: {DEFAULT: {shelved_offload_time: 300}}\n'
        self.assertRefused(text % 1000, 'unshelve.host', 'it is shelved',
                           config=config)
        self.load(text % 3800, config=config)

    def test_never_offloaded_with_a_negative_time(self):
        self.assertRefused(
            '  - shelve: vm1\n  - advance_clock: 100000\n'
            '  - run_periodic: _poll_shelved_instances\n'
            '  - unshelve: {server: vm1, host: host2}\n',
            'unshelve.host', 'it is shelved',
            config='config: {DEFAULT: {shelved_offload_time: -1}}\n')

    def test_shelve_offload_of_a_periodically_offloaded_server_refused(self):
        self.assertRefused(
            '  - shelve: vm1\n  - advance_clock: 400\n'
            '  - run_periodic: _poll_shelved_instances\n'
            '  - shelve_offload: vm1\n',
            'shelve_offload.server', 'it is shelved and offloaded',
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_a_new_shelve_restarts_the_offload_time(self):
        # Shelved at 0, unshelved, shelved again at 400: the periodic at
        # 500 s is 100 s after the second shelve.
        self.assertRefused(
            '  - shelve: vm1\n  - advance_clock: 400\n  - unshelve: vm1\n'
            '  - shelve: vm1\n  - advance_clock: 100\n'
            '  - run_periodic: _poll_shelved_instances\n'
            '  - unshelve: {server: vm1, host: host2}\n',
            'unshelve.host', 'it is shelved',
            config='config: {DEFAULT: {shelved_offload_time: 300}}\n')

    def test_delete_of_shelved_servers_loads(self):
        self.load('  - boot: {server: vm2, flavor: small}\n'
                  '  - shelve: vm1\n  - shelve: vm2\n'
                  '  - shelve_offload: vm2\n'
                  '  - delete: vm1\n  - delete: vm2\n',
                  config='config: {DEFAULT: {shelved_offload_time: -1}}\n')
