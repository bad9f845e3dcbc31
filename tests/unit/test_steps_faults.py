"""Faults and requests at race points in scenario files: the loader's side.

``fault`` (``harness.core.steps.fault``) arms a driver method or a claim
on a running compute; ``inject: {..., do: {request: server}}`` sends an
API request at a race point. Both are checked before any service starts;
the config options the loader reads are checked as whole numbers. No Nova
service runs here.
"""

from harness.core import errors
from harness.core import names
from harness.core import scenario
from harness.core.steps import base
from harness import testing

from tests.unit import refusals

PATH = 'faults.yaml'
HEAD = """\
name: faults
hosts:
  h1: {driver: fake}
  h2: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
"""


def _load(body, head=HEAD):
    return scenario.load_file(PATH, head + body)[1][0]


class TestFaultStep(testing.TestCase):

    def refused(self, body, field, *fragments, head=HEAD):
        return refusals.refused(self, PATH, field, fragments, _load, body,
                                head)

    def test_a_fault_loads_with_its_count(self):
        loaded = _load("  - fault: {host: h2, method: spawn}\n"
                       "  - fault: {host: h1, method: claim, times: 2}\n"
                       "  - boot: {server: vm1, flavor: small}\n")
        self.assertEqual(
            [{'host': 'h2', 'method': 'spawn', 'times': 1},
             {'host': 'h1', 'method': 'claim', 'times': 2}],
            [step.args for step in loaded.steps[:2]])
        self.assertEqual(['fault spawn on h2', 'fault claim on h1 (2 times)'],
                         [step.label for step in loaded.steps[:2]])

    def test_every_live_migration_step_can_fail(self):
        for method in ('check_can_live_migrate_destination',
                       'pre_live_migration', 'live_migration',
                       'post_live_migration_at_destination',
                       'rollback_live_migration_at_destination'):
            self.assertIn(method, names.DRIVER_FAULTS)

    def test_an_unknown_method_is_refused_with_the_known_ones(self):
        self.refused("  - fault: {host: h1, method: explode}\n",
                     'fault.method', "cannot fail 'explode'", 'spawn',
                     'claim')

    def test_an_unknown_host_is_refused(self):
        self.refused("  - fault: {host: h9, method: spawn}\n",
                     'fault.host', "unknown host 'h9'")

    def test_a_stopped_compute_cannot_be_armed(self):
        self.refused("  - stop_compute: h1\n"
                     "  - fault: {host: h1, method: spawn}\n",
                     'fault.host', "compute 'h1' is stopped")

    def test_times_is_a_positive_whole_number(self):
        self.refused("  - fault: {host: h1, method: spawn, times: 0}\n",
                     'fault.times', 'must be at least 1')
        self.refused("  - fault: {host: h1, method: spawn, times: x}\n",
                     'fault.times', 'expected a whole number')

    def test_a_network_call_and_a_placement_request_load(self):
        loaded = _load("  - fault: {network: create_port_binding}\n"
                       "  - fault: {placement: 'PUT /allocations/*', "
                       "status: 500, times: 2}\n"
                       "  - boot: {server: vm1, flavor: small, port: true}\n")
        self.assertEqual(
            [{'network': 'create_port_binding', 'times': 1},
             {'placement': 'PUT /allocations/*', 'status': 500,
              'times': 2}],
            [step.args for step in loaded.steps[:2]])
        self.assertEqual(
            ['fault: network create_port_binding',
             'fault: Placement 500 on PUT /allocations/* (2 times)'],
            [step.label for step in loaded.steps[:2]])

    def test_a_placement_that_does_not_answer_loads(self):
        # timeout: no answer; unreachable: no connection.
        for status in ('timeout', 'unreachable'):
            loaded = _load("  - fault: {placement: 'DELETE /allocations/*', "
                           "status: %s, times: 2}\n"
                           "  - boot: {server: vm1, flavor: small}\n"
                           % status)
            self.assertEqual({'placement': 'DELETE /allocations/*',
                              'status': status, 'times': 2},
                             loaded.steps[0].args)
            self.assertEqual('fault: Placement %s on DELETE /allocations/* '
                             '(2 times)' % status, loaded.steps[0].label)
        self.refused("  - fault: {placement: 'PUT /allocations/*', "
                     "status: slow}\n",
                     'fault.status', 'timeout', 'unreachable', "'slow'")

    def test_bad_network_and_placement_faults_are_refused(self):
        self.refused("  - fault: {network: reboot_router}\n",
                     'fault.network', "cannot fail network call",
                     'update_port')
        self.refused("  - fault: {placement: 'FETCH /allocations'}\n",
                     'fault.placement', 'expected "METHOD /path"')
        self.refused("  - fault: {placement: 'PUT /allocations/*', "
                     "status: 404}\n",
                     'fault.status', 'answer 409 or 500')
        self.refused("  - boot: {server: vm1, flavor: small, port: 1}\n",
                     'boot.port', 'expected true or false')

    def test_a_fault_cannot_be_expected_to_fail(self):
        self.refused("  - fault: {host: h1, method: spawn}\n"
                     "    error: boom\n",
                     'error', 'only server operations')


class TestFaultArmedAtARacePoint(refusals.StepLoaderCase):
    """``fault: {..., at: {before | after: point, host?}}``."""

    PATH = PATH
    HEAD = HEAD

    def test_each_kind_of_fault_loads_armed_at_a_point(self):
        loaded = self.load(
            "  - fault: {placement: 'PUT /allocations/*', status: 500, "
            "at: {before: conductor.build_instances}}\n"
            "  - fault: {host: h2, method: spawn, at: {after: "
            "build_and_run_instance, host: h1}}\n"
            "  - fault: {network: update_port, times: 2, at: {before: "
            "build_and_run_instance}}\n"
            "  - boot: {server: vm1, flavor: small}\n")
        before = {'when': 'before', 'point': 'conductor.build_instances',
                  'host': None}
        self.assertEqual(
            [{'placement': 'PUT /allocations/*', 'status': 500, 'times': 1,
              'at': before},
             {'host': 'h2', 'method': 'spawn', 'times': 1,
              'at': {'when': 'after', 'point': 'build_and_run_instance',
                     'host': 'h1'}},
             {'network': 'update_port', 'times': 2,
              'at': {'when': 'before', 'point': 'build_and_run_instance',
                     'host': None}}],
            [step.args for step in loaded.steps[:3]])
        self.assertEqual(
            ['fault: Placement 500 on PUT /allocations/* before '
             'conductor.build_instances',
             'fault spawn on h2 after build_and_run_instance on h1',
             'fault: network update_port (2 times) before '
             'build_and_run_instance'],
            [step.label for step in loaded.steps[:3]])

    def test_a_later_step_must_pass_the_point(self):
        self.refused("  - fault: {host: h1, method: claim, at: {before: "
                     "finish_resize}}\n"
                     "  - boot: {server: vm1, flavor: small, host: h1}\n"
                     "  - delete: vm1\n",
                     'fault.at', 'no later step passes race point',
                     "'finish_resize'")

    def test_bad_points_are_refused_naming_the_field(self):
        boot = "  - boot: {server: vm1, flavor: small}\n"
        self.refused("  - fault: {host: h1, method: claim, at: x}\n" + boot,
                     'fault.at', 'expected a mapping')
        self.refused("  - fault: {host: h1, method: claim, at: {}}\n" + boot,
                     'fault.at', 'say "before: <point>" or "after: <point>"')
        self.refused("  - fault: {host: h1, method: claim, at: {before: "
                     "'no such'}}\n" + boot,
                     'fault.at.before', 'not a race point name')
        self.refused("  - fault: {host: h1, method: claim, at: {before: "
                     "instance.host, host: h9}}\n" + boot,
                     'fault.at.host', "unknown host 'h9'")
        self.refused("  - fault: {host: h1, method: claim, at: {before: "
                     "instance.host, server: vm1}}\n" + boot,
                     'fault.at.server', 'unknown field')
        # The fault itself is checked as one armed now.
        self.refused("  - fault: {host: h1, method: explode, at: {before: "
                     "instance.host}}\n" + boot,
                     'fault.method', "cannot fail 'explode'")


class _Injection(object):
    """What ``RacePoints.at`` gives, without a cloud: fired by hand."""

    subject = 'before conductor.build_instances'
    never = 'the run never passed before conductor.build_instances'

    def __init__(self):
        self.fired = []
        self.action = None

    def call(self, action, description):
        self.action = action
        return self

    def pass_point(self):
        self.action('passage')
        self.fired.append('passage')


class _Armed(object):
    never = 'Nova never sent PUT /allocations/* to Placement'

    def __init__(self):
        self.fired = []


class TestArmedAt(testing.TestCase):
    """``base.ArmedAt``: fired once its point and what it armed fired.

    Else it says which of the two did not happen.
    """

    def test_the_point_never_passed(self):
        injection = _Injection()
        armed = base.ArmedAt(injection, _Armed, 'a fault')
        self.assertEqual([], armed.fired)
        self.assertEqual(injection.never, armed.never)
        self.assertEqual(injection.subject, armed.subject)

    def test_armed_at_the_point_but_never_met(self):
        injection = _Injection()
        armed = base.ArmedAt(injection, _Armed, 'a fault')
        injection.pass_point()
        self.assertEqual([], armed.fired)
        self.assertEqual(_Armed.never, armed.never)

    def test_armed_at_the_point_and_met(self):
        injection = _Injection()
        armed = base.ArmedAt(injection, _Armed, 'a fault')
        injection.pass_point()
        armed.armed.fired.append('PUT /allocations/x')
        self.assertEqual(['PUT /allocations/x'], armed.fired)


class TestRequestAtARacePoint(testing.TestCase):

    def refused(self, body, field, *fragments):
        exc = self.assertRaises(errors.ScenarioError, _load, body)
        message = str(exc)
        self.assertIn('field "%s"' % field, message)
        for fragment in fragments:
            self.assertIn(fragment, message)

    def test_a_delete_at_a_point_loads(self):
        loaded = _load("  - inject: {after: instance.host, "
                       "do: {delete: vm1}}\n"
                       "  - boot: {server: vm1, flavor: small, host: h1}\n"
                       "    error: is gone\n")
        step = loaded.steps[0]
        self.assertEqual(('delete', 'vm1'), step.args['do'])
        self.assertEqual('inject after instance.host: delete vm1',
                         step.label)

    def test_run_and_do_are_exclusive(self):
        self.refused("  - inject: {before: pre_live_migration, run: "
                     "update_available_resource, on: source, do: "
                     "{delete: vm1}}\n"
                     "  - boot: {server: vm1, flavor: small}\n",
                     'inject.do', 'not both')

    def test_an_unknown_request_is_refused(self):
        self.refused("  - inject: {before: pre_live_migration, do: "
                     "{reboot: vm1}}\n"
                     "  - boot: {server: vm1, flavor: small}\n",
                     'inject.do', "cannot send 'reboot'",
                     'abort_live_migration')

    def test_the_server_must_be_booted_in_the_scenario(self):
        self.refused("  - boot: {server: vm1, flavor: small}\n"
                     "  - inject: {before: pre_live_migration, do: "
                     "{abort_live_migration: vm9}}\n"
                     "  - live_migrate: vm1\n",
                     'inject.do.abort_live_migration',
                     "no server 'vm9' is booted")

    def test_without_do_run_and_on_are_required(self):
        self.refused("  - inject: {before: finish_resize}\n"
                     "  - boot: {server: vm1, flavor: small}\n",
                     'inject.run', 'missing')


class TestLoaderOptions(testing.TestCase):

    def test_options_the_loader_reads_are_whole_numbers(self):
        for option in ('service_down_time', 'shelved_offload_time'):
            head = HEAD.replace('steps:\n', 'config: {DEFAULT: {%s: [1]}}\n'
                                'steps:\n' % option)
            exc = self.assertRaises(errors.ScenarioError, _load,
                                    '  - boot: {server: vm1, flavor: '
                                    'small}\n', head)
            self.assertIn('field "config.DEFAULT.%s"' % option, str(exc))
            self.assertIn('expected a whole number', str(exc))


class TestProvidersExpectation(testing.TestCase):
    """``expect: {providers: [...]}``: which hosts have a provider."""

    def test_an_orphaned_or_missing_provider_is_a_problem(self):
        from harness.core import expect
        from tests.unit import test_invariants
        loaded = _load("  - boot: {server: vm1, flavor: small, host: h1}\n"
                       "    expect: {providers: [h1]}\n")
        want = loaded.steps[0].expect
        self.assertEqual({'providers': ['h1']}, want)
        only_h1 = test_invariants.build({}, hosts=('h1',))
        both = test_invariants.build({}, hosts=('h1', 'h2'))
        self.assertEqual([], expect.check(want, only_h1, loaded))
        problems = expect.check(want, both, loaded)
        self.assertEqual([('providers', ['h1'], ['h1', 'h2'])],
                         [(p.check, p.expected, p.actual) for p in problems])
        self.assertTrue(problems[0].accounting)

    def test_an_unknown_host_is_refused(self):
        exc = self.assertRaises(
            errors.ScenarioError, _load,
            "  - boot: {server: vm1, flavor: small}\n"
            "    expect: {providers: [h9]}\n")
        self.assertIn('field "expect.providers"', str(exc))
