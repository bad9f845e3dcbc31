"""The snapshot's hypervisor list is the one Nova's API shows.

``SnapshotReader.read_hypervisors`` reads the cell database in the API's
own terms (it costs a fraction of the request); this holds the two equal
while a compute is disabled, forced down and its service deleted.
"""

from harness import Cloud
from harness import TestCase


class TestHypervisorList(TestCase):

    def assert_as_the_api_shows(self, cloud, expected):
        by_name = {hyp['hypervisor_hostname']: hyp
                   for hyp in cloud.reader.api_hypervisors()}
        self.assertEqual(expected, {name: (hyp['state'], hyp['status'])
                                    for name, hyp in by_name.items()})
        self.assertEqual(sorted(cloud.reader.api_hypervisors(),
                                key=lambda hyp: hyp['id']),
                         sorted(cloud.reader.read_hypervisors(),
                                key=lambda hyp: hyp['id']))

    def test_the_database_read_is_the_api_s_answer(self):
        cloud = self.useFixture(Cloud(test_id=self.id()))
        cloud.start_compute('h1')
        cloud.start_compute('h2')
        self.assert_as_the_api_shows(cloud, {'h1': ('up', 'enabled'),
                                             'h2': ('up', 'enabled')})
        cloud.services.disable('h1', reason='maintenance')
        cloud.services.force_down('h2')
        self.assert_as_the_api_shows(cloud, {'h1': ('up', 'disabled'),
                                             'h2': ('down', 'enabled')})
        cloud.stop_compute('h2')
        cloud.services.delete('h2')
        self.assert_as_the_api_shows(cloud, {'h1': ('up', 'disabled')})
