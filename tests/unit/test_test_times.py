"""The seeding of stestr's test times (tools/test_times.py).

A fresh clone's stestr has no times and splits its workers blind; the
tool adds the committed times it lacks, and never changes one it has.
"""

import importlib.util
import json
import os

import fixtures
import testtools

from stestr.repository import util as repo_util

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _tool():
    spec = importlib.util.spec_from_file_location(
        'test_times', os.path.join(ROOT, 'tools', 'test_times.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestSeed(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tool = _tool()
        self.root = self.useFixture(fixtures.TempDir()).path
        os.mkdir(os.path.join(self.root, 'tests'))
        with open(os.path.join(self.root, 'tests', 'test-times.json'),
                  'w') as f:
            json.dump({'tests.a.A.test_1': 12.5, 'tests.a.A.test_2': 0.5},
                      f)

    def times(self, ids):
        repo = repo_util.get_repo_open(repo_url=self.root)
        return repo.get_test_times(ids)

    def test_a_fresh_checkout_gets_every_time(self):
        self.tool.seed(self.root)
        got = self.times(['tests.a.A.test_1', 'tests.a.A.test_2',
                          'tests.b.B.test_new'])
        self.assertEqual({'tests.a.A.test_1': 12.5, 'tests.a.A.test_2': 0.5},
                         got['known'])
        self.assertEqual({'tests.b.B.test_new'}, got['unknown'])

    def test_a_recorded_time_is_kept(self):
        self.tool.seed(self.root)
        db = self.tool.dumb.open(self.tool._times_db(self.root), 'c')
        db['tests.a.A.test_1'] = '3.0'  # as a later run records it
        db.close()
        self.assertIn('0 test times added', self.tool.seed(self.root))
        self.assertEqual(3.0, self.times(['tests.a.A.test_1'])['known'][
            'tests.a.A.test_1'])

    def test_save_writes_what_the_repository_holds(self):
        self.tool.seed(self.root)
        os.remove(os.path.join(self.root, 'tests', 'test-times.json'))
        self.tool.save(self.root)
        with open(os.path.join(self.root, 'tests', 'test-times.json')) as f:
            self.assertEqual({'tests.a.A.test_1': 12.5,
                              'tests.a.A.test_2': 0.5}, json.load(f))
