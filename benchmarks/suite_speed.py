"""The functional suite's wall time, mean per test, worker speed-up, memory.

Runs the suite (by default the functional env's selection) under stestr
once per worker count, and prints for each: tests run and failed, wall
time, mean time per test, and each worker's peak resident memory (VmHWM,
read from /proc while it runs). The last line is ``speedup: X``, the wall
time with the fewest workers over the wall time with the most.

    python benchmarks/suite_speed.py                    # 1 and 2 workers
    python benchmarks/suite_speed.py --workers 2 --filter test_numa
    python benchmarks/suite_speed.py --random    # in random order too
    python benchmarks/suite_speed.py --rounds 2  # 1, 2, 1, 2 workers

A small VM's speed drifts over minutes; with ``--rounds N`` the worker
counts take turns N times and the speed-up is that of the median walls.

With ``--clouds`` it compares instead, on two workers, the suite with a
cloud per test (``HARNESS_KEEP_CLOUDS=0``) and on kept clouds (the
default: a scenario test runs on the cloud the test before it left, put
back to its checkpoint, when the shapes match; ``harness.cloud.reuse``),
each with the gate's ``HARNESS_COMPARE_WITHOUT_CHECKS=one-per-file``
unless the environment says otherwise, and times Nova's own
``ServerMovingTests.test_resize_confirm`` in a child process
(``--nova-runs`` times, median) before, between and after the two suite
runs in turn, so the VM's drift over those minutes weighs on both sides
of the ratio alike. It prints both walls and
their ratio, the mean time per scenario test (``test_scenarios`` and the
bug scenarios of ``test_regressions``) each way, and last
``scenario/nova: X``, the kept clouds' mean scenario test over Nova's
test (the goal is 0.35 or less).

    python benchmarks/suite_speed.py --clouds --link-api-paste

With ``--modes`` it runs the suite (two workers, kept clouds) once with
Nova in native threading and once under eventlet
(``HARNESS_CONCURRENCY``), in turn ``--rounds`` times, and prints each
mode's wall and mean scenario test, and last ``threading/eventlet: X``,
the ratio of the median mean scenario tests (the goal is 1.2 or less).

    python benchmarks/suite_speed.py --modes --rounds 2

It asserts nothing: it prints figures. stestr balances workers by the
test times it recorded before, so run the suite once first in a fresh
clone (a run with no history splits the tests blind).
"""

import argparse
import collections
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import subunit
import testtools

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FUNCTIONAL = r'^tests\.(functional|regressions)\.'


def _children(pid):
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _workers(pid):
    """The stestr workers under ``pid``, not their own children.

    A test may fork (the explorer's replay workers do); a fork carries its
    parent's command line but is not a stestr worker.
    """
    found, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            if _is_worker(child):
                found.append(child)
            else:
                todo.append(child)
    return found


def _peak_kb(pid):
    """VmHWM (peak resident set) of a live process, in kB, or None."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1])
    except OSError:
        return None


def _is_worker(pid):
    """A Python process running tests (not stestr's listing, not a shell)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            argv = f.read().split(b'\0')
    except OSError:
        return False
    return (b'python' in os.path.basename(argv[0])
            and b'stestr.subunit_runner.run' in argv
            and b'--list' not in argv)


class MemoryWatch(threading.Thread):
    """Polls a process tree; keeps each stestr worker's highest VmHWM."""

    def __init__(self, pid, interval=0.2):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peaks = {}
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            for pid in _workers(self.pid):
                kb = _peak_kb(pid)
                if kb is not None:
                    self.peaks[pid] = max(kb, self.peaks.get(pid, 0))
            self.done.wait(self.interval)


#: Scenario tests: a scenario file's or a bug's scenario, one run each
#: (with its run without checks).
SCENARIO_TESTS = ('tests.functional.test_scenarios.',
                  'tests.regressions.test_regressions.')


def summarise(stream_bytes, durations=None):
    """(tests, failed, sum of test durations) from a subunit v2 stream.

    ``durations``, if given, is filled with each test's seconds by id.
    """
    durations = {} if durations is None else durations
    statuses = {}

    def on_test(test):
        statuses[test['id']] = test['status']
        start, stop = test['timestamps']
        if start and stop:
            durations[test['id']] = (stop - start).total_seconds()

    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(io.BytesIO(stream_bytes)).run(result)
    result.stopTestRun()
    ran = [t for t, s in statuses.items() if s in ('success', 'fail')]
    failed = [t for t, s in statuses.items() if s == 'fail']
    return len(ran), failed, sum(durations[t] for t in ran
                                 if t in durations)


def run_suite(workers, test_filter, random_order=False, env=None):
    cmd = [sys.executable, '-m', 'stestr', 'run', '--subunit',
           '--concurrency', str(workers)]
    if random_order:
        # stestr shuffles within each worker's partition: the split, and so
        # the balance, stays what it would be.
        cmd.append('--random')
    cmd.append(test_filter)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                            env=dict(os.environ, **(env or {})))
    watch = MemoryWatch(proc.pid)
    watch.start()
    out, _ = proc.communicate()
    wall = time.monotonic() - started
    watch.done.set()
    watch.join()
    durations = {}
    tests, failed, busy = summarise(out, durations)
    scenario = [seconds for test_id, seconds in durations.items()
                if test_id.startswith(SCENARIO_TESTS)]
    return {'workers': workers, 'wall': wall, 'tests': tests,
            'failed': failed, 'mean': busy / tests if tests else 0.0,
            'scenario_tests': len(scenario),
            'scenario_mean': (statistics.mean(scenario) if scenario
                              else 0.0),
            'peaks_mb': sorted((kb / 1024.0 for kb in watch.peaks.values()),
                               reverse=True)}


# Nova's test, timed in a child (its fixtures reset the global config a
# kept cloud would run on); its answer is the last line it prints.
NOVA_TIMING = """
import sys
sys.path.insert(0, %(benchmarks)r)
import compare_nova
if %(link)r:
    compare_nova.link_api_paste()
timed = compare_nova.run_nova(compare_nova.PAIRS[0][1])
print('nova seconds: %%.3f' %% timed.wall)
"""


def time_nova(link_api_paste):
    code = NOVA_TIMING % {'benchmarks': HERE, 'link': link_api_paste}
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT,
                         capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines()
             if line.startswith('nova seconds: ')]
    if out.returncode or not lines:
        raise SystemExit('Nova\'s test did not run (with --link-api-paste '
                         'it finds its api-paste.ini):\n%s' % (
                             out.stderr[-2000:]))
    return float(lines[-1].split()[-1])


def compare_clouds(args):
    results = {}
    # As the gate runs them (tox -e functional): a scenario test runs
    # again without checks for the first scenario of each file only.
    compare = os.environ.get('HARNESS_COMPARE_WITHOUT_CHECKS',
                             'one-per-file')
    print('scenarios compared with a run without checks: %s '
          '(HARNESS_COMPARE_WITHOUT_CHECKS)' % compare, flush=True)
    # Nova's runs go in turn before, between and after the suite runs.
    nova_times = []

    def time_nova_at(moment):
        for _ in range(moment, args.nova_runs, 3):
            nova_times.append(time_nova(args.link_api_paste))

    time_nova_at(0)
    for label, keep in (('a cloud per test', '0'), ('kept clouds', '1')):
        with tempfile.TemporaryDirectory() as tmp:
            stats = os.path.join(tmp, 'pool-stats')
            result = run_suite(2, args.filter, args.random,
                               env={'HARNESS_KEEP_CLOUDS': keep,
                                    'HARNESS_COMPARE_WITHOUT_CHECKS': compare,
                                    'HARNESS_POOL_STATS': stats})
            pools = _pool_stats(stats)
        results[keep] = result
        print('%s: %d tests, %d failed, wall %.1f s on 2 workers, mean '
              '%.2f s per scenario test (%d), %.2f s per test' % (
                  label, result['tests'], len(result['failed']),
                  result['wall'], result['scenario_mean'],
                  result['scenario_tests'], result['mean']), flush=True)
        if keep == '1':
            print('kept clouds: %d stood up, %d runs on one put back, '
                  '%d after which stopped or restarted computes started '
                  'anew' % (pools['made'], pools['reused'],
                            pools['replaced']), flush=True)
            for reason, count in pools['given_up'].most_common():
                print('  given up %3d x: %s' % (count, reason), flush=True)
        for test_id in result['failed']:
            print('  failed: %s' % test_id)
        time_nova_at(1 if keep == '0' else 2)
    nova = statistics.median(nova_times)
    before, after = results['0'], results['1']
    print('nova ServerMovingTests.test_resize_confirm: %.2f s (median of '
          '%d: %s)' % (nova, len(nova_times), ', '.join(
              '%.2f' % t for t in nova_times)))
    print('wall kept/new: %.2f (%.1f s -> %.1f s)' % (
        after['wall'] / before['wall'], before['wall'], after['wall']))
    print('scenario mean kept/new: %.2f (%.2f s -> %.2f s)' % (
        after['scenario_mean'] / before['scenario_mean'],
        before['scenario_mean'], after['scenario_mean']))
    print('scenario/nova: %.2f (a cloud per test: %.2f)' % (
        after['scenario_mean'] / nova, before['scenario_mean'] / nova))
    return 1 if before['failed'] or after['failed'] else 0


def compare_modes(args):
    """The suite in each concurrency mode, side by side (see above)."""
    runs = {'threading': [], 'eventlet': []}
    for _round in range(args.rounds):
        for mode in ('threading', 'eventlet'):
            result = run_suite(2, args.filter, args.random,
                               env={'HARNESS_CONCURRENCY': mode})
            runs[mode].append(result)
            print('%s: %d tests, %d failed, wall %.1f s on 2 workers, mean '
                  '%.2f s per scenario test (%d), %.2f s per test' % (
                      mode, result['tests'], len(result['failed']),
                      result['wall'], result['scenario_mean'],
                      result['scenario_tests'], result['mean']), flush=True)
            for test_id in result['failed']:
                print('  failed: %s' % test_id)
    means = {mode: statistics.median(r['scenario_mean'] for r in results)
             for mode, results in runs.items()}
    walls = {mode: statistics.median(r['wall'] for r in results)
             for mode, results in runs.items()}
    print('wall threading/eventlet: %.2f (%.1f s, %.1f s)' % (
        walls['threading'] / walls['eventlet'], walls['threading'],
        walls['eventlet']))
    print('threading/eventlet: %.2f (mean scenario test %.2f s and %.2f s'
          '%s)' % (means['threading'] / means['eventlet'],
                   means['threading'], means['eventlet'],
                   ', medians of %d rounds' % args.rounds
                   if args.rounds > 1 else ''))
    return 1 if any(r['failed'] for results in runs.values()
                    for r in results) else 0


def _pool_stats(path):
    """The workers' pools' figures, added up (``reuse.STATS_ENV``).

    ``made`` (clouds stood up), ``reused`` (runs on a kept one),
    ``replaced`` (runs after which a kept cloud's stopped or restarted
    computes started anew) and ``given_up`` (reason -> clouds).
    """
    total = {'made': 0, 'reused': 0, 'replaced': 0,
             'given_up': collections.Counter()}
    if os.path.exists(path):
        with open(path) as source:
            for line in source:
                stats = json.loads(line)
                for key in ('made', 'reused', 'replaced'):
                    total[key] += stats[key]
                total['given_up'].update(stats['given_up'])
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--filter', default=FUNCTIONAL,
                        help='stestr test filter (default: %(default)s)')
    parser.add_argument('--random', action='store_true',
                        help='run each worker\'s tests in random order')
    parser.add_argument('--rounds', type=int, default=1,
                        help='run the worker counts in turn this many '
                        'times; figures are medians (default: 1)')
    parser.add_argument('--clouds', action='store_true',
                        help='compare a cloud per test with kept clouds '
                        '(two workers) and time Nova\'s test_resize_confirm')
    parser.add_argument('--nova-runs', type=int, default=3,
                        help='with --clouds: runs of Nova\'s test, in '
                        'turn before, between and after the suite runs '
                        '(default: %(default)s)')
    parser.add_argument('--link-api-paste', action='store_true',
                        help='with --clouds: let Nova\'s test find its '
                        'api-paste.ini (see compare_nova.py)')
    parser.add_argument('--modes', action='store_true',
                        help='compare Nova in native threading and under '
                        'eventlet (two workers, kept clouds)')
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error('--rounds must be 1 or more')
    if args.modes:
        return compare_modes(args)
    if args.clouds:
        if args.nova_runs < 1:
            parser.error('--nova-runs must be 1 or more')
        return compare_clouds(args)
    if any(n < 1 for n in args.workers):
        parser.error('--workers: each count must be 1 or more')
    results = []
    for _round in range(args.rounds):
        for workers in args.workers:
            result = run_suite(workers, args.filter, args.random)
            results.append(result)
            print('workers %d: %d tests, %d failed, wall %.1f s, mean %.2f '
                  's per test, peak memory per worker: %s' % (
                      workers, result['tests'], len(result['failed']),
                      result['wall'], result['mean'],
                      ', '.join('%.0f MB' % mb for mb in result['peaks_mb'])
                      or 'not seen'), flush=True)
            for test_id in result['failed']:
                print('  failed: %s' % test_id)
    counts = sorted(set(args.workers))
    walls = {n: statistics.median(r['wall'] for r in results
                                  if r['workers'] == n) for n in counts}
    if args.rounds > 1:
        for n in counts:
            print('workers %d: median wall %.1f s, median mean per test '
                  '%.2f s' % (n, walls[n], statistics.median(
                      r['mean'] for r in results if r['workers'] == n)))
    if len(counts) > 1:
        print('speedup: %.2f (%d workers over %d%s)' % (
            walls[counts[0]] / walls[counts[-1]], counts[-1], counts[0],
            ', median walls of %d rounds' % args.rounds
            if args.rounds > 1 else ''))
    return 1 if any(r['failed'] for r in results) else 0


if __name__ == '__main__':
    # Nova's choices between equals follow the hash seed.
    from harness.runners import cli
    cli.pin_hash_seed()
    sys.exit(main())
