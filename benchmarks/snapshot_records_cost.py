"""What the node, instance, hypervisor and domain reads add to a snapshot.

Stands up two profiled hosts with a pinned guest on each and times each
read of a snapshot's raw records, uncached, over many rounds: the reads
the snapshot always made (Placement's tables, servers and migrations,
compute node trackers, PCI devices, mediated devices) and the four
behind ``compute_nodes``, ``hypervisors``, ``guest_cpus`` and
``domain`` (node records with stats, the instances' NUMA pinning, the
hypervisor list through Nova's API, each host's domain XML). A snapshot
after a step that wrote nothing re-reads only the hypervisor list and
the domains (the rest is cached by database writes; the hypervisor
list by database writes and the clock's time).

    python benchmarks/snapshot_records_cost.py [--rounds N]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

import testtools  # noqa: E402

from harness import Cloud  # noqa: E402
from harness.core import records  # noqa: E402

# Each read itself, not its cache (the snapshot caches the reads of
# databases by their write count).
READS = ('_read_placement_records', '_read_nova_records',
         'read_compute_nodes', 'read_pci_devices', 'read_mdevs')
NEW_READS = ('read_node_records', 'read_instances', 'read_hypervisors',
             'read_domains', 'parse_domains')


class _Bench(testtools.TestCase):

    rounds = 50

    def test_reads(self):
        cloud = self.useFixture(Cloud(test_id=self.id()))
        cloud.start_compute('src', profile='dev-1s-8c-smt2')
        cloud.start_compute('dst', profile='xeon-2s-20c-smt2')
        cloud.create_flavor('pin2', vcpus=2, ram=512, disk=1,
                            extra_specs={'hw:cpu_policy': 'dedicated'})
        cloud.servers.boot('vm1', 'pin2', host='src')
        cloud.servers.boot('vm2', 'pin2', host='dst')
        reader = cloud.reader
        totals = {}
        domains = [dom for dom in reader.read_domains() if dom['xml']]
        self.assertEqual(2, len(domains))
        reader.parse_domains = lambda: [records.parse_domain(
            dom['host'], dom['xml']) for dom in domains]
        for name in READS + NEW_READS:
            read = getattr(reader, name)
            read()  # warm
            started = time.perf_counter()
            for _ in range(self.rounds):
                read()
            totals[name] = (time.perf_counter() - started) / self.rounds
        for name in READS + NEW_READS:
            print('%-24s %7.2f ms' % (name, totals[name] * 1000))
        old = sum(totals[name] for name in READS)
        new = sum(totals[name] for name in NEW_READS)
        always = totals['read_domains'] + totals['parse_domains']
        print('uncached snapshot: %.2f ms before, +%.2f ms (+%.0f%%) for the '
              'new reads; after a step that wrote nothing and left the '
              'clock: +%.2f ms' % (
                  old * 1000, new * 1000, 100 * new / old, always * 1000))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=50)
    args = parser.parse_args(argv)
    _Bench.rounds = args.rounds
    result = testtools.TestResult()
    _Bench('test_reads').run(result)
    for _, error in result.errors + result.failures:
        print(error)
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
