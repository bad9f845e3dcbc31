"""Side by side: Nova's own functional tests and the harness's equivalents.

Runs, alternating, in one process, N times each:

- Nova's ``ServerMovingTests.test_resize_confirm`` and the scenario
  ``benchmarks/scenarios/resize_confirm.yaml`` (same hosts, flavors,
  operations and periodic runs);
- Nova's ``NUMAServersTest.test_resize_confirm_bug_1944759`` and
  ``benchmarks/scenarios/resize_confirm_bug_1944759.yaml``.

The scenarios run with invariants 1-4, 6 and 7 on (5 runs periodics of
its own; the scenarios already run the periodics Nova's tests run). It
prints min and median per test and the ratio harness/Nova of the medians;
the last line is ``ratio: X``, the worse of the two ratios.

It also prints each side's CPU time (this process's, all its threads)
and what is left of the wall time, the time spent waiting (Nova's tests
poll with fixed sleeps). Wall time is what the ratio is about; CPU time
is steadier on a shared machine and says how much of the gap is work.
Last, the harness's steps alone (from its start snapshot to its last
step, without standing up or tearing down the cloud) over Nova's wall
time: the ratio a cloud shared between runs could reach at best.

    tox -e bench                      # or: python benchmarks/compare_nova.py
    python benchmarks/compare_nova.py --runs 5

Nova's own tests look for api-paste.ini under site-packages (a source
tree's layout) while the wheel installs it under <prefix>/etc/nova; with
``--link-api-paste`` the script links it there so they can run.
"""

import argparse
import os
import statistics
import sys
import time
import unittest

import fixtures

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

PAIRS = (
    ('resize_confirm',
     'nova.tests.functional.test_servers.ServerMovingTests.'
     'test_resize_confirm',
     os.path.join(HERE, 'scenarios', 'resize_confirm.yaml')),
    ('resize_confirm_bug_1944759',
     'nova.tests.functional.libvirt.test_numa_servers.NUMAServersTest.'
     'test_resize_confirm_bug_1944759',
     os.path.join(HERE, 'scenarios', 'resize_confirm_bug_1944759.yaml')),
)


def link_api_paste():
    from harness import install
    import nova
    site = os.path.dirname(os.path.dirname(os.path.abspath(nova.__file__)))
    target = os.path.join(site, 'etc', 'nova', 'api-paste.ini')
    if not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(install.nova_api_paste_ini(), target)
        print('linked %s -> %s' % (target, install.nova_api_paste_ini()))


class Timed(object):
    """Wall and CPU seconds of the ``with`` block."""

    def __enter__(self):
        self._wall = time.monotonic()
        self._cpu = time.process_time()
        return self

    def __exit__(self, *exc_info):
        self.wall = time.monotonic() - self._wall
        self.cpu = time.process_time() - self._cpu


def run_nova(test_name):
    suite = unittest.defaultTestLoader.loadTestsFromName(test_name)
    result = unittest.TestResult()
    with Timed() as timed:
        suite.run(result)
    if not result.wasSuccessful():
        problems = result.errors + result.failures
        raise SystemExit('Nova test %s failed:\n%s'
                         % (test_name, problems[0][1]))
    return timed


def run_harness(path):
    from harness import cloud as cloud_mod
    from harness import invariants
    from harness import runner
    from harness import scenario as scenario_mod
    scenario = scenario_mod.load(path)[0]
    checker = invariants.Checker(periodic_idempotence=False)
    # The steps run from the first snapshot (the runner's 'start', once
    # computes and flavors are up) to the last step's report, before the
    # cloud's tear-down: what a run would take if nothing were stood up
    # for it, the most that sharing a cloud between runs could save.
    marks = {}
    snapshot = cloud_mod.Cloud.snapshot

    def first_snapshot(cloud):
        taken = snapshot(cloud)
        marks.setdefault('start', time.monotonic())
        return taken

    def step_done(line):
        marks['end'] = time.monotonic()

    with fixtures.MonkeyPatch('harness.cloud.Cloud.snapshot', first_snapshot):
        with Timed() as timed:
            runner.run(scenario, checks=[checker], progress=step_done)
    timed.steps = marks['end'] - marks['start']
    return timed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--link-api-paste', action='store_true')
    args = parser.parse_args(argv)
    # Import (and patch eventlet) the way both suites do, before timing.
    from harness import cloud  # noqa: F401
    import nova.tests.functional  # noqa: F401
    if args.link_api_paste:
        link_api_paste()
    times = {name: {'nova': [], 'harness': []} for name, _, _ in PAIRS}
    for run in range(args.runs):
        for name, nova_test, scenario_path in PAIRS:
            nova_run = run_nova(nova_test)
            harness_run = run_harness(scenario_path)
            times[name]['nova'].append(nova_run)
            times[name]['harness'].append(harness_run)
            print('run %d %s: nova %.2f s (cpu %.2f), harness %.2f s '
                  '(cpu %.2f)' % (run + 1, name, nova_run.wall, nova_run.cpu,
                                  harness_run.wall, harness_run.cpu),
                  flush=True)
    ratios = []
    print()
    print('wall time, seconds per test')
    print('%-28s %9s %9s %9s %9s %7s' % ('test', 'nova min', 'nova med',
                                         'harn min', 'harn med', 'ratio'))
    for name, _, _ in PAIRS:
        nova_t = [t.wall for t in times[name]['nova']]
        harness_t = [t.wall for t in times[name]['harness']]
        ratio = statistics.median(harness_t) / statistics.median(nova_t)
        ratios.append(ratio)
        print('%-28s %9.2f %9.2f %9.2f %9.2f %7.2f' % (
            name, min(nova_t), statistics.median(nova_t), min(harness_t),
            statistics.median(harness_t), ratio))
    print()
    print('medians in seconds: cpu, and wall minus cpu (waiting)')
    print('%-28s %9s %9s %9s %9s %7s' % ('test', 'nova cpu', 'nova wait',
                                         'harn cpu', 'harn wait',
                                         'cpu rat'))
    for name, _, _ in PAIRS:
        sides = [times[name][side] for side in ('nova', 'harness')]
        cpu = [statistics.median(t.cpu for t in side) for side in sides]
        wait = [statistics.median(t.wall - t.cpu for t in side)
                for side in sides]
        print('%-28s %9.2f %9.2f %9.2f %9.2f %7.2f' % (
            name, cpu[0], wait[0], cpu[1], wait[1], cpu[1] / cpu[0]))
    print()
    print('harness steps only (no set-up or tear-down: the bound for a '
          'cloud shared between runs)')
    print('%-28s %9s %9s %9s %7s' % ('test', 'harn med', 'steps min',
                                     'steps med', 'ratio'))
    for name, _, _ in PAIRS:
        harness_t = times[name]['harness']
        steps = [t.steps for t in harness_t]
        print('%-28s %9.2f %9.2f %9.2f %7.2f' % (
            name, statistics.median(t.wall for t in harness_t), min(steps),
            statistics.median(steps), statistics.median(steps)
            / statistics.median(t.wall for t in times[name]['nova'])))
    print('ratio: %.2f' % max(ratios))


if __name__ == '__main__':
    main()
