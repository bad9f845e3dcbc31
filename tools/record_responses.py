"""Record the API responses a snapshot reads, for the unit tests.

Runs boot -> resize -> confirm on two fake hosts and writes, per step, the
Placement and Nova responses by URL and the compute node records to
tests/unit/data/resize_confirm.json. The unit tests rebuild snapshots
from these recordings; their expected values are worked out from the
flavors, not read from the file.

    python tools/record_responses.py
"""

import json
import os
import sys

from harness.cloud import fixture as cloud_mod
from harness.core import snapshot

OUT = os.path.join(os.path.dirname(__file__), '..', 'tests', 'unit', 'data',
                   'resize_confirm.json')


def record(cloud, label):
    responses = {'placement': {}, 'nova': {}}

    def recording(kind, get):
        def recorded(url):
            body = get(url)
            responses[kind][url] = body
            return body
        return recorded

    snapshot.placement_records(
        recording('placement', cloud.reader.placement_get))
    snapshot.nova_records(recording('nova', cloud.reader.nova_get))
    responses['compute_nodes'] = cloud.reader.read_compute_nodes()
    responses['names'] = cloud.servers.names()
    responses['label'] = label
    return responses


def main():
    steps = []
    with cloud_mod.Cloud() as cloud:
        cloud.start_compute('host1')
        cloud.start_compute('host2')
        cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)
        cloud.servers.boot('vm1', 'small', host='host1')
        steps.append(record(cloud, 'boot vm1 on host1'))
        cloud.servers.resize('vm1', 'large')
        steps.append(record(cloud, 'resize vm1 to large'))
        cloud.servers.confirm('vm1')
        steps.append(record(cloud, 'confirm vm1'))
    with open(OUT, 'w') as out:
        json.dump({'steps': steps}, out, indent=1, sort_keys=True)
        out.write('\n')
    print('wrote %s' % os.path.normpath(OUT))


if __name__ == '__main__':
    sys.exit(main())
