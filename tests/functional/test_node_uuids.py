"""A fake compute's node has the same UUID in every process.

Nova's fake driver takes its nodes' UUIDs from oslo's uuidsentinel,
random once per process; with two equally good nodes the scheduler's
order then followed the process (harness determinism found
Reschedule's out-of-alternates boot trying h1 first in one worker and
h2 in the other). The Cloud derives them from the node's name.
"""

import uuid

from harness.cloud import fixture as cloud_mod
from harness import testing


class TestNodeUUIDs(testing.TestCase):

    def test_a_fake_node_s_uuid_comes_from_its_name(self):
        cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        cloud.start_compute('h1')
        cloud.start_compute('h2')
        snap = cloud.snapshot()
        # A compute node's resource provider has the node's UUID.
        found = {name: snap.providers[name].uuid for name in ('h1', 'h2')}
        namespace = uuid.UUID('5d2c7a1e-93b4-4f08-8e6a-1c7f0b2d4e93')
        self.assertEqual(
            {name: str(uuid.uuid5(namespace, 'node_%s' % name))
             for name in ('h1', 'h2')}, found)
