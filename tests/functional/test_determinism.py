"""harness determinism end to end, small: one quick scenario, twice.

Runs in this process (``workers=0``): it finds the scenario's test among
those it builds from the checkout's scenario folder, runs that test
twice, watching it through the observer hooks, and the two runs give one
verdict, one timeline and one race-point record.
And ``--hash-seeds``: spawned workers really run under each seed.
"""

import json
import os
import re
import subprocess
import sys

import fixtures
import testtools

# Nova (and its monkey patching) comes in with the module, not inside the
# test, as with every functional test module.
from harness.cloud import fixture as cloud  # noqa: F401
from harness.core import scenario as scenario_mod
from harness.runners import determinism
from harness.runners.determinism import check
from harness.runners.determinism import compare
from harness import testing

SCENARIO = 'boot__boot_on_a_fake_host_with_periodics_around_it'
PROBE = 'abc'
# The test the probe's runs run (its method name does not start with
# "test", so no loader finds it).
PROBE_TEST = __name__ + '._HashProbe.say_the_hash'
# A check of the probe under two seeds, in a process of its own that
# imports no Nova, as ``harness determinism`` is: a pool made in this
# process would mix eventlet's patched threads (Nova's, patched when this
# module came in) with the real ones of a determinism module a test
# module imported first.
CHECK = """
import dataclasses, json, os, sys
from harness.runners.determinism import check
before = os.environ.get('PYTHONHASHSEED')
report = check.check(runs=2, workers=1, hash_seeds=[7, 3],
                     items=[{'id': 'probe', 'test': sys.argv[1]}])
with open(sys.argv[2], 'w') as target:
    json.dump({'error': report.error, 'interrupted': report.interrupted,
               'runs': [dataclasses.asdict(run) for run in report.runs],
               'flaky': [summary.flaky for summary in report.summaries],
               'environ': [before, os.environ.get('PYTHONHASHSEED')]},
              target)
"""


class _HashProbe(testtools.TestCase):

    def say_the_hash(self):
        # The verdict (a run's one line of text back) says how this
        # worker's interpreter hashes: the probe fails on purpose.
        self.fail('hash(%r) = %d' % (PROBE, hash(PROBE)))


def _hash_under(seed):
    """``hash(PROBE)`` in a fresh interpreter started with ``seed``."""
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    return int(subprocess.check_output(
        [sys.executable, '-c', 'print(hash(%r))' % PROBE], env=env))


class TestDeterminism(testing.TestCase):

    def test_one_scenario_twice_is_steady(self):
        report = check.check(runs=2, workers=0, pattern='%s$' % SCENARIO)
        self.assertFalse(report.interrupted)
        self.assertEqual('', report.error)
        (summary,) = report.summaries
        self.assertRegex(summary.item,
                         r'^test_scenarios\.Boot\.test_\d+_%s$' % SCENARIO)
        # What the test ran, as the hooks said: that scenario (as many
        # times as its test class runs it), the same in both runs.
        self.assertEqual([SCENARIO], summary.scenarios)
        one, two = (run.scenarios for run in report.runs)
        self.assertEqual(one, two)
        self.assertEqual({(SCENARIO, os.path.join(
            'tests', 'functional', 'scenarios', 'boot.yaml'))},
            {tuple(ran) for ran in one})
        self.assertEqual(2, summary.runs)
        self.assertEqual(['pass'], list(summary.verdicts))
        self.assertEqual(1, len(summary.timelines), summary.divergence())
        self.assertEqual(1, len(summary.points), summary.divergence())
        self.assertFalse(summary.flaky)
        timeline, points = (summary.texts[key] for key in (
            list(summary.timelines)[0], list(summary.points)[0]))
        # The run's timeline, from its start, every step with its
        # snapshot's fields.
        (scenario,) = [s for s in scenario_mod.load(
            os.path.join(determinism.ROOT, 'tests', 'functional', 'scenarios',
                         'boot.yaml')) if s.id == SCENARIO]
        self.assertTrue(timeline.startswith(
            '== timeline 1: %s\n-- step 0: start\n' % SCENARIO), timeline)
        first = timeline.split('\n== ')[0]
        steps = re.findall(r'^-- step (\d+): ', first, re.M)
        self.assertEqual([str(n) for n in range(len(scenario.steps) + 1)],
                         steps)
        self.assertIn('snapshot.allocations.vm1.host1.VCPU = 1', timeline)
        passages = [json.loads(line) for line in points.split('\n')
                    if line.startswith('{')]
        self.assertIn(('before', 'build_and_run_instance'),
                      [(p['when'], p['point']) for p in passages])
        self.assertTrue(all(isinstance(p['version'], int)
                            for p in passages))
        (row,) = compare.table(report.summaries)[1:]
        self.assertRegex(row, r'^%s +2 +1 +1 +1 +no +\d+\.\d\d$'
                         % re.escape(summary.item))


class TestHashSeeds(testing.TestCase):

    def test_workers_run_under_each_seed(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'out.json')
        subprocess.run([sys.executable, '-c', CHECK, PROBE_TEST, path],
                       cwd=determinism.ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(path) as source:
            out = json.load(source)
        self.assertEqual(('', False), (out['error'], out['interrupted']))
        # The checking process's own seed was put back.
        self.assertEqual(out['environ'][0], out['environ'][1])
        runs = {run['number']: run for run in out['runs']}
        # Run 1 under seed 7, run 2 under 3 (neither the seed tox pins);
        # each worker said it had its seed (run_once's own record)...
        self.assertEqual({1: 7, 2: 3},
                         {n: run['hash_seed'] for n, run in runs.items()})
        # ...and hashed as an interpreter started with that seed does.
        expected = {seed: _hash_under(seed) for seed in (7, 3)}
        self.assertNotEqual(expected[7], expected[3])
        for run in runs.values():
            self.assertEqual("fail: AssertionError: hash('abc') = %d"
                             % expected[run['hash_seed']], run['verdict'])
        self.assertNotEqual(runs[1]['worker'], runs[2]['worker'])
        # A verdict that follows the seed is a flake.
        self.assertEqual([True], out['flaky'])
