"""``harness run`` on real Nova: exit 0 for a pass, 1 for a failure.

Hosts run fake.MediumFakeDriver; a 1-vCPU, 512 MB, 1 GB flavor allocates
exactly that on the host it boots on.
"""

import io
import os

import fixtures

from harness.runners import cli
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the first test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing

SCENARIO = """
name: boot and delete
hosts: {host1: {driver: fake}}
flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
steps:
  - boot: {server: vm1, flavor: small, host: host1}
    expect: {allocations: {vm1: {host1: %s}}}
  - delete: vm1
    expect: {allocations: {}}
"""


class TestRun(testing.TestCase):

    def run_file(self, allocation):
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'boot.yaml')
        with open(path, 'w') as f:
            f.write(SCENARIO % allocation)
        out = io.StringIO()
        return cli.main(['run', '--no-invariants', path], out=out), \
            out.getvalue()

    def test_pass_prints_steps_and_timeline(self):
        code, out = self.run_file('small')
        self.assertEqual(cli.EXIT_PASS, code, out)
        self.assertIn('step 1: boot vm1 (small) on host1 ... ok', out)
        self.assertIn('step 2: delete vm1 ... ok', out)
        self.assertIn('vm1@host1 DISK=1,MEM=512,VCPU=1', out)
        self.assertIn('passed: boot and delete', out)

    def test_failed_expectation_exits_1_with_the_difference(self):
        code, out = self.run_file('{VCPU: 2, MEMORY_MB: 512, DISK_GB: 1}')
        self.assertEqual(cli.EXIT_FAIL, code, out)
        self.assertIn('step 1 (boot vm1 (small) on host1)', out)
        self.assertIn('allocations of vm1 on host1: VCPU expected 2, got 1',
                      out)
        self.assertIn('timeline so far:', out)

    def test_scenarios_of_one_shape_share_a_cloud_and_read_the_same(self):
        # Same hosts and flavors: by default the second runs on the
        # first's cloud, put back to its start; its output is what a cloud
        # of its own gives, vm2 allocating exactly its flavor on host1.
        second = SCENARIO.replace('vm1', 'vm2').replace(
            'boot and delete', 'boot and delete again')
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'two.yaml')
        with open(path, 'w') as f:
            f.write('- ' + (SCENARIO % 'small').strip().replace(
                '\n', '\n  ') + '\n- ' + (second % 'small').strip().replace(
                '\n', '\n  ') + '\n')
        outputs = []
        for extra in ([], ['--cloud-per-scenario']):
            out = io.StringIO()
            code = cli.main(['run', '--no-invariants'] + extra + [path],
                            out=out)
            self.assertEqual(cli.EXIT_PASS, code, out.getvalue())
            outputs.append(out.getvalue())
        self.assertIn('passed: boot and delete again', outputs[0])
        self.assertIn('vm2@host1 DISK=1,MEM=512,VCPU=1', outputs[0])
        self.assertEqual(outputs[1], outputs[0])


def _file(test, name, scenarios):
    """A scenario file holding ``scenarios`` (documents as text)."""
    path = os.path.join(test.useFixture(fixtures.TempDir()).path, name)
    with open(path, 'w') as f:
        f.write(''.join('- ' + text.strip().replace('\n', '\n  ') + '\n'
                        for text in scenarios))
    return path


# A boot whose expectation is wrong (1 VCPU allocated, 2 expected), then
# one that holds, on a cloud of the same shape.
FAILING = SCENARIO.replace('boot and delete', 'first fails') % (
    '{VCPU: 2, MEMORY_MB: 512, DISK_GB: 1}')
PASSING = SCENARIO.replace('boot and delete', 'second passes') % 'small'


class TestEveryScenarioRuns(testing.TestCase):

    def run_cli(self, *argv):
        out = io.StringIO()
        return cli.main(['run', '--no-invariants'] + list(argv),
                        out=out), out.getvalue()

    def test_a_failure_does_not_stop_the_file(self):
        path = _file(self, 'two.yaml', [FAILING, PASSING])
        code, out = self.run_cli(path)
        self.assertEqual(cli.EXIT_FAIL, code, out)
        self.assertIn('FAILED step 1 (boot vm1 (small) on host1)', out)
        self.assertIn('passed: second passes', out)
        self.assertEqual('1 passed, 1 failed: first fails',
                         out.splitlines()[-1])

    def test_fail_fast_stops_and_says_what_did_not_run(self):
        path = _file(self, 'three.yaml', [FAILING, PASSING, PASSING.replace(
            'second passes', 'third passes')])
        code, out = self.run_cli('--fail-fast', path)
        self.assertEqual(cli.EXIT_FAIL, code, out)
        self.assertNotIn('second passes', out)
        self.assertEqual('0 passed, 1 failed: first fails; stopped at the '
                         'first failure (--fail-fast): 2 scenarios not run',
                         out.splitlines()[-1])

    def test_all_passing_exits_0_with_the_count(self):
        path = _file(self, 'two.yaml', [PASSING, PASSING.replace(
            'second passes', 'third passes')])
        code, out = self.run_cli(path)
        self.assertEqual(cli.EXIT_PASS, code, out)
        self.assertEqual('2 passed, 0 failed', out.splitlines()[-1])


class TestServiceThatDoesNotStart(testing.TestCase):
    """What Nova raises as a service starts: one line, the run goes on.

    Nova's API and computes parse ``[pci] device_spec`` as they start
    (``nova.pci.whitelist.Whitelist``); a vendor ID that is no hex number
    is refused there (``PciConfigInvalidSpec``), and the harness does not
    check it before: the refusal reaches the runner from inside the
    cloud's start.
    """

    def test_one_line_naming_the_service_then_the_next_scenario(self):
        bad = PASSING.replace('second passes', 'bad device spec').replace(
            'hosts:', 'config: {pci: {device_spec: [\'{"vendor_id": '
            '"zzzzzz", "product_id": "0b60"}\']}}\nhosts:')
        path = _file(self, 'spec.yaml', [bad, PASSING])
        out = io.StringIO()
        code = cli.main(['run', '--no-invariants', path], out=out)
        out = out.getvalue()
        self.assertEqual(cli.EXIT_FAIL, code, out)
        lines = out.splitlines()
        [failed] = [line for line in lines if line.startswith('FAILED')]
        self.assertEqual(
            'FAILED bad device spec: nova-api did not start: '
            'PciConfigInvalidSpec: Invalid [pci]device_spec config: '
            'property vendor_id (\'zzzzzz\') does not parse as a hex '
            'number.', failed)
        self.assertNotIn('Traceback', out)
        # The failed start left nothing behind that stops the next cloud.
        self.assertIn('passed: second passes', out)
        self.assertEqual('1 passed, 1 failed: bad device spec', lines[-1])


class TestInjectionsMustFire(testing.TestCase):

    def test_an_injection_nothing_passed_fails_the_scenario(self):
        from harness.core import errors
        from harness.core import scenario as scenario_mod
        # A resize can pass migration.status=error (when it fails); this
        # one succeeds, so the injection never fires.
        scenario = scenario_mod.parse(_resize_with_injection_before(
            'migration.status=error'), 'inline')
        exc = self.assertRaises(errors.ScenarioFailed, runner.run, scenario,
                                test_id=self.id())
        self.assertIn('inject at step 2', str(exc))
        self.assertIn('never fired: the run never passed before '
                      'migration.status=error', str(exc))
        self.assertEqual(['injection_unfired'],
                         [p.check for p in exc.problems])

    def test_an_injection_no_later_step_can_pass_is_refused_up_front(self):
        from harness.core import errors
        from harness.core import scenario as scenario_mod
        # A resize never passes finish_revert_resize (a revert does).
        document = _resize_with_injection_before('finish_revert_resize')
        exc = self.assertRaises(errors.ScenarioError, scenario_mod.parse,
                                document, 'inline')
        self.assertIn('inline, step 2, field "before": no later step passes '
                      "race point 'finish_revert_resize' (later steps: "
                      'resize;', str(exc))
        # With a revert after the resize, the same injection is taken.
        document['steps'].append({'revert': 'vm1'})
        scenario_mod.parse(document, 'inline')


def _resize_with_injection_before(point):
    """A resize across fake hosts, a source periodic injected at ``point``."""
    from harness.core import scenario as scenario_mod
    return scenario_mod.safe_load("""
name: injection before %s
hosts: {src: {driver: fake}, dst: {driver: fake}}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - inject: {before: %s, run: update_available_resource, on: source}
  - resize: {server: vm1, flavor: large}
""" % (point, point))
