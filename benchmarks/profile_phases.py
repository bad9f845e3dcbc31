"""Where a scenario's time goes: set-up, steps, snapshots, API requests.

Runs one scenario file once to warm up, then N times, and prints per run
the wall time of the cloud's set-up, the computes' start, each kind of
step and the snapshots, and of every Nova and Placement API request by
kind (steps include the requests they make). It wraps
the harness's own entry points and the API test clients; Nova itself is
not touched.

    python benchmarks/profile_phases.py benchmarks/scenarios/FILE.yaml
    python benchmarks/profile_phases.py --runs 5 FILE

For a sampling profile, run it under py-spy (``py-spy record -f raw``).
"""

import argparse
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from harness.cloud import fixture as cloud_mod  # noqa: E402,I100
from harness.cloud import snapshot_reader  # noqa: E402
from harness.core import invariants  # noqa: E402
from harness.core import scenario as scenario_mod  # noqa: E402
from harness.runners import runner  # noqa: E402
from nova.tests.functional.api import client  # noqa: E402
from nova.tests.functional import fixtures as func_fixtures  # noqa: E402

UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f-]{27}')
TOTALS = collections.defaultdict(float)
COUNTS = collections.Counter()


def _timed(owner, name, label):
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            key = label(args, kwargs) if callable(label) else label
            TOTALS[key] += time.perf_counter() - started
            COUNTS[key] += 1
    setattr(owner, name, wrapper)


def _api_label(args, kwargs):
    return 'nova %s %s' % (kwargs.get('method', 'GET'),
                           UUID.sub('X', args[1].split('?')[0]))


def _placement_label(args, kwargs):
    return 'placement GET %s' % UUID.sub('X', args[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('path')
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error('--runs must be 1 or more')
    scenario = scenario_mod.load(args.path)[0]
    _timed(cloud_mod.Cloud, '_setUp', 'cloud set-up (services, API)')
    _timed(cloud_mod.Cloud, 'start_compute', 'start_compute')
    _timed(snapshot_reader.SnapshotReader, 'read', 'snapshot')
    _timed(runner, 'execute', lambda a, k: 'step: %s' % a[1].kind)
    _timed(client.TestOpenStackClient, 'api_request', _api_label)
    _timed(func_fixtures.PlacementApiClient, 'get', _placement_label)

    def once():
        started = time.perf_counter()
        runner.run(scenario, checks=[
            invariants.Checker(periodic_idempotence=False)])
        return time.perf_counter() - started

    once()
    TOTALS.clear()
    COUNTS.clear()
    wall = sum(once() for _ in range(args.runs)) / args.runs
    print('%s: %.3f s per run (mean of %d)' % (scenario.name, wall,
                                               args.runs))
    for key, seconds in sorted(TOTALS.items(), key=lambda kv: -kv[1]):
        print('%8.1f ms/run %4d calls/run  %s' % (
            1000 * seconds / args.runs, COUNTS[key] // args.runs, key))


if __name__ == '__main__':
    main()
