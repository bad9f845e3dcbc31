"""A digest of a cloud's whole state between steps, for state caching.

Two runs of a scenario whose clouds have the same digest at the same
step have the same future: the harness is deterministic, and the digest
covers what an exact checkpoint (``harness.cloud.checkpoint``) holds:
every database row (Nova's API and cell databases, Placement's), the
clock and its schedule, the write counters, the stand-in services'
records, the report clients' caches of Placement's providers, every
compute's resource tracker, the scheduler's host states, the
hypervisors' guests, the notifications, the casts queued or failed,
the race points' recording and the injections still armed (not spent);
and the state of the run's checks (``extra``).

Ids that Nova draws at random (instance, migration and request uuids)
differ from run to run for the same course of events, so every uuid is
renamed by its first appearance in a walk in a fixed order (tables by
name, rows by rowid, dictionaries in insertion order): two states that
are the same but for a one-to-one renaming of their uuids have the same
digest. The virtual clock adds a microsecond to every time it gives
(``clock._VirtualUtcnow``), so how many times were asked for before
(a first run in a process asks more) shifts every timestamp by a few
microseconds: each timestamp is written as its whole second and its
rank among the state's timestamps, which keeps their order and every
difference of a second or more, and the clock's count of ticks is left
out. Nothing else is normalised: a digest misses a match rather than
makes one that is wrong. A state with something the walk cannot read
exactly (an object with no state to read whose ``repr`` is its address,
or more than ``BUDGET`` things) has no digest (None): it matches nothing.
"""

import datetime
import decimal
import enum
import hashlib
import re
import sqlite3
import types

from harness.cloud import checkpoint

_UUID = re.compile(
    r'[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
    r'[0-9a-fA-F]{12}')
_ADDRESS = re.compile(r' at 0x[0-9a-fA-F]+')
# Nova's reservation ids (``r-`` and eight random characters): ids too.
_RESERVATION = re.compile(r'\br-[0-9a-z]{8}\b')
# The libvirt driver writes the wall-clock time into a guest's XML;
# nothing reads it back.
_CREATION_TIME = re.compile(
    r'<nova:creationTime>[^<]*</nova:creationTime>')
_TIME = re.compile(r'\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,6})?')

#: At most this many things walked for one digest.
BUDGET = 500000

_ATOMS = (type(None), bool, int, float, decimal.Decimal, datetime.datetime,
          datetime.date, datetime.time, datetime.timedelta)


class Unreadable(Exception):
    """Something in the state the digest cannot read exactly."""


class _Walk(object):
    """Writes a canonical text of what it is given into a hash."""

    def __init__(self, skip=(), times=True):
        # Whether timestamps are state (``of``'s ``times``).
        self.keep_times = times
        # Text, and timestamps (as datetimes) to write once all are known.
        self.pieces = []
        self.times = set()
        self.names = {}
        self.seen = {}
        # Things shared with what the digest covers elsewhere (a
        # tracker's driver: its guests are the hypervisor's part).
        self.skip = {id(thing): name for name, thing in skip}
        self.left = BUDGET

    def write(self, text):
        self.pieces.append(text)

    def text(self, kind, value):
        """Write a string: uuids renamed, timestamps kept for the end."""
        value = _UUID.sub(self._rename, value)
        value = _RESERVATION.sub(self._rename, value)
        value = _CREATION_TIME.sub('<nova:creationTime/>', value)
        self.write(kind)
        for number, part in enumerate(_TIME.split(value)):
            if number:
                moment = _parse_time(_TIME.findall(value)[number - 1])
                self.times.add(moment)
                self.write(moment)
            self.write(repr(part))

    def _rename(self, match):
        key = match.group(0).lower().replace('-', '')
        return 'U%d' % self.names.setdefault(key, len(self.names))

    def walk(self, value):
        self.left -= 1
        if self.left < 0:
            raise Unreadable('more than %d things' % BUDGET)
        if isinstance(value, str):
            self.text('s', value)
        elif isinstance(value, enum.Enum):
            self.write('e%s.%s' % (type(value).__qualname__, value.name))
        elif isinstance(value, datetime.datetime):
            moment = value.replace(tzinfo=None)
            self.times.add(moment)
            self.write(moment)
        elif isinstance(value, _ATOMS):
            self.write('a%r' % (value,))
        elif isinstance(value, (bytes, bytearray, memoryview)):
            self.text('b', bytes(value).decode('latin-1'))
        elif id(value) in self.skip:
            self.write('k%s' % self.skip[id(value)])
        elif isinstance(value, tuple):
            # Immutable: no cycle can run through it alone, and which
            # equal tuples are one object says nothing of the state.
            self._composite(value)
        elif id(value) in self.seen:
            self.write('r%d' % self.seen[id(value)][0])
        else:
            # Held while the walk runs: its id is not reused meanwhile.
            self.seen[id(value)] = (len(self.seen), value)
            self._composite(value)

    def _composite(self, value):
        if isinstance(value, dict):
            self.write('{%s' % type(value).__qualname__)
            for key, item in value.items():
                self.walk(key)
                self.walk(item)
            self.write('}')
        elif isinstance(value, (list, tuple)):
            self.write('[%s' % type(value).__qualname__)
            for item in value:
                self.walk(item)
            self.write(']')
        elif isinstance(value, (set, frozenset)):
            self._set(value)
        elif isinstance(value, (types.FunctionType, types.MethodType,
                                types.BuiltinFunctionType, type,
                                types.ModuleType)):
            self.write('f%s' % getattr(value, '__qualname__',
                                       getattr(value, '__name__', '?')))
            bound = getattr(value, '__self__', None)
            if isinstance(value, types.MethodType) and bound is not None:
                self.walk(bound)
        elif _is_context(value):
            self.write('c')
            self.walk(value.to_dict())
            self.walk(getattr(value, 'cell_uuid', None))
        elif (hasattr(value, 'obj_fields')
              and hasattr(value, 'obj_attr_is_set')):
            self._versioned_object(value)
        elif hasattr(value, '__dict__') or hasattr(value, '__slots__'):
            self._object(value)
        else:
            text = repr(value)
            if _ADDRESS.search(text):
                raise Unreadable('no state to read in %s' % _ADDRESS.sub(
                    '', text))
            self.text('x%s:' % type(value).__qualname__, text)

    def _set(self, value):
        # In the order of their texts, uuids not yet named left blank:
        # whatever order ties take, equal digests still mean the same
        # state up to a renaming (the digest may only miss).
        def blank(item):
            return _UUID.sub('U', repr(item))
        self.write('<')
        for item in sorted(value, key=blank):
            self.walk(item)
        self.write('>')

    def _versioned_object(self, value):
        self.write('o%s' % type(value).__qualname__)
        for name in value.obj_fields:
            if value.obj_attr_is_set(name):
                self.write('.%s=' % name)
                self.walk(getattr(value, name))
        changed = getattr(value, '_changed_fields', None)
        if changed is not None:
            self.walk(sorted(changed))
        self.write(';')

    def _object(self, value):
        if _is_lock(value):
            # At rest no lock is held: its state says nothing.
            self.write('l%s' % type(value).__qualname__)
            return
        self.write('o%s' % type(value).__qualname__)
        state = dict(getattr(value, '__dict__', {}))
        for name in _slots(type(value)):
            if hasattr(value, name):
                state[name] = getattr(value, name)
        self.walk(state)

    def hexdigest(self):
        rank = {moment: number
                for number, moment in enumerate(sorted(self.times))}
        digest = hashlib.blake2b(digest_size=16)
        for piece in self.pieces:
            if isinstance(piece, datetime.datetime):
                piece = _moment(piece, rank) if self.keep_times else 't'
            digest.update(piece.encode('utf-8', 'surrogatepass'))
        return digest.hexdigest()


def _parse_time(text):
    return datetime.datetime.fromisoformat(text.replace('T', ' '))


def _moment(moment, rank):
    return 't%s#%d' % (moment.replace(microsecond=0).isoformat(),
                       rank[moment])


def _passage(passage):
    """A recorded race point passage, as what may decide the future.

    Not the migration it saw or the roles noted there: they annotate a
    past step (for its injections' roles and the reports) and nothing
    reads them once it is over; an injection that fired there found the
    migration, a replay that did not, none.
    """
    return (passage.point, passage.when, passage.host, passage.server,
            passage.version, passage.deferred, passage.deferred_runs,
            passage.deferred_at, passage.server_host)


def _slots(cls):
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get('__slots__', ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [name for name in names if name not in ('__dict__',
                                                   '__weakref__')]


def _is_context(value):
    return (hasattr(value, 'to_dict') and hasattr(value, 'request_id')
            and hasattr(value, 'elevated'))


def _is_lock(value):
    name = type(value).__name__.lower()
    return any(word in name for word in ('lock', 'semaphore', 'event',
                                         'condition'))


def tables(connection):
    """``(table, rows)`` of an SQLite database, tables by name.

    Rows by rowid: the order they were written in.
    """
    names = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "ORDER BY name")]
    for name in names:
        try:
            rows = connection.execute(
                'SELECT * FROM "%s" ORDER BY rowid' % name).fetchall()
        except sqlite3.OperationalError:   # a table without rowid
            rows = connection.execute('SELECT * FROM "%s"' % name).fetchall()
            rows.sort(key=repr)
        yield name, rows


def of(cloud, extra=(), times=True):
    """The digest of ``cloud`` at rest (between steps), or None.

    ``extra``: ``(name, thing)`` pairs of more state that decides the
    future (the run's checks), walked after the cloud's. ``times=False``
    leaves every timestamp out, which is NOT sound (their order and
    seconds decide what Nova's scheduler and periodics read): two states
    alike but for their times digest alike, so the count of such states
    bounds what any treatment of time could let state caching match
    (``benchmarks/state_spread.py``).
    """
    shared = []
    for host, service in sorted(cloud.computes.items()):
        shared.extend(
            ('%s.%s' % (host, name), thing)
            for name, thing in checkpoint._shared(service.manager.rt))
    walk = _Walk(shared, times=times)
    try:
        for key, engine in cloud.env.engines:
            walk.write('D%s' % (key,))
            with checkpoint._raw(engine) as live:
                for name, rows in tables(live):
                    walk.write('T%s' % name)
                    walk.walk(rows)
        walk.write('C')
        now, _ticks, due, fired = cloud.clock.state()
        walk.walk((now, due, fired))
        walk.walk((cloud.activity.saves, cloud.activity.placement_writes))
        for stand_in in cloud.stand_ins:
            walk.write('S%s' % type(stand_in).__qualname__)
            walk.walk({name: value for name, value in vars(stand_in).items()
                       if name not in checkpoint._FIXTURE_WIRING})
        for client in checkpoint._report_clients(cloud):
            walk.write('P')
            walk.walk(client._provider_tree)
            # Wall-clock times (a kept cloud's reset stamps them): what
            # they decide, a refresh after minutes of wall time
            # (``[compute]resource_provider_association_refresh``), no
            # replay lasts; which providers have one is state.
            walk.walk(list(client._association_refresh_time))
        for host, service in sorted(cloud.computes.items()):
            walk.write('H%s' % host)
            tracker = service.manager.rt
            walk.walk({name: value for name, value in vars(tracker).items()
                       if id(value) not in walk.skip})
            walk.walk(checkpoint._hypervisor_state(cloud, host, service)[2:])
        # The scheduler's view of the hosts: its host states (usage it
        # consumed in memory, and when it last read each compute node)
        # and what the computes told it of their instances.
        host_manager = cloud.scheduler.manager.host_manager
        walk.write('M')
        walk.walk(getattr(host_manager, 'host_state_map', None))
        walk.walk(getattr(host_manager, '_instance_info', None))
        walk.write('N')
        walk.walk(cloud.notifier.fake_notifier.notifications)
        walk.walk(cloud.notifier.fake_versioned_notifier
                  .versioned_notifications)
        walk.write('Q')
        walk.walk((cloud.casts.failures, cloud.casts.queued))
        walk.walk(sorted(cloud.stopped_computes()))
        walk.write('R')
        recording, injections, failures, record, injecting, deferred = (
            cloud.race.state())
        # An injection spent (it fired as many times as it was to) never
        # fires again: what it fired at is the report's, not the future's.
        walk.walk(([_passage(passage) for passage in recording],
                   [injection for injection in injections
                    if injection.remaining != 0],
                   failures, record, injecting, deferred))
        for name, thing in extra:
            walk.write('X%s' % name)
            walk.walk(thing)
    except Unreadable:
        return None
    return walk.hexdigest()
