"""``archive_deleted_rows: {archives?}``: what ``nova-manage db
archive_deleted_rows`` does, on the cell's database.

Nova moves the soft-deleted rows of its tables (deleted servers and what
hangs off them, deleted compute node records, ...) to their shadow
tables (``nova.db.main.api.archive_deleted_rows``, up to ``max_rows``
rows, 1000 as ``nova-manage`` does by default). ``archives`` says how
many rows it must move from each table named (``{compute_nodes: 0}``:
none of that table; only the tables named are checked): another count
fails the step, naming the table, what it archived and what was to be.
A compute node record moved away no longer shows in ``compute_nodes``.
"""

from harness.core import errors
from harness.core.steps import base

#: The rows one run moves at most (``nova-manage``'s ``--max_rows``).
MAX_ROWS = 1000


class ArchiveDeletedRows(base.StepKind):
    name = 'archive_deleted_rows'
    summary = ('Move the soft-deleted rows of the cell database to its '
               'shadow tables, as ``nova-manage db archive_deleted_rows`` '
               'does.')
    fields = {
        'archives': ('{table: whole number}', 'how many rows it must move '
                     'from each table named (only those are checked)'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- delete: vm1
- archive_deleted_rows: {archives: {instances: 1, compute_nodes: 0}}
'''

    def parse(self, check, value, scenario, state, error):
        value = {} if value is None else value
        check.mapping(value, 'the step')
        check.keys(value, tuple(self.fields))
        archives = check.mapping(value.get('archives', {}), 'archives')
        for table, count in archives.items():
            if not isinstance(table, str) or not table.isidentifier():
                check.fail('archives', 'expected a table name, got %s'
                           % errors.show(table))
            check.integer(count, 'archives.%s' % table, minimum=0)
        return {'archives': dict(archives)}

    def label(self, args):
        return 'archive deleted rows'

    def run(self, cloud, args):
        archived = cloud.archive_deleted_rows(max_rows=MAX_ROWS)
        wrong = ['%s: %d, not %d' % (table, archived.get(table, 0), count)
                 for table, count in sorted(args['archives'].items())
                 if archived.get(table, 0) != count]
        if wrong:
            raise errors.HarnessError(
                'archive_deleted_rows moved %s (it archived %s)' % (
                    '; '.join(wrong), ', '.join(
                        '%s: %d' % item for item in sorted(archived.items()))
                    or 'nothing'))


KIND = ArchiveDeletedRows()
