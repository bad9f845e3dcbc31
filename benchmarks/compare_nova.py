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
the last line is ``ratio: X``, the worse of the two ratios. Round by
round, each kept-cloud run over the Nova run just before it gives a
ratio too: their spread (min, median, max) says how much of a ratio is
the machine's noise (on the 2-vCPU VM it was written on, one run varies
by about 10 % and the machine's speed drifts by a third over minutes).

It also prints each side's CPU time (this process's, all its threads)
and what is left of the wall time, the time spent waiting (Nova's tests
poll with fixed sleeps). Wall time is what the ratio is about; CPU time
is steadier on a shared machine and says how much of the gap is work.
Then the harness's steps alone (from its start snapshot to its last
step, without standing up or tearing down the cloud) over Nova's wall
time: the ratio a cloud shared between runs could reach at best.

Each scenario runs twice per round: on a cloud of its own, as
``runner.run`` gives by default, and on a cloud kept between runs
(``harness.reuse.CloudPool``: put back to its state before any step, then
settled). A kept cloud lives in a child process per pair, since Nova's
tests in this process reset the global config a live cloud runs on; its
first run stands the cloud up and is shown apart. The last line,
``ratio: X``, is the worse ratio on a kept cloud; the line before gives
it for a cloud per run.

    tox -e bench                      # or: python benchmarks/compare_nova.py
    python benchmarks/compare_nova.py --runs 5

Every run happens on one CPU (the first this process may use; ``--cpu``
picks another, ``--cpu any`` leaves it to the kernel): on a shared VM one
CPU can be a third slower than the other for minutes, and the kept
cloud's process and this one would otherwise be timed on different ones.

Nova's own tests look for api-paste.ini under site-packages (a source
tree's layout) while the wheel installs it under <prefix>/etc/nova; with
``--link-api-paste`` the script links it there so they can run.
"""

import argparse
import json
import os
import statistics
import subprocess
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
    from harness.cloud import install
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


def run_harness(path, pool=None):
    from harness.cloud import fixture as cloud_mod
    from harness.core import invariants
    from harness.core import scenario as scenario_mod
    from harness.runners import runner
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

    with fixtures.MonkeyPatch('harness.cloud.fixture.Cloud.snapshot',
                              first_snapshot):
        with Timed() as timed:
            runner.run(scenario, checks=[checker], progress=step_done,
                       pool=pool)
    timed.steps = marks['end'] - marks['start']
    return timed


# A child process's answer, one line on its stdout among whatever else.
ANSWER = 'compare_nova timing: '


def serve_kept_cloud():
    """The child: run each scenario path read from stdin on a kept cloud."""
    from harness.cloud import reuse
    with reuse.CloudPool() as pool:
        for line in sys.stdin:
            timed = run_harness(line.strip(), pool)
            print(ANSWER + json.dumps({
                'wall': timed.wall, 'cpu': timed.cpu, 'steps': timed.steps,
                'made': pool.made, 'reused': pool.reused}), flush=True)


class KeptCloud(object):
    """A child process keeping a cloud for one scenario's runs."""

    def __init__(self, scenario_path):
        self._path = scenario_path
        self._child = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), '--serve-kept-cloud'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self):
        self._child.stdin.write(self._path + '\n')
        self._child.stdin.flush()
        for line in self._child.stdout:
            if line.startswith(ANSWER):
                answer = json.loads(line[len(ANSWER):])
                timed = Timed()
                timed.wall, timed.cpu, timed.steps = (
                    answer['wall'], answer['cpu'], answer['steps'])
                timed.made, timed.reused = answer['made'], answer['reused']
                return timed
        raise SystemExit('the kept-cloud process for %s ended (exit %s)'
                         % (self._path, self._child.wait()))

    def close(self):
        self._child.stdin.close()
        self._child.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--link-api-paste', action='store_true')
    parser.add_argument('--cpu', default=None,
                        help='the CPU every run happens on (default: the '
                        'first allowed), or "any"')
    parser.add_argument('--serve-kept-cloud', action='store_true',
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.serve_kept_cloud and args.cpu != 'any':
        allowed = sorted(os.sched_getaffinity(0))
        try:
            cpu = allowed[0] if args.cpu is None else int(args.cpu)
        except ValueError:
            parser.error('--cpu: a CPU number or "any", not %r' % args.cpu)
        if cpu not in allowed:
            parser.error('--cpu: CPU %d is not one of this process\'s: %s'
                         % (cpu, ', '.join(map(str, allowed))))
        # The kept clouds' processes inherit it.
        os.sched_setaffinity(0, {cpu})
        print('every run on CPU %d' % cpu, flush=True)
    # Import (and patch eventlet) the way both suites do, before timing.
    from harness.cloud import fixture as cloud  # noqa: F401
    if args.serve_kept_cloud:
        return serve_kept_cloud()
    import nova.tests.functional  # noqa: F401
    if args.link_api_paste:
        link_api_paste()
    kept = {name: KeptCloud(path) for name, _, path in PAIRS}
    times = {name: {'nova': [], 'harness': [], 'kept': []}
             for name, _, _ in PAIRS}
    try:
        first = {name: kept[name].run() for name, _, _ in PAIRS}
        for run in range(args.runs):
            for name, nova_test, scenario_path in PAIRS:
                nova_run = run_nova(nova_test)
                harness_run = run_harness(scenario_path)
                kept_run = kept[name].run()
                times[name]['nova'].append(nova_run)
                times[name]['harness'].append(harness_run)
                times[name]['kept'].append(kept_run)
                print('run %d %s: nova %.2f s (cpu %.2f), harness %.2f s '
                      '(cpu %.2f), on a kept cloud %.2f s (cpu %.2f)'
                      % (run + 1, name, nova_run.wall, nova_run.cpu,
                         harness_run.wall, harness_run.cpu, kept_run.wall,
                         kept_run.cpu), flush=True)
    finally:
        for child in kept.values():
            child.close()
    ratios = {'harness': [], 'kept': []}
    for side, title in (
            ('harness', 'wall time, seconds per test, a cloud per run'),
            ('kept', 'wall time, seconds per test, on a kept cloud')):
        print()
        print(title)
        print('%-28s %9s %9s %9s %9s %7s' % ('test', 'nova min', 'nova med',
                                             'harn min', 'harn med',
                                             'ratio'))
        for name, _, _ in PAIRS:
            nova_t = [t.wall for t in times[name]['nova']]
            harness_t = [t.wall for t in times[name][side]]
            ratio = statistics.median(harness_t) / statistics.median(nova_t)
            ratios[side].append(ratio)
            print('%-28s %9.2f %9.2f %9.2f %9.2f %7.2f' % (
                name, min(nova_t), statistics.median(nova_t),
                min(harness_t), statistics.median(harness_t), ratio))
    print()
    print('on a kept cloud over Nova, round by round (each run over the Nova '
          'run before it)')
    print('%-28s %9s %9s %9s' % ('test', 'min', 'median', 'max'))
    for name, _, _ in PAIRS:
        paired = [kept_run.wall / nova_run.wall for nova_run, kept_run in zip(
            times[name]['nova'], times[name]['kept'])]
        if paired:
            print('%-28s %9.2f %9.2f %9.2f' % (
                name, min(paired), statistics.median(paired), max(paired)))
    print()
    print('a kept cloud: its first run, which stands it up, and its reuse')
    print('%-28s %9s %9s %9s' % ('test', 'first', 'clouds', 'reused'))
    for name, _, _ in PAIRS:
        last = times[name]['kept'][-1] if args.runs else first[name]
        print('%-28s %9.2f %9d %9d' % (name, first[name].wall, last.made,
                                       last.reused))
    print()
    print('medians in seconds: cpu, and wall minus cpu (waiting)')
    print('%-28s %9s %9s %9s %9s %9s %7s' % (
        'test', 'nova cpu', 'nova wait', 'harn cpu', 'harn wait',
        'kept cpu', 'cpu rat'))
    for name, _, _ in PAIRS:
        sides = [times[name][side] for side in ('nova', 'harness', 'kept')]
        cpu = [statistics.median(t.cpu for t in side) for side in sides]
        wait = [statistics.median(t.wall - t.cpu for t in side)
                for side in sides]
        print('%-28s %9.2f %9.2f %9.2f %9.2f %9.2f %7.2f' % (
            name, cpu[0], wait[0], cpu[1], wait[1], cpu[2], cpu[1] / cpu[0]))
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
    print('ratio (a cloud per run): %.2f' % max(ratios['harness']))
    print('ratio: %.2f' % max(ratios['kept']))


if __name__ == '__main__':
    main()
