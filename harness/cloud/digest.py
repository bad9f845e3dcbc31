"""A digest of a cloud's whole state between steps, for state caching.

Two runs of a scenario whose clouds have the same digest at the same
step have the same future: the harness is deterministic, and the digest
covers what an exact checkpoint (``harness.cloud.checkpoint``) holds:
every database row (Nova's API and cell databases, Placement's), the
clock and its schedule, the stand-in services' records, the report
clients' caches of Placement's providers, every compute's resource
tracker, the scheduler's host states, the hypervisors' guests, the
notifications, the casts queued or failed and the injections still
armed (not spent); and the state of the run's checks (``extra``).

It leaves out what the checkpoint holds but nothing reads to decide
what happens next, each where it is walked, with the code that shows
it: the harness's write counters and the race points passed in steps
already over (the harness compares them only inside one step), and of
each tracker's copy of the compute node it last saved
(``old_resources``), what Nova's comparison of it leaves out (its
changed fields and ``updated_at``). ``fields`` and ``diff`` show what
sets two states apart (``benchmarks/state_spread.py --diff``).

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

import contextlib
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
# A dict key written as an attribute in a traced path.
_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_:-]*$')
_TIME = re.compile(r'\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,6})?')

#: At most this many things walked for one digest.
BUDGET = 500000

_ATOMS = (type(None), bool, int, float, decimal.Decimal, datetime.datetime,
          datetime.date, datetime.time, datetime.timedelta)


class Unreadable(Exception):
    """Something in the state the digest cannot read exactly."""


class _Walk(object):
    """Writes a canonical text of what it is given into a hash.

    With ``trace``, it also notes where in the state each piece was
    written (``path``: the sections, keys, indexes, attributes and
    columns walked down to it), for ``fields``; the text is the same.
    """

    def __init__(self, skip=(), times=True, trace=False):
        # Whether timestamps are state (``of``'s ``times``).
        self.keep_times = times
        # Text, and timestamps (as datetimes) to write once all are known.
        self.pieces = []
        # With ``trace``: each piece's path (a tuple), and the path now.
        self.paths = [] if trace else None
        self.path = []
        self.times = set()
        self.names = {}
        self.seen = {}
        # Things shared with what the digest covers elsewhere (a
        # tracker's driver: its guests are the hypervisor's part).
        self.skip = {id(thing): name for name, thing in skip}
        self.left = BUDGET

    def write(self, text):
        self.pieces.append(text)
        if self.paths is not None:
            self.paths.append(tuple(self.path))

    @contextlib.contextmanager
    def at(self, label):
        """Pieces written inside are ``label``'s (traced walks only)."""
        if self.paths is None:
            yield
            return
        self.path.append(label)
        try:
            yield
        finally:
            self.path.pop()

    def _walk_at(self, label, value):
        # ``at`` inlined: the untraced walk (the explorer's) pays one test.
        if self.paths is None:
            self.walk(value)
        else:
            self.path.append(label)
            try:
                self.walk(value)
            finally:
                self.path.pop()

    def _label(self, key):
        """A dict key as a path's part: uuids by the names given them."""
        text = key if isinstance(key, str) else repr(key)
        text = _UUID.sub(lambda match: 'U%s' % self.names.get(
            match.group(0).lower().replace('-', ''), '?'), text)
        return '.' + text if _NAME.match(text) else '[%s]' % text

    def rows(self, rows, columns):
        """Walk a table's ``rows`` as ``walk(rows)``: the same text.

        Traced, each value is labelled with its row's number and its
        column's name.
        """
        if self.paths is None:
            self.walk(rows)
            return
        self.left -= 1
        self.seen[id(rows)] = (len(self.seen), rows)
        self.write('[%s' % type(rows).__qualname__)
        for number, row in enumerate(rows):
            self.left -= 1
            with self.at('[%d]' % number):
                self.write('[%s' % type(row).__qualname__)
                for column, value in zip(columns, row):
                    self._walk_at('.' + column, value)
                self.write(']')
        self.write(']')
        if self.left < 0:
            raise Unreadable('more than %d things' % BUDGET)

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
                if self.paths is None:
                    self.walk(item)
                else:
                    self._walk_at(self._label(key), item)
            self.write('}')
        elif isinstance(value, (list, tuple)):
            self.write('[%s' % type(value).__qualname__)
            for number, item in enumerate(value):
                self._walk_at('[%d]' % number, item)
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
                self._walk_at('.__self__', bound)
        elif _is_context(value):
            self.write('c')
            self._walk_at('.to_dict()', value.to_dict())
            self._walk_at('.cell_uuid', getattr(value, 'cell_uuid', None))
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
        for number, item in enumerate(sorted(value, key=blank)):
            self._walk_at('<%d>' % number, item)
        self.write('>')

    def _versioned_object(self, value):
        self.write('o%s' % type(value).__qualname__)
        for name in value.obj_fields:
            if value.obj_attr_is_set(name):
                with self.at('.' + name):
                    self.write('.%s=' % name)
                    self.walk(getattr(value, name))
        changed = getattr(value, '_changed_fields', None)
        if changed is not None:
            self._walk_at('._changed_fields', sorted(changed))
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

    def texts(self):
        """The pieces as they are hashed: timestamps by second and rank."""
        rank = {moment: number
                for number, moment in enumerate(sorted(self.times))}
        for piece in self.pieces:
            if isinstance(piece, datetime.datetime):
                piece = _moment(piece, rank) if self.keep_times else 't'
            yield piece

    def hexdigest(self):
        digest = hashlib.blake2b(digest_size=16)
        for piece in self.texts():
            digest.update(piece.encode('utf-8', 'surrogatepass'))
        return digest.hexdigest()

    def fields(self):
        """``{path: text}`` of a traced walk: what was hashed, by where.

        A path is its parts joined (``_path``); its text, the pieces
        written there and not deeper, in order.
        """
        found = {}
        for path, piece in zip(self.paths, self.texts()):
            key = _path(path)
            found[key] = found.get(key, '') + piece
        return found


def _path(parts):
    """A traced path's parts as text: sections by ``/``, the rest joined."""
    text = ''
    for part in parts:
        text += part if part[:1] in '.[<' else ('/' if text else '') + part
    return text


def _parse_time(text):
    return datetime.datetime.fromisoformat(text.replace('T', ' '))


def _moment(moment, rank):
    return 't%s#%d' % (moment.replace(microsecond=0).isoformat(),
                       rank[moment])


def _tracker_state(tracker, skip=()):
    """What the digest walks of a resource tracker: its own attributes.

    But those it shares (``skip``: ids of things walked elsewhere), and
    its ``old_resources`` as Nova reads them (``_as_compared``).
    """
    state = {name: value for name, value in vars(tracker).items()
             if id(value) not in skip}
    if 'old_resources' in state:
        state['old_resources'] = {
            node: _as_compared(compute_node)
            for node, compute_node in tracker.old_resources.items()}
    return state


# The keys of a primitive that ``nova.objects.base.obj_equal_prims``
# leaves out at every level, as ``ResourceTracker._resource_change``
# calls it (``ignore=['updated_at']``).
_NOT_COMPARED = ('nova_object.changes', 'updated_at')


def _as_compared(compute_node):
    """A tracker's last saved compute node, as the tracker compares it.

    ``ResourceTracker.old_resources`` (nova/compute/resource_tracker.py)
    is read in one place: ``_resource_change`` compares it with the
    compute node by ``obj_base.obj_equal_prims(compute_node, old,
    ['updated_at'])``, which compares their primitives without the
    changed fields' list and ``updated_at`` at any depth, to decide
    whether ``_update`` saves the node (``_update`` otherwise only puts
    it back if that save fails; ``remove_node`` drops it). So the node's
    changed fields and its ``updated_at`` decide nothing, and two
    trackers whose copies differ only there (a periodic's save leaves
    them so) act alike.
    """
    return _stripped(compute_node.obj_to_primitive())


def _stripped(primitive):
    if isinstance(primitive, dict):
        return {key: _stripped(value) for key, value in primitive.items()
                if key not in _NOT_COMPARED}
    if isinstance(primitive, list):
        return [_stripped(value) for value in primitive]
    return primitive


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
    """``(table, columns, rows)`` of an SQLite database, tables by name.

    Rows by rowid: the order they were written in.
    """
    names = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "ORDER BY name")]
    for name in names:
        try:
            cursor = connection.execute(
                'SELECT * FROM "%s" ORDER BY rowid' % name)
            rows = cursor.fetchall()
        except sqlite3.OperationalError:   # a table without rowid
            cursor = connection.execute('SELECT * FROM "%s"' % name)
            rows = cursor.fetchall()
            rows.sort(key=repr)
        yield name, [column[0] for column in cursor.description], rows


def _database_kind(names):
    """Which of the cloud's databases has the tables ``names`` (a path's)."""
    names = set(names)
    # A cell database keeps Nova's old resource_providers table too.
    for table, kind in (('cell_mappings', 'api'), ('instances', 'cell'),
                        ('resource_providers', 'placement')):
        if table in names:
            return kind
    return 'other'


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
    walk = _cloud_walk(cloud, times)
    try:
        _walk_cloud(walk, cloud, extra)
    except Unreadable:
        return None
    return walk.hexdigest()


def fields(cloud, extra=(), times=True):
    """What ``of`` digests, by where it is: ``{path: text}``, or None.

    The text ``of`` hashes, cut by where in the state each piece was
    written (``diff`` two of them to see what sets two states apart):
    paths start with their section (``dbN-KIND/TABLE``, N the
    database's number, KIND ``api``, ``cell`` or ``placement``, ``clock``,
    ``activity``, ``stand-in:CLASS``, ``report-client:N``,
    ``tracker:HOST``, ``hypervisor:HOST``, ``scheduler``,
    ``notifications``, ``casts``, ``race``, ``extra:NAME``), then row
    numbers and columns, keys, indexes and attributes. Uuids are named
    as ``of`` names them (``U`` and the rank of their first appearance
    in the whole walk), timestamps too (their second and rank).
    """
    walk = _cloud_walk(cloud, times, trace=True)
    try:
        _walk_cloud(walk, cloud, extra)
    except Unreadable:
        return None
    return walk.fields()


def diff(before, after):
    """``[(path, text before, text after)]`` where two ``fields`` differ.

    In ``before``'s order, then paths only ``after`` has; a path one of
    them lacks has None for its text there.
    """
    found = [(path, text, after.get(path)) for path, text in before.items()
             if after.get(path) != text]
    found.extend((path, None, text) for path, text in after.items()
                 if path not in before)
    return found


def _cloud_walk(cloud, times, trace=False):
    shared = []
    for host, service in sorted(cloud.computes.items()):
        shared.extend(
            ('%s.%s' % (host, name), thing)
            for name, thing in checkpoint._shared(service.manager.rt))
    return _Walk(shared, times=times, trace=trace)


def _walk_cloud(walk, cloud, extra):
    """Walk what decides ``cloud``'s future (``of``), section by section."""
    for number, (key, engine) in enumerate(cloud.env.engines):
        walk.write('D%s' % (key,))
        with checkpoint._raw(engine) as live:
            found = list(tables(live))
            section = 'db%d-%s' % (number, _database_kind(
                name for name, _columns, _rows in found))
            for name, columns, rows in found:
                with walk.at('%s/%s' % (section, name)):
                    walk.write('T%s' % name)
                    walk.rows(rows, columns)
    with walk.at('clock'):
        walk.write('C')
        now, _ticks, due, fired = cloud.clock.state()
        walk.walk((now, due, fired))
    # Not the harness's write counters (``Activity.saves`` and
    # ``placement_writes``): Nova never reads them, and the harness reads
    # them only as a difference inside one step: the runner's ``operate``
    # (whether a step that only arms wrote), and the ``version`` of the
    # points a step passes, compared only with other points of the same
    # step (``explorer.recorded_points`` keys them by step,
    # ``known.state_of`` takes one step's). Their count at a step's end
    # is an offset every later value carries alike.
    for stand_in in cloud.stand_ins:
        name = type(stand_in).__qualname__
        with walk.at('stand-in:%s' % name):
            walk.write('S%s' % name)
            walk.walk({name: value for name, value in vars(stand_in).items()
                       if name not in checkpoint._FIXTURE_WIRING})
    for number, client in enumerate(checkpoint._report_clients(cloud)):
        with walk.at('report-client:%d' % number):
            walk.write('P')
            walk._walk_at('._provider_tree', client._provider_tree)
            # Wall-clock times (a kept cloud's reset stamps them): what
            # they decide, a refresh after minutes of wall time
            # (``[compute]resource_provider_association_refresh``), no
            # replay lasts; which providers have one is state.
            walk._walk_at('._association_refresh_time',
                          list(client._association_refresh_time))
    for host, service in sorted(cloud.computes.items()):
        with walk.at('tracker:%s' % host):
            walk.write('H%s' % host)
            walk.walk(_tracker_state(service.manager.rt, walk.skip))
        with walk.at('hypervisor:%s' % host):
            walk.walk(checkpoint._hypervisor_state(cloud, host, service)[2:])
    # The scheduler's view of the hosts: its host states (usage it
    # consumed in memory, and when it last read each compute node)
    # and what the computes told it of their instances.
    host_manager = cloud.scheduler.manager.host_manager
    with walk.at('scheduler'):
        walk.write('M')
        walk._walk_at('.host_state_map',
                      getattr(host_manager, 'host_state_map', None))
        walk._walk_at('._instance_info',
                      getattr(host_manager, '_instance_info', None))
    with walk.at('notifications'):
        walk.write('N')
        walk._walk_at('.legacy', cloud.notifier.fake_notifier.notifications)
        walk._walk_at('.versioned', cloud.notifier.fake_versioned_notifier
                      .versioned_notifications)
    with walk.at('casts'):
        walk.write('Q')
        walk.walk((cloud.casts.failures, cloud.casts.queued))
        walk._walk_at('.stopped', sorted(cloud.stopped_computes()))
    with walk.at('race'):
        walk.write('R')
        _recording, injections, failures, record, injecting, deferred = (
            cloud.race.state())
        # Not the points passed so far (``recording``): nothing reads a
        # passage once its step is over. The runner takes a step's own
        # (``Run.record``: from ``_passed_from``, the count when the step
        # began), observers and the branching get each as it is passed
        # (``point_passed``, ``on_passage``); what a passage records of an
        # injected periodic (``deferred``, ``deferred_runs``,
        # ``deferred_at``) and the version it was passed at
        # (``Activity.version``) have no reader after that.
        # An injection spent (it fired as many times as it was to) never
        # fires again: what it fired at is the report's, not the future's.
        walk.walk(([injection for injection in injections
                    if injection.remaining != 0],
                   failures, record, injecting, deferred))
    for name, thing in extra:
        with walk.at('extra:%s' % name):
            walk.write('X%s' % name)
            walk.walk(thing)
