"""The domain document a profiled host keeps follows its devices.

Libvirt edits a domain's XML as devices are attached and detached (a
suspend detaches a guest's PCI devices, a resume attaches them again);
``harness.cloud.libvirt`` does the same to the document it keeps, where
Nova's fake libvirt edits only its parsed parts. Imports Nova (at module
import, as the leak check asks).
"""

from harness.cloud import libvirt
from harness.core import records
from harness import testing
from tests.unit import test_node_records

DRIVE = ('<hostdev mode="subsystem" type="pci" managed="yes">'
         '<source><address domain="0x0000" bus="0x02" slot="0x00" '
         'function="0x0"/></source></hostdev>')


class TestDocumentEdits(testing.TestCase):

    def test_a_detached_device_leaves_and_comes_back(self):
        detached = libvirt._detached(test_node_records.DOMAIN_XML, DRIVE)
        domain = records.parse_domain('src', detached)
        self.assertEqual((), domain.hostdevs)
        # The vGPU (another hostdev) stays.
        self.assertEqual(1, len(domain.mdevs))
        attached = libvirt._attached(detached, DRIVE)
        self.assertEqual(('0000:02:00.0',),
                         records.parse_domain('src', attached).hostdevs)

    def test_detaching_another_device_changes_nothing(self):
        other = DRIVE.replace('bus="0x02"', 'bus="0x03"')
        self.assertEqual(
            ('0000:02:00.0',), records.parse_domain('src', libvirt._detached(
                test_node_records.DOMAIN_XML, other)).hostdevs)
