"""The databases of a cloud: in-memory SQLite, counted and watched.

Nova's API, cell0 and cell1 databases and Placement's, each an in-memory
SQLite engine kept from one cloud to the next (``ReusedEngines``), in
native threading too (``InMemoryDatabases``). Every statement that may
write is counted (``database_writes``: readers skip reading again while
nothing was written), and under native threading every use of a
connection is watched (``shared_uses``).
"""

import collections
import importlib
import threading
import traceback

import fixtures
from oslo_db.sqlalchemy import engines
from oslo_utils.fixture import uuidsentinel
import sqlalchemy

from nova import context
from nova import objects
from nova.tests import fixtures as nova_fixtures

from harness.cloud import mode
from harness.core import frames

CELL0_NAME = 'cell0'
CELL1_NAME = 'cell1'


# In-memory SQLite engines not lent to a cloud right now, by the arguments
# they were made with; kept for the life of the process.
_FREE_ENGINES = collections.defaultdict(list)


# Statements other than reads run on any reused engine, ever; and how many
# databases of the running cloud nobody counts (a process-wide tally, kept
# in one dict that lives as long as the engines).
_WRITES = {'count': 0, 'uncounted': 0}


def database_writes():
    """A number that changes whenever a cloud's databases may have changed.

    None when some database of the running cloud is not counted (not an
    in-memory SQLite engine made through ``ReusedEngines``): then nobody
    can tell, and readers must read again.
    """
    if _WRITES['uncounted']:
        return None
    return _WRITES['count']


# Statements that change no row; anything else counts as a write.
_READS = ('SELECT', 'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE')


def count_write():
    """Count a change made to a database other than by a statement."""
    _WRITES['count'] += 1


# Under native threading: the threads that have each in-memory database's
# one connection checked out now, in the order they took it, and every
# time a thread ran a statement on it while one that took it later still
# had it (harness.cloud.activity keeps Nova's threads from running at
# once; this proves it where it matters, at the database). A thread that
# takes the connection while an earlier one has it is no fault: the
# earlier one waits for it (a spawn, a future), as a greenthread does
# under eventlet, where all of them share the one connection too.
_HOLDERS = collections.defaultdict(list)
_HOLDERS_LOCK = threading.Lock()
_SHARED_USES = []


def _checked_out(dbapi_connection, record, proxy):
    with _HOLDERS_LOCK:
        _HOLDERS[id(dbapi_connection)].append(threading.current_thread())


def _checked_in(dbapi_connection, record):
    me = threading.current_thread()
    with _HOLDERS_LOCK:
        holders = _HOLDERS.get(id(dbapi_connection), [])
        for position in range(len(holders) - 1, -1, -1):
            if holders[position] is me:
                del holders[position]
                break


def _executing(conn, cursor, statement, parameters, context, executemany):
    me = threading.current_thread()
    with _HOLDERS_LOCK:
        holders = _HOLDERS.get(id(conn.connection.dbapi_connection))
        if not holders or holders[-1] is me:
            return
        later = holders[-1]
        here = ''.join(traceback.format_stack(limit=25))
        there = ''.join(traceback.format_stack(
            frames.current_frames().get(later.ident), limit=25))
        _SHARED_USES.append(
            'thread %s ran a statement while thread %s, which took the '
            'connection after it, still had it:\n%s\nand %s meanwhile:'
            '\n%s' % (me.name, later.name, here, later.name, there))


def shared_uses():
    """Each time two threads used one database at once, since last asked.

    Threading mode (the engines' pools are watched from their first use);
    empty under eventlet, whose greenthreads share one OS thread.
    """
    with _HOLDERS_LOCK:
        found, _SHARED_USES[:] = list(_SHARED_USES), []
    return found


def _count_write(conn, cursor, statement, parameters, context, executemany):
    if not statement.lstrip()[:9].upper().startswith(_READS):
        _WRITES['count'] += 1


class ReusedEngines(fixtures.Fixture):
    """In-memory SQLite engines kept from one cloud to the next.

    SQLAlchemy caches compiled SQL per engine, and every cloud made new
    engines for its five databases (API, cell0, cell1, Placement), so every
    test compiled each statement anew: about a sixth of a scenario's CPU.
    An engine lent again is disposed first, which for an in-memory database
    means a new, empty database: only the compiled-SQL cache carries over,
    and no rows. File and server databases are made as before.
    """

    def _setUp(self):
        # (key, engine) of each database of the cloud, in the order made.
        self.engines = lent = []
        real_create_engine = engines.create_engine

        def create_engine(sql_connection, *args, **kwargs):
            if args or str(sql_connection) not in ('sqlite://',
                                                   'sqlite:///:memory:'):
                _WRITES['uncounted'] += 1
                self.addCleanup(_uncount)
                return real_create_engine(sql_connection, *args, **kwargs)
            key = (str(sql_connection),
                   tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
            if _FREE_ENGINES[key]:
                engine = _FREE_ENGINES[key].pop()
                engine.dispose()
            else:
                engine = real_create_engine(sql_connection, **kwargs)
                sqlalchemy.event.listen(
                    engine, 'after_cursor_execute', _count_write)
                if mode.THREADING:
                    sqlalchemy.event.listen(engine.pool, 'checkout',
                                            _checked_out)
                    sqlalchemy.event.listen(engine.pool, 'checkin',
                                            _checked_in)
                    sqlalchemy.event.listen(
                        engine, 'before_cursor_execute', _executing)
            # A fresh database is a change too.
            _WRITES['count'] += 1
            lent.append((key, engine))
            return engine

        def _uncount():
            _WRITES['uncounted'] -= 1

        def give_back():
            while lent:
                key, engine = lent.pop()
                engine.dispose()
                _FREE_ENGINES[key].append(engine)

        self.addCleanup(give_back)
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_db.sqlalchemy.engines.create_engine', create_engine))


class InMemoryDatabases(fixtures.Fixture):
    """In native threading too, every database is an in-memory SQLite one.

    Nova's fixtures give each database a SQLite file with WAL in threading
    mode (``nova.tests.fixtures.nova._use_file_backed_sqlite_with_wal``,
    used by its Database, CellDatabases and PlacementFixture), because
    its tests' threads run at once and one shared in-memory connection
    would mix their transactions. Here Nova's threads never run at once:
    one runs at a time, switching only where one waits for another
    (``harness.cloud.activity``), as greenthreads switch under eventlet,
    which shares the one in-memory connection the same way. So the
    databases stay in memory, as in eventlet mode: a checkpoint copies
    them exactly with SQLite's backup API, and no statement waits for a
    disk. Nova's ``DatabaseWriteLock`` (a writer transaction at a time per
    database) stays in place, as Nova's threading-mode fixture has it;
    ``ExclusiveConnection`` proves no two threads use a connection at once.
    """

    def _setUp(self):
        def in_memory(name):
            return 'sqlite://', None

        # By the modules themselves: ``nova.tests.fixtures.nova`` as a
        # dotted name finds the ``nova`` package (the fixtures package's
        # star import rebinds that name).
        for module in ('nova.tests.fixtures.nova',
                       'nova.tests.functional.fixtures'):
            self.useFixture(fixtures.MockPatchObject(
                importlib.import_module(module),
                '_use_file_backed_sqlite_with_wal', in_memory))


def targeted_copy(ctxt, cell_mapping):
    """A copy of ``ctxt`` targeted at ``cell_mapping``, to read that cell.

    What Nova's own ``nova.context.target_cell`` yields (a sanitized copy,
    then ``set_target_cell``), without what Nova's ``CellDatabases``
    fixture wraps around it: the fixture switches the process's one
    "last targeted cell" under a reader/writer lock, for Nova code that
    reads without targeting its context (compute code), and holds the
    read lock for as long as the block runs. Nova's periodics run inside
    such a block; one that waits for a greenthread it spawned (whose
    untargeted read needs the read lock too) deadlocked against a
    harness read of another cell waiting for the write lock, since a
    waiting writer keeps new readers out. The harness's reads always
    pass the context they target, and a targeted context's database is
    its own (the fixture's ``_wrap_get_context_manager`` takes no lock
    for it), so they need neither the switch nor the lock; nor do they
    change which cell Nova's untargeted code reads. Nova's own work
    (periodics, services starting) stays on ``context.target_cell``.
    """
    cctxt = context.RequestContext.from_dict(ctxt.to_dict())
    context.set_target_cell(cctxt, cell_mapping)
    return cctxt


class CellsDatabase(fixtures.Fixture):
    """The API database plus cell0 and cell1, with their mappings."""

    def _setUp(self):
        self.useFixture(nova_fixtures.Database(database='api'))
        cell_dbs = nova_fixtures.CellDatabases()
        ctxt = context.get_context()
        self.cell_mappings = {}
        for name, uuid in ((CELL0_NAME, objects.CellMapping.CELL0_UUID),
                           (CELL1_NAME, uuidsentinel.cell1)):
            mapping = objects.CellMapping(
                context=ctxt, uuid=uuid, name=name,
                transport_url='fake://nowhere/', database_connection=uuid)
            mapping.create()
            self.cell_mappings[name] = mapping
            cell_dbs.add_cell_database(uuid, default=(name == CELL1_NAME))
        self.useFixture(cell_dbs)
        self.useFixture(nova_fixtures.DefaultFlavorsFixture())
