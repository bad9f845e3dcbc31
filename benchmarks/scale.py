"""Scale: clouds of many profiled NUMA computes, filled, moved, checked.

For each size (default 10, 100 and 500 computes), in a child process of
its own (Nova's config is global: one cloud per process):

1. stand-up: a cloud with that many computes, Nova's libvirt driver over
   the fake connection, the host profiles taken in turn (the five of
   ``fixtures/hosts``), then each compute's instance sync with the
   scheduler, as every compute of a cloud in service runs it every two
   minutes: the scheduler then keeps the hosts' instance lists, where a
   cloud just started reads every host's from the database at every
   request (``--no-instance-sync`` boots in that state);
2. boots through the scheduler, pinned and shared flavors in turn, until
   the cloud is full (the first boot the scheduler finds no host for) or
   ``--boots-per-host`` times the size, whichever comes first (or
   ``--max-boots``, for a figure of per-boot time without filling a
   large cloud: at 500 computes Nova's scheduler takes seconds a boot);
3. moves: a share of the servers (``--move-share``) resized to a larger
   flavor of the same CPU policy and confirmed, and as many live-migrated
   (the scheduler picks each destination); every compute's
   ``update_available_resource`` then runs once, as the periodic would;
4. after each phase, the snapshot's invariants (usages add up,
   allocations where the server is, one compute node per consumer, the
   tracker agrees with Placement, within capacity, nothing leaks) and,
   with ``--idempotence``, the periodic-idempotence check on a trial.

It prints, per size: stand-up time, seconds per boot and per move (and
their median), the peak resident memory, whether every invariant held
(and the first problems if not), then ``growth: X``: the seconds per
boot at the largest size over the seconds per boot at the smallest. Each
boot's time is also split into Nova's scheduler (``SchedulerManager.
_schedule``: host states and filters for every host, Nova's own cost,
which grows with the hosts), the scheduler's request for Placement's
allocation candidates (one per host that fits: Placement's cost, which
grows with the hosts too) and the rest (the API, conductor, compute,
Placement's other work and the harness). ``growth without the
scheduler: X`` is the ratio of what is not the scheduler (candidates
included), ``growth without the scheduler and Placement's candidates:
X`` that of the rest.
With ``--profile`` it also writes a cProfile of the boots phase of the
largest size (in the temp dir) and prints its top functions by cumulative
and by own time, to show where the time goes (Nova's scheduler, objects
and database, or the harness).

    python benchmarks/scale.py                       # 10, 100, 500
    python benchmarks/scale.py --sizes 10 50 --boots-per-host 2

It asserts nothing: it prints figures.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PROFILES = ('dev-1s-8c-smt2', 'xeon-2s-20c-smt2', 'epyc-2s-64c-smt2-nps4',
            'mixed-1s-16c-smt2', 'nfv-2s-10c-smt2-reserved')
# name: (vcpus, ram MB, disk GB, dedicated?); each small flavor's larger
# twin is what a resize moves it to.
FLAVORS = {
    'pin4': (4, 4096, 10, True),
    'pin6': (6, 6144, 10, True),
    'shared2': (2, 2048, 10, False),
    'shared4': (4, 4096, 10, False),
}
BIGGER = {'pin4': 'pin6', 'shared2': 'shared4'}
ANSWER = 'scale result: '


def _time_host_choice():
    """Sum the seconds a boot spends choosing its host, by whose work.

    Into the returned ``{'scheduler': s, 'candidates': s}``, which a boot
    resets: Nova's scheduler in ``_schedule`` (host states and filters for
    every host), and the scheduler asking Placement for allocation
    candidates (``GET /allocation_candidates``: Placement's query and the
    answer, one candidate per host that fits). Both grow with the hosts
    and neither is the harness's. Only timed: the wrapped methods run as
    they are.
    """
    from nova.scheduler.client import report
    from nova.scheduler import manager
    spent = {'scheduler': 0.0, 'candidates': 0.0}

    def timed(cls, name, key):
        real = getattr(cls, name)

        def wrapper(self, *args, **kwargs):
            began = time.monotonic()
            try:
                return real(self, *args, **kwargs)
            finally:
                spent[key] += time.monotonic() - began
        setattr(cls, name, wrapper)

    timed(manager.SchedulerManager, '_schedule', 'scheduler')
    timed(report.SchedulerReportClient, 'get_allocation_candidates',
          'candidates')
    return spent


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _invariants(cloud, idempotence):
    """Problems the snapshot's invariants find now, as text."""
    from harness.core import invariants
    snap = cloud.snapshot()
    hosts = cloud.libvirt_hosts()
    dedicated = {host: frozenset(hosts.profile(host).dedicated_cpus)
                 for host in cloud.computes if hosts.has(host)}
    found = []
    found += invariants.usages_add_up(snap)
    found += invariants.allocations_where_server_is(snap)
    found += invariants.one_compute_node_per_consumer(snap)
    found += invariants.tracker_agrees(snap, dedicated, {})
    found += invariants.within_capacity(snap)
    after = None
    if idempotence:
        problems, after = invariants.periodics_idempotent(
            cloud, snap, sorted(cloud.computes))
        found += problems
    found += invariants.nothing_leaks(
        snap, reconciled=after, reconciled_hosts=set(),
        running=set(cloud.computes))
    return [str(problem) for problem in found]


def _sync_instance_lists(cloud):
    """Each compute's instance sync with the scheduler, twice, in turn.

    A cloud in service runs it on every compute every
    ``scheduler_instance_sync_interval`` (120 s). The scheduler's host
    manager makes a host's instance list at the first sync from a host
    it had not seen, and trusts it once a sync matches it; from then on
    the computes' updates keep it, and a request reads no host's
    instances from the database (``HostManager._get_instance_info``).
    Without it, every request reads the instances of every host.
    """
    for _round in range(2):
        cloud.run_periodics('_sync_scheduler_instance_info')


def measure(size, boots_per_host, move_share, idempotence, profile_to,
            max_boots=None, instance_sync=True):
    """Everything for one size, in this process; a dict of figures."""
    from harness.cloud import fixture as cloud_mod
    from harness.core import errors
    result = {'size': size, 'problems': {}}
    started = time.monotonic()
    # No quota: the cloud's capacity is what ends the boots.
    unlimited = {'quota': {'cores': -1, 'instances': -1, 'ram': -1}}
    with cloud_mod.Cloud(test_id='scale.%d' % size, timeout=120.0,
                         conf=unlimited) as cloud:
        for index in range(size):
            cloud.start_compute('host%04d' % index,
                                profile=PROFILES[index % len(PROFILES)])
        if instance_sync:
            began = time.monotonic()
            _sync_instance_lists(cloud)
            result['instance_sync'] = time.monotonic() - began
        for name, (vcpus, ram, disk, dedicated) in sorted(FLAVORS.items()):
            cloud.create_flavor(
                name, vcpus=vcpus, ram=ram, disk=disk,
                extra_specs={'hw:cpu_policy': 'dedicated'} if dedicated
                else {})
        result['stand_up'] = time.monotonic() - started
        result['problems']['stand-up'] = _invariants(cloud, idempotence)

        profiler = None
        if profile_to:
            import cProfile
            profiler = cProfile.Profile()
            profiler.enable()
        boots, servers = [], []
        small = ('pin4', 'shared2')
        full = False
        scheduling = _time_host_choice()
        in_scheduler, in_candidates = [], []
        planned = boots_per_host * size
        if max_boots is not None:
            planned = min(planned, max_boots)
        for number in range(planned):
            name = 'vm%05d' % number
            flavor = small[number % 2]
            began = time.monotonic()
            scheduling.update(scheduler=0.0, candidates=0.0)
            try:
                cloud.servers.boot(name, flavor)
            except errors.HarnessError as exc:
                if 'No valid host' in str(exc):
                    # No host fits (NoValidHost): the cloud is full.
                    result['full_at'] = str(exc).splitlines()[0]
                    full = True
                else:
                    # Anything else (a boot that timed out) is no figure
                    # of a full cloud: said as such below.
                    result['stopped_at'] = str(exc).splitlines()[0]
                break
            boots.append(time.monotonic() - began)
            in_scheduler.append(scheduling['scheduler'])
            in_candidates.append(scheduling['candidates'])
            servers.append((name, flavor))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_to)
        result['boots'] = boots
        result['scheduler'] = in_scheduler
        result['candidates'] = in_candidates
        result['full'] = full
        result['problems']['boots'] = _invariants(cloud, idempotence)

        moves = []
        count = max(1, int(len(servers) * move_share))
        for name, flavor in servers[:count]:
            began = time.monotonic()
            try:
                cloud.servers.resize(name, BIGGER[flavor])
                cloud.servers.confirm(name)
            except errors.HarnessError as exc:
                result.setdefault('refused', []).append(
                    'resize %s: %s' % (name, str(exc).splitlines()[0]))
                continue
            moves.append(time.monotonic() - began)
        for name, _flavor in servers[count:2 * count]:
            began = time.monotonic()
            try:
                cloud.servers.live_migrate(name)
            except errors.HarnessError as exc:
                result.setdefault('refused', []).append(
                    'live migrate %s: %s' % (name, str(exc).splitlines()[0]))
                continue
            moves.append(time.monotonic() - began)
        # The live migrations' destinations count their guests from their
        # next periodic (a tolerated window): run it, as Nova would.
        cloud.run_periodics()
        result['moves'] = moves
        result['problems']['moves'] = _invariants(cloud, idempotence)
    result['peak_mb'] = _peak_mb()
    return result


def _child(args):
    result = measure(args.child, args.boots_per_host, args.move_share,
                     args.idempotence, args.profile_to, args.max_boots,
                     instance_sync=not args.no_instance_sync)
    print(ANSWER + json.dumps(result), flush=True)


def _run_size(size, args, profile_to=None):
    cmd = [sys.executable, os.path.abspath(__file__), '--child', str(size),
           '--boots-per-host', str(args.boots_per_host),
           '--move-share', str(args.move_share)]
    if args.idempotence:
        cmd.append('--idempotence')
    if args.no_instance_sync:
        cmd.append('--no-instance-sync')
    if args.max_boots is not None:
        cmd += ['--max-boots', str(args.max_boots)]
    if profile_to:
        cmd += ['--profile-to', profile_to]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines()
             if line.startswith(ANSWER)]
    if out.returncode or not lines:
        raise SystemExit('size %d failed:\n%s' % (size, out.stderr[-3000:]))
    return json.loads(lines[-1][len(ANSWER):])


def _per(seconds):
    if not seconds:
        return 'none'
    return '%.3f s each (median %.3f, %d)' % (
        sum(seconds) / len(seconds), statistics.median(seconds),
        len(seconds))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--sizes', type=int, nargs='+',
                        default=[10, 100, 500])
    parser.add_argument('--boots-per-host', type=int, default=4,
                        help='stop booting after this many per compute '
                        '(default: %(default)s)')
    parser.add_argument('--max-boots', type=int, default=None,
                        help='and at most this many boots per size')
    parser.add_argument('--move-share', type=float, default=0.1,
                        help='share of the servers resized, and as many '
                        'live-migrated (default: %(default)s)')
    parser.add_argument('--idempotence', action='store_true',
                        help='also run the periodic-idempotence check '
                        'after each phase')
    parser.add_argument('--profile', action='store_true',
                        help='profile the boots of the largest size')
    parser.add_argument('--no-instance-sync', action='store_true',
                        help='boot before the computes have synced their '
                        'instance lists with the scheduler (every request '
                        'then reads every host\'s instances)')
    parser.add_argument('--child', type=int, help=argparse.SUPPRESS)
    parser.add_argument('--profile-to', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return _child(args)
    if any(size < 1 for size in args.sizes):
        parser.error('--sizes: each must be 1 or more')
    if not 0 < args.move_share <= 0.5:
        parser.error('--move-share must be in (0, 0.5]')
    results = []
    sizes = sorted(set(args.sizes))
    for size in sizes:
        profile_to = None
        if args.profile and size == sizes[-1]:
            profile_to = os.path.join(tempfile.gettempdir(),
                                      'scale-boots-%d.prof' % size)
        result = _run_size(size, args, profile_to)
        results.append(result)
        held = all(not found for found in result['problems'].values())
        print('%d computes: stand-up %.1f s%s; boots %s%s; moves %s; peak '
              'memory %.0f MB; invariants %s' % (
                  size, result['stand_up'],
                  ' (of which the instance lists synced with the '
                  'scheduler: %.1f s)' % result['instance_sync']
                  if 'instance_sync' in result else
                  ' (instance lists not synced with the scheduler)',
                  _per(result['boots']),
                  ' (cloud full: %s)' % result['full_at']
                  if result['full'] else
                  ' (boots STOPPED before the cloud was full: %s)'
                  % result['stopped_at'] if 'stopped_at' in result else '',
                  _per(result['moves']), result['peak_mb'],
                  'held' if held else 'BROKEN'), flush=True)
        for phase, found in result['problems'].items():
            for line in found[:5]:
                print('  %s: %s' % (phase, line))
        for line in result.get('refused', [])[:5]:
            print('  refused: %s' % line)
        if profile_to:
            import pstats
            print('boots at %d computes, by cumulative and own time (%s):' % (
                size, profile_to))
            stats = pstats.Stats(profile_to)
            stats.sort_stats('cumulative').print_stats(20)
            stats.sort_stats('tottime').print_stats(20)
    for result in results:
        if result['boots']:
            print('%d computes: per boot %.3f s in Nova\'s scheduler, '
                  '%.3f s in Placement\'s allocation candidates, %.3f s '
                  'the rest' % (
                      result['size'], statistics.mean(result['scheduler']),
                      statistics.mean(result['candidates']),
                      _rest(result, candidates=True)))
    first, last = results[0], results[-1]
    if first['boots'] and last['boots']:
        print('growth without the scheduler: %.2f' % (
            _rest(last) / _rest(first)))
        print('growth without the scheduler and Placement\'s candidates: '
              '%.2f' % (_rest(last, candidates=True)
                        / _rest(first, candidates=True)))
        stopped = [r['size'] for r in results if 'stopped_at' in r]
        print('growth: %.2f (seconds per boot at %d computes over at %d)%s'
              % (statistics.mean(last['boots'])
                 / statistics.mean(first['boots']), last['size'],
                 first['size'],
                 ' NOT COMPARABLE: boots stopped early at %s computes'
                 % ', '.join(map(str, stopped)) if stopped else ''))
    return 0


def _rest(result, candidates=False):
    """Seconds per boot but Nova's scheduler (and Placement's candidates)."""
    chosen = result['scheduler']
    if candidates:
        chosen = [s + c for s, c in zip(chosen, result['candidates'])]
    return statistics.mean(b - s for b, s in zip(result['boots'], chosen))


if __name__ == '__main__':
    # Nova's choices between equals follow the hash seed.
    from harness.runners import cli
    cli.pin_hash_seed()
    sys.exit(main())
