"""The README's Python example, verbatim, run as a test.

Between the two marker comments below stands the code block of the
README's "The same in Python" section, character for character (less
its indentation); ``TestReadmeShowsIt`` checks that the two still match,
so the README shows code that runs and passes.
"""

# README example: begin
from harness import Cloud  # imports Nova: at load time, not in a test
from harness import TestCase


class TestResize(TestCase):

    def test_periodic_before_finish_resize_then_confirm(self):
        cloud = self.useFixture(Cloud(test_id=self.id()))
        cloud.start_compute('host1', profile='dev-1s-8c-smt2')
        cloud.start_compute('host2', profile='xeon-2s-20c-smt2')
        cloud.create_flavor('small', vcpus=1, ram=512, disk=1)
        cloud.create_flavor('large', vcpus=2, ram=1024, disk=2)
        cloud.servers.boot('vm1', 'small', host='host1')
        # The source's periodic, just before finish_resize on the dest.
        periodic = cloud.race.at('finish_resize').run(
            'update_available_resource', host='source')
        cloud.servers.resize('vm1', 'large')
        self.assertEqual(1, len(periodic.fired))
        snap = cloud.snapshot()
        self.assertEqual({'host1': {'VCPU': 1, 'MEMORY_MB': 512,
                                    'DISK_GB': 1}},
                         snap.allocations_of('migration(vm1)'))
        self.assertEqual({'host2': {'VCPU': 2, 'MEMORY_MB': 1024,
                                    'DISK_GB': 2}},
                         snap.allocations_of('vm1'))
        cloud.servers.confirm('vm1')
        cloud.clock.advance(60)  # runs the periodics that come due
        snap = cloud.snapshot()
        self.assertEqual({}, snap.allocations_of('migration(vm1)'))
        self.assertEqual({}, snap.usage('host1'))
        self.assertEqual(0, snap.trackers['host1'].vcpus_used)
# README example: end


class TestReadmeShowsIt(TestCase):

    def test_readme_block_is_the_example_above(self):
        # Imported here: above this class stands the README's code alone.
        import os
        import textwrap

        here = os.path.abspath(__file__)
        with open(here, encoding='utf-8') as source:
            text = source.read()
        example = text.split('# README example: begin\n')[1].split(
            '# README example: end\n')[0]
        readme = os.path.join(os.path.dirname(os.path.dirname(
            os.path.dirname(here))), 'README.rst')
        with open(readme, encoding='utf-8') as source:
            lines = source.read().split('The same in Python\n', 1)[1]
        lines = lines.split('.. code-block:: python\n', 1)[1].splitlines()
        block = []
        for line in lines:
            if line.strip() and not line.startswith(' '):
                break
            block.append(line)
        self.assertEqual(example.strip('\n'),
                         textwrap.dedent('\n'.join(block)).strip('\n'))
