"""``harness export report``: a finding as a bug report (no Nova run)."""

import os

import fixtures

from harness.export import report
from harness import testing

FINDING = '''\
# Finding: a resize whose source periodic runs early leaks the
# migration's allocation.
# Documented behaviour expected: a confirmed resize leaves the server's
# allocation on the destination only.
# Hosts: fake.MediumFakeDriver (10 vCPUs, 8192 MB, 1028 GB).
name: resize then confirm
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - migrate: {server: vm1, host: dst}
  - confirm: vm1
    expect: {allocations: {vm1: {dst: small}}}
'''

# Two hosts of one profile, the second started again with a CPU set of
# its own while the first runs on.
HOSTS_OF_THEIR_OWN = '''\
name: a host started again with its own CPU set
hosts:
  h1: {profile: dev-1s-8c-smt2}
  h2: {profile: dev-1s-8c-smt2}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: h1}
  - stop_compute: h2
  - start_compute: {host: h2, config: {compute: {cpu_dedicated_set: "3-7"}}}
    expect: {allocations: {vm1: {h1: small}}}
'''

FAILED = report.Outcome(
    failure='step 3 (confirm vm1): expectations not met:\n'
    '  allocations of migration(vm1): expected nothing, got src: VCPU=1',
    timeline='#  step\n0  start\n1  boot vm1 (small) on src',
    nova_version='34.0.0', concurrency='threading')


class ReportTest(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'finding.yaml')
        with open(self.path, 'w') as f:
            f.write(FINDING)

    def sections(self, text):
        """Title -> the section's text, in Nova's template's titles."""
        lines = text.splitlines()
        found = {}
        for index, line in enumerate(lines[1:], 1):
            if line and set(line) == {'='} and len(line) == len(
                    lines[index - 1]):
                found[lines[index - 1]] = index + 1
        titles = sorted(found, key=found.get)
        return {title: '\n'.join(lines[found[title]:(
            found[titles[i + 1]] - 2 if i + 1 < len(titles) else None)])
            for i, title in enumerate(titles)}

    def test_the_template(self):
        text = report.render(self.path, FAILED)
        self.assertTrue(text.startswith('Summary: resize then confirm\n'))
        self.assertEqual(['Description', 'Steps to reproduce',
                          'Expected result', 'Actual result',
                          'Environment'], list(self.sections(text)))

    def test_the_header_goes_to_description_and_expected_result(self):
        sections = self.sections(report.render(self.path, FAILED))
        self.assertEqual("A resize whose source periodic runs early leaks "
                         "the migration's allocation.",
                         sections['Description'].strip())
        self.assertEqual("a confirmed resize leaves the server's "
                         'allocation on the destination only.',
                         sections['Expected result'].strip())
        self.assertIn('Hosts: fake.MediumFakeDriver', sections['Environment'])

    def test_steps_are_the_scenario_and_the_exported_test(self):
        steps = self.sections(report.render(self.path, FAILED))[
            'Steps to reproduce']
        self.assertIn('    name: resize then confirm\n', steps)
        self.assertIn('    class TestScenarios(integrated_helpers.'
                      'ProviderUsageBaseTestCase):', steps)
        self.assertIn("        self.servers['vm1'] = self._confirm_resize(",
                      steps)

    def test_a_finding_the_exporter_refuses(self):
        with open(self.path, 'w') as f:
            f.write(FINDING.replace('  - migrate:',
                                    '  - reboot: vm1\n  - migrate:'))
        steps = self.sections(report.render(self.path, FAILED))[
            'Steps to reproduce']
        self.assertIn("(No Nova functional test: %s: scenario 'resize then "
                      "confirm': step 2 (reboot): no faithful Nova "
                      "translation: step kind 'reboot')" % self.path, steps)

    def test_a_finding_of_hosts_with_options_of_their_own(self):
        # Refused without the harness (Nova's test config is one per
        # process): the report gives the test that imports it for that.
        with open(self.path, 'w') as f:
            f.write(HOSTS_OF_THEIR_OWN)
        steps = self.sections(report.render(self.path, FAILED))[
            'Steps to reproduce']
        self.assertNotIn('No Nova functional test', steps)
        self.assertIn('(harness export nova-test --with-harness)', steps)
        self.assertIn('harness.PerHostConfig gives each', steps)
        self.assertIn('self.host_config = self.useFixture('
                      'harness.PerHostConfig())', steps)

    def test_actual_result_and_environment_from_the_run(self):
        sections = self.sections(report.render(self.path, FAILED))
        self.assertIn('    step 3 (confirm vm1): expectations not met:\n'
                      '      allocations of migration(vm1): expected '
                      'nothing, got src: VCPU=1', sections['Actual result'])
        self.assertIn('    1  boot vm1 (small) on src',
                      sections['Actual result'])
        self.assertIn('1. Nova 34.0.0,', sections['Environment'])
        self.assertIn('Hypervisor: the fake driver (fake.MediumFakeDriver)',
                      sections['Environment'])
        self.assertIn('Concurrency mode of nova-compute: threading.',
                      sections['Environment'])

    def test_a_finding_that_does_not_reproduce(self):
        passed = report.Outcome(None, '0  start', '34.0.0', 'eventlet')
        self.assertIn('The scenario passed on this Nova: the finding does '
                      'not reproduce here.', self.sections(report.render(
                          self.path, passed))['Actual result'])
