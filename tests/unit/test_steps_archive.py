"""``archive_deleted_rows``: what the loader takes and refuses, and how the
step holds Nova's answer to what the scenario says it moves.

No Nova runs here: the cloud's ``archive_deleted_rows`` is a stand-in
that answers as Nova's ``db.main.api.archive_deleted_rows`` does (table
name -> rows moved, the tables that moved none left out).
"""

from harness.core import errors
from harness.core import steps
from harness import testing

from tests.unit import refusals


class _Cloud(object):
    """Answers what Nova would have archived."""

    def __init__(self, archived):
        self.archived = archived
        self.max_rows = []

    def archive_deleted_rows(self, max_rows):
        self.max_rows.append(max_rows)
        return dict(self.archived)


class TestArchiveDeletedRows(refusals.StepLoaderCase):

    PATH = 'archive.yaml'
    HEAD = refusals.fake_hosts_head('archive', 'h1')

    def test_it_loads_with_or_without_counts(self):
        loaded = self.load(
            '  - archive_deleted_rows: {}\n'
            '  - archive_deleted_rows:\n'
            '  - archive_deleted_rows: {archives: {compute_nodes: 0, '
            'instances: 2}}\n')
        self.assertEqual(
            [{'archives': {}}, {'archives': {}},
             {'archives': {'compute_nodes': 0, 'instances': 2}}],
            [step.args for step in loaded.steps])
        self.assertEqual('archive deleted rows', loaded.steps[0].label)

    def test_bad_counts_are_refused_naming_the_field(self):
        self.refused('  - archive_deleted_rows: {archives: {compute_nodes: '
                     '-1}}\n', 'archive_deleted_rows.archives.compute_nodes',
                     'at least 0')
        self.refused('  - archive_deleted_rows: {archives: [instances]}\n',
                     'archive_deleted_rows.archives', 'expected a mapping')
        self.refused('  - archive_deleted_rows: {archives: {"no table": '
                     '1}}\n', 'archive_deleted_rows.archives',
                     'expected a table name')
        self.refused('  - archive_deleted_rows: {max_rows: 5}\n',
                     'archive_deleted_rows.max_rows', 'unknown field')

    def test_the_tables_named_must_move_as_many_rows(self):
        kind = steps.get('archive_deleted_rows')
        cloud = _Cloud({'instances': 1, 'instance_extra': 1})
        kind.run(cloud, {'archives': {'instances': 1, 'compute_nodes': 0}})
        self.assertEqual([1000], cloud.max_rows)
        # A table not named is not checked; one named that moved none
        # counts 0.
        kind.run(cloud, {'archives': {}})
        error = self.assertRaises(
            errors.HarnessError, kind.run, _Cloud({'compute_nodes': 1}),
            {'archives': {'compute_nodes': 0, 'instances': 1}})
        self.assertEqual(
            'archive_deleted_rows moved compute_nodes: 1, not 0; '
            'instances: 0, not 1 (it archived compute_nodes: 1)',
            str(error))
        error = self.assertRaises(
            errors.HarnessError, kind.run, _Cloud({}),
            {'archives': {'instances': 1}})
        self.assertIn('(it archived nothing)', str(error))


class TestArchiveStepIsNoOperation(testing.TestCase):

    def test_it_only_acts_on_the_database(self):
        kind = steps.get('archive_deleted_rows')
        self.assertFalse(kind.arms)
        self.assertFalse(kind.operation)
        self.assertEqual({}, kind.pending({'archives': {}}))
