"""``harness`` as a program: the terminal shows only the harness's lines.

Run as a subprocess, as a person runs it: third-party warnings (eventlet's
deprecation, Nova's concurrency notice) and Nova's logs go to the log
file, whose path is printed when a step fails; ``--verbose`` shows them
on the terminal too. Hosts run fake.MediumFakeDriver; a 1-vCPU, 512 MB,
1 GB flavor allocates exactly that on its host.
"""

import os
import re
import subprocess
import sys

import fixtures

from harness.core import concurrency
from harness import testing
from tests.functional.test_cli import SCENARIO

# What oslo.service logs as Nova picks its backend: the mode the
# subprocess runs Nova in (this process's environment's choice).
BACKEND_NOTE = 'Loading backend: %s' % concurrency.chosen()


# Every line ``harness run`` may print of its own: the scenario, its
# steps and problems, the timeline table, the verdict, the report and
# the log file.
OURS = re.compile(r'''^(
    scenario:\ .*
  | \ \ step\ \d+:\ .*
  | \ \ .*                           # a problem under its step
  | Nova\ in\ (threading|eventlet)\ mode   # the timeline's first line
  | \#\s+step\s+allocations.*        # the timeline's header
  | \d+\s+\S.*                       # a timeline row
  | passed:\ .*
  | FAILED\ .*
  | timeline\ so\ far:
  | report:\ .*
  | log\ \(Nova's\ logs,\ warnings\):\ .*
  | step\ \d+\ \(.*                  # the failure's first line
  | progress:\ .*
  | allocations\ of\ .*
  | \d+\ passed,\ \d+\ failed.*          # the run's summary
  |
)$''', re.VERBOSE)

MODE_LINE = re.compile(r'^Nova in (threading|eventlet) mode$')
NOISE = ('Eventlet', 'eventlet', 'DeprecationWarning', 'INFO', 'WARNING',
         'oslo')


# A boot whose spawn fails on h1 (a hypervisor fault); on h2 nothing
# goes wrong. Nova's compute on h1 logs the failure at ERROR
# (ComputeManager._build_and_run_instance: "Instance failed to spawn").
SPAWN_FAILS = """
name: spawn fails
hosts: {h1: {driver: fake}, h2: {driver: fake}}
flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
steps:
  - fault: {host: h1, method: spawn}
  - boot: {server: vm1, flavor: small, host: h1}
"""


class TestQuietTerminal(testing.TestCase):

    def harness(self, *argv):
        tmp = self.useFixture(fixtures.TempDir()).path
        env = dict(os.environ, XDG_CACHE_HOME=tmp)
        env.pop('HARNESS_REPORT_DIR', None)
        result = subprocess.run(
            [sys.executable, '-m', 'harness.runners.cli'] + list(argv),
            capture_output=True, text=True, env=env, timeout=600)
        return result, tmp

    def write(self, allocation):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'boot.yaml')
        with open(path, 'w') as target:
            target.write(SCENARIO % allocation)
        return path

    def test_a_failing_run_prints_only_our_lines_and_the_log_path(self):
        path = self.write('{VCPU: 2, MEMORY_MB: 512, DISK_GB: 1}')
        result, tmp = self.harness('run', '--no-invariants', path)
        self.assertEqual(1, result.returncode, result.stdout)
        self.assertEqual('', result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual([], [line for line in lines
                              if not OURS.match(line)], result.stdout)
        # Our own line saying which mode Nova ran in names it.
        theirs = '\n'.join(line for line in lines
                           if not MODE_LINE.match(line))
        for word in NOISE:
            self.assertNotIn(word, theirs)
        self.assertIn('allocations of vm1 on host1: VCPU expected 2, got 1',
                      result.stdout)
        # The log is where the noise went, in the cache directory.
        [log] = [line.split(': ', 1)[1] for line in lines
                 if line.startswith('log (')]
        self.assertEqual(os.path.join(tmp, 'harness', 'logs'),
                         os.path.dirname(log))
        with open(log, encoding='utf-8') as source:
            text = source.read()
        # oslo.service's note on every release of the matrix and in each
        # mode (Nova's own warnings differ between releases).
        self.assertIn(BACKEND_NOTE, text)

    def test_verbose_shows_the_noise_and_a_pass_names_no_log(self):
        path = self.write('small')
        log = os.path.join(self.useFixture(fixtures.TempDir()).path,
                           'chosen.log')
        result, _ = self.harness('run', '--no-invariants', '--verbose',
                                 '--log', log, path)
        self.assertEqual(0, result.returncode, result.stdout)
        self.assertIn(BACKEND_NOTE, result.stderr)
        self.assertIn('passed: boot and delete', result.stdout)
        self.assertNotIn('log (', result.stdout)
        with open(log, encoding='utf-8') as source:
            self.assertIn(BACKEND_NOTE, source.read())


class TestNovaLogsInTheLog(TestQuietTerminal):
    """The log file holds Nova's records of each scenario, by service."""

    def sections(self, *argv):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'spawn.yaml')
        with open(path, 'w') as target:
            target.write(SPAWN_FAILS)
        log = os.path.join(self.useFixture(fixtures.TempDir()).path,
                           'chosen.log')
        result, _ = self.harness('run', '--no-invariants', '--log', log,
                                 *(argv + (path,)))
        self.assertEqual(1, result.returncode, result.stdout)
        self.assertIn('log (Nova\'s logs, warnings): %s' % log,
                      result.stdout)
        with open(log, encoding='utf-8') as source:
            text = source.read()
        header = "Nova's logs of scenario 'spawn fails' (%s), " % path
        self.assertEqual(1, text.count(header), text)
        section = text[text.index(header):]
        services = {}
        service = None
        for line in section.splitlines()[2:]:
            if line.startswith('--- '):
                service = line[4:].rsplit(' (', 1)[0]
                services[service] = []
            elif service and line[:1].isdigit():
                services[service].append(line)
        return section, services

    def test_why_a_boot_failed_under_the_compute_that_failed_it(self):
        section, services = self.sections()
        self.assertIn('WARNING and up', section.splitlines()[0])
        failed = [line for line in services['nova-compute on h1']
                  if ' ERROR [nova.compute.manager] Instance failed to '
                  'spawn' in line]
        self.assertEqual(1, len(failed), section)
        self.assertIn('injected hypervisor fault: spawn failed on h1',
                      section)
        # Nothing of that is h2's; no INFO record by default.
        self.assertFalse(any('spawn' in line
                             for line in services.get('nova-compute on h2',
                                                      [])))
        self.assertFalse(any(' INFO [' in line
                             for lines in services.values()
                             for line in lines), section)

    def test_verbose_takes_every_record(self):
        section, services = self.sections('--verbose')
        self.assertIn('every record', section.splitlines()[0])
        self.assertTrue(any(' INFO [' in line for lines in services.values()
                            for line in lines), section)
        self.assertTrue(any('Instance failed to spawn' in line
                            for line in services['nova-compute on h1']))
