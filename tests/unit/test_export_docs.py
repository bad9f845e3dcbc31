"""The exported tests the export page shows are the exporter's output."""

import glob
import os
import re

import harness
from harness.export import nova_test
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(harness.__file__)))
EXPORTED = os.path.join(ROOT, 'doc', 'source', 'user', 'exported')


class ExportedDocsTest(testing.TestCase):

    def test_each_file_is_what_the_exporter_writes(self):
        paths = sorted(glob.glob(os.path.join(EXPORTED, 'test_bug_*.py')))
        self.assertEqual(5, len(paths))
        for path in paths:
            bug = re.search(r'test_bug_(\d+)\.py$', path).group(1)
            with open(path) as f:
                shown = f.read()
            self.assertEqual(
                nova_test.export(os.path.join(
                    ROOT, 'harness', 'bugs', 'lp%s.yaml' % bug)), shown,
                '%s is stale: harness export nova-test harness/bugs/'
                'lp%s.yaml -o %s' % (path, bug, os.path.relpath(path, ROOT)))

    def test_the_page_shows_each_file(self):
        with open(os.path.join(ROOT, 'doc', 'source', 'user',
                               'export.rst')) as f:
            page = f.read()
        for path in glob.glob(os.path.join(EXPORTED, 'test_bug_*.py')):
            self.assertIn('.. literalinclude:: exported/%s'
                          % os.path.basename(path), page)
