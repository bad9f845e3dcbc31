"""``LeakCheck``: fail a test that leaves something behind.

A test must leave the process as it found it, or the next test runs in a
different world and a verdict depends on the order tests run in. The
fixture takes a cheap inventory when it is set up and compares it when it
is cleaned up; anything new fails the test with one message naming each
thing left behind:

- **CONF**: every option registered on oslo.config's global ``CONF``
  (``nova.conf.CONF``), with its override and default, every group, and
  the parsed arguments and config files;
- **monkeypatches**: the attributes of the modules the harness and Nova's
  fixtures patch (``WATCHED_MODULES``, every ``harness`` and ``tests``
  module), and of the classes those modules hold, compared by identity;
  ``os.environ`` too;
- **threads and greenthreads**: threads from ``threading.enumerate()``
  (but idle workers of thread pools: ``_idle_worker``), OS threads from
  ``sys._current_frames()``, and greenlets: a greenlet trace
  function notes every greenlet switched to while the test runs, and the
  eventlet hub's timers name those spawned but not yet started; any such
  greenlet still alive at the end was left behind;
- **sqlite files**: new ``*.sqlite``, ``*.sqlite3`` and ``*.db`` files (and
  their journals) in the working directory and the temp dir;
- **temp dirs and files**: new entries in ``tempfile.gettempdir()``.

The check runs as the test's last clean-up (``harness.testing.TestCase``
sets it up first), so a leak fails that test, inside its lifetime, and
stestr reports it against that test. What it can safely undo it undoes
after reporting (attributes, CONF overrides and defaults, the environment,
the working directory, temp entries), so one leaky test does not spill
into the next. Threads and greenthreads are reported, not stopped:
stopping one that turns out to be the process's own (a pool made on first
use) would hang later tests; each is reported once.

eventlet's hub and its thread pool (``eventlet.tpool``) are the process's,
started on first use and kept: they are never counted.

A cloud kept between tests (``harness.cloud.reuse.shared_pool``) is the
process's too while it is kept: what it patched, registered, started and
made is not the test's. The pool changes what it keeps only inside
``pool_changing()``, which takes an inventory just before and just after
the change and moves the running check's starting inventory by what
changed in between (and by nothing else): the test is judged by what it
did on either side of the change, never by what the pool did.

The temp dir is private to the process: on first use the fixture points
``tempfile.tempdir`` (and ``TMPDIR`` for child processes) at a fresh
directory, removed at exit. The machine's ``/tmp`` is shared with other
processes (another stestr worker among them), so a new entry there could
not be told apart from someone else's.

Threads and greenthreads that end on their own get a short grace period
(``GRACE``) before they count as left behind; a clean test pays nothing
for it.
"""

import atexit
import contextlib
import operator
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref

import fixtures
import greenlet

from harness.core import frames as thread_frames
import harness.testing.leak_threads  # noqa: F401 (read below)

# The threads part of the check (its own module: this one's length),
# by the module itself: ``harness.testing`` may be half imported here.
leak_threads = sys.modules['harness.testing.leak_threads']
_show = leak_threads.show
_describe_thread = leak_threads.describe_thread
_describe_os_thread = leak_threads.describe_os_thread
_describe_greenlet = leak_threads.describe_greenlet

# Modules whose attributes (and whose classes' attributes) are compared
# before and after each test: what harness/ patches (MonkeyPatch, setattr,
# NovaGlobals' resets), what Nova's fixtures used by harness.nova_env patch,
# and the standard library and oslo modules those reach. Only modules
# already imported are looked at; the check imports nothing.
WATCHED_MODULES = (
    # patched by harness/ (activity, clock, cloud, libvirt, nova_env,
    # offline, perhost, race, and each bug's fixture in harness/bugs/lp*.py)
    'nova.api.openstack.wsgi_app',
    'nova.compute.api',
    'nova.compute.manager',
    'nova.compute.resource_tracker',
    'nova.compute.rpcapi',
    'nova.conductor.tasks.base',
    'nova.context',
    'nova.crypto',
    'nova.limit.utils',
    'nova.objects.base',
    'nova.objects.instance',
    'nova.objects.migration',
    'nova.pci.request',
    'nova.quota',
    'nova.scheduler.client.report',
    'nova.scheduler.utils',
    'nova.service_auth',
    'nova.tests.fixtures.libvirt',
    'nova.thread_pool_factory',
    'nova.virt.driver',
    'nova.virt.hardware',
    'nova.virt.images',
    'nova.virt.libvirt.driver',
    'nova.virt.libvirt.host',
    'nova.virt.libvirt.utils',
    'nova.virt.node',
    'oslo_messaging._drivers.impl_fake',
    'oslo_service.periodic_task',
    # patched by Nova's fixtures (nova.tests.fixtures, PlacementFixture)
    'nova.api.auth',
    'nova.availability_zones',
    'nova.compute.utils',
    'nova.conductor',
    'nova.conf',
    'nova.db.api.api',
    'nova.db.main.api',
    'nova.image.glance',
    'nova.network.neutron',
    'nova.objects',
    'nova.objects.service',
    'nova.rpc',
    'nova.utils',
    'nova.volume.cinder',
    'keystoneauth1.session',
    'oslo_db.sqlalchemy.enginefacade',
    'oslo_log.log',
    'oslo_messaging',
    'oslo_privsep.daemon',
    'oslo_utils.timeutils',
    # the standard library: network guard, poisons, clocks, threads
    'builtins',
    'glob',
    'os',
    'os.path',
    'socket',
    'subprocess',
    'tempfile',
    'threading',
    'time',
)
#: Every loaded module under these packages is watched as well.
WATCHED_PACKAGES = ('harness', 'tests')

#: Seconds a thread or greenthread seen at the end may take to finish
#: before it counts as left behind.
GRACE = 1.0

SQLITE_SUFFIXES = ('.sqlite', '.sqlite3', '.db', '.sqlite-journal',
                   '.sqlite3-journal', '.db-journal', '.sqlite-wal',
                   '.db-wal', '.sqlite-shm', '.db-shm')

# ---------------------------------------------------------------------------
# ALLOWLIST -- leaks that do not fail a test. Keep it empty: fix a leak
# where it happens. An entry names a leak we cannot fix and says why; an
# allowed leak is still undone like any other. Keys are
# ('monkeypatch', 'module.attr'), ('conf', '[group] option') or
# ('conf', '[group]') for a whole group.
# ---------------------------------------------------------------------------
ALLOWED = {}

# Names in a namespace that Python itself fills in on use: warnings'
# registry, copyreg's slot names, a class's lazily made annotations, and
# unittest's class-level clean-up bookkeeping on a test class.
_IGNORED_NAMES = frozenset(['__warningregistry__', '__slotnames__',
                            '__annotations__', 'tearDown_exceptions',
                            '_classSetupFailed'])
_HEAPTYPE = 1 << 9
_MISSING = leak_threads.MISSING


class LeakError(AssertionError):
    """A test left something behind."""


# -- process-wide state -------------------------------------------------------

class _Session(object):
    """What the checks of one process share; made on first use."""

    def __init__(self):
        self.tempdir = tempfile.mkdtemp(prefix='harness-%d-' % os.getpid())
        tempfile.tempdir = self.tempdir
        os.environ['TMPDIR'] = self.tempdir
        atexit.register(shutil.rmtree, self.tempdir, True)
        # greenlets alive at the end of an earlier check: not this test's
        self.known = weakref.WeakSet()
        self.checks = 0
        self.seconds = 0.0
        # the slowest checks: [(seconds, test id)]
        self.slowest = []
        stats = os.environ.get('HARNESS_LEAK_STATS')
        if stats:
            atexit.register(self._write_stats, stats)

    def count(self, seconds, test_id):
        self.checks += 1
        self.seconds += seconds
        self.slowest.append((seconds, test_id))
        if len(self.slowest) > 20:
            self.slowest.sort(reverse=True)
            del self.slowest[10:]

    def _write_stats(self, path):
        if self.checks:
            self.slowest.sort(reverse=True)
            with open(path, 'a') as f:
                f.write('pid %d: %d checks, %.6f s\n' % (
                    os.getpid(), self.checks, self.seconds))
                for seconds, test_id in self.slowest[:5]:
                    f.write('  %.6f s %s\n' % (seconds, test_id))


_SESSION = None


def _session():
    global _SESSION
    if _SESSION is None:
        _SESSION = _Session()
    return _SESSION


# The checks running now, innermost last (a test's, while it runs).
_ACTIVE = []


@contextlib.contextmanager
def pool_changing():
    """Around a change of what a process-wide pool keeps; see the top."""
    check = _ACTIVE[-1] if _ACTIVE else None
    if check is None:
        yield
        return
    before = _Inventory(check._session, set(check._seen))
    try:
        yield
    finally:
        check._moved_by(before, _Inventory(check._session, set(check._seen)))


def cost():
    """``(checks, seconds)`` spent by leak checks in this process."""
    if _SESSION is None:
        return 0, 0.0
    return _SESSION.checks, _SESSION.seconds


# -- the fixture --------------------------------------------------------------

class LeakCheck(fixtures.Fixture):
    """Fail the test if it leaves state behind; see the module docstring.

    Use it first in ``setUp`` so that its clean-up runs last.

    :param test_id: names the test in the cost statistics
        (``HARNESS_LEAK_STATS``).
    """

    def __init__(self, test_id=None):
        super().__init__()
        self.test_id = test_id

    def _setUp(self):
        started = time.perf_counter()
        self._session = _session()
        start = _Inventory(self._session, set())
        self._conf = start.conf
        self._namespaces = start.namespaces
        self._patched = start.patched
        self._environ = start.environ
        self._threads = start.threads
        self._os_threads = start.os_threads
        self._cwd = os.getcwd()
        self._dirs = start.dirs
        self._seen = set()
        self._known = start.pending
        self._previous_trace = greenlet.settrace(self._trace)
        _ACTIVE.append(self)
        self.addCleanup(self._check)
        self._session.seconds += time.perf_counter() - started

    def _moved_by(self, before, after):
        """Count what changed from ``before`` to ``after`` as found here.

        What a kept cloud's stand-up or tear-down patched, registered,
        set, started or made is the pool's (see the top); the rest of
        the starting inventory stays the test's.
        """
        if self._conf is not None and before.conf is not None:
            conf, groups, top = self._conf
            groups = dict(groups)
            for name in set(before.conf[1]) | set(after.conf[1]):
                was, now = before.conf[1].get(name), after.conf[1].get(name)
                if now is None:
                    groups.pop(name, None)
                elif was is None or not _same_opts(was, now):
                    groups[name] = now
            top = dict(top)
            for key, value in after.conf[2].items():
                old = before.conf[2][key]
                if old is not value and old != value:
                    top[key] = value
            self._conf = conf, groups, top
        owners = {id(owner): saved for owner, _l, saved, _m
                  in before.namespaces}
        changed = {}
        for owner, _label, saved, _is_module in after.namespaces:
            was = owners.get(id(owner))
            if was is not None and was != saved:
                changed[id(owner)] = (was, saved)
        if changed:
            namespaces = []
            for owner, label, saved, is_module in self._namespaces:
                if id(owner) in changed:
                    saved = _moved(saved, *changed[id(owner)])
                namespaces.append((owner, label, saved, is_module))
            self._namespaces = namespaces
        self._patched |= after.patched - before.patched
        self._environ = _moved(self._environ, before.environ, after.environ)
        self._threads |= after.threads - before.threads
        self._os_threads |= after.os_threads - before.os_threads
        self._known |= after.pending - before.pending
        for where, names in after.dirs.items():
            was = before.dirs.get(where, set())
            self._dirs[where] = (
                self._dirs.get(where, set()) - (was - names)) | (names - was)
        # Greenlets first switched to during the change: the cloud's.
        self._session.known.update(
            g for g in (ref() for ref in after.seen - before.seen)
            if g is not None and not g.dead)

    def _trace(self, event, args, _ref=weakref.ref):
        if event == 'switch' or event == 'throw':
            self._seen.add(_ref(args[1]))
        previous = self._previous_trace
        if previous is not None:
            previous(event, args)

    def _check(self):
        started = time.perf_counter()
        greenlet.settrace(self._previous_trace)
        _ACTIVE.remove(self)
        try:
            found = self._leaks()
        finally:
            self._session.count(time.perf_counter() - started, self.test_id)
        if found:
            raise LeakError(
                'the test left %d thing(s) behind (harness.leaks):\n  %s'
                % (len(found), '\n  '.join(found)))

    def _leaks(self):
        found = []
        found += self._conf_leaks()
        patched = _eventlet_patched() - self._patched
        if patched:
            # Every patched module's attributes changed; undoing that would
            # leave the process half patched. Say what happened instead.
            found.append(
                'eventlet monkey-patched the process (%s): import what '
                'patches it (Nova, harness.Cloud, harness.runners.runner) '
                'when the test module is imported, not inside a test'
                % ', '.join(sorted(patched)))
        else:
            found += self._attribute_leaks()
        found += self._environ_leaks()
        threads, os_threads, greenlets = self._running()
        if threads or os_threads or greenlets:
            # Give what is ending a moment to end.
            deadline = time.monotonic() + GRACE
            while ((threads or os_threads or greenlets)
                   and time.monotonic() < deadline):
                leak_threads.pause(0.01)
                threads, os_threads, greenlets = self._running()
        found += ['thread %s' % _describe_thread(t)
                  for t in threads]
        frames = thread_frames.current_frames() if os_threads else {}
        found += ['OS thread %s' % _describe_os_thread(ident, frames)
                  for ident in sorted(os_threads)]
        found += ['greenthread %s' % _describe_greenlet(g)
                  for g in greenlets]
        alive = [g for g in (ref() for ref in self._seen)
                 if g is not None and not g.dead]
        self._session.known.update(alive)
        self._seen = set()
        found += self._file_leaks()
        return found

    # -- CONF ---------------------------------------------------------------

    def _conf_leaks(self):
        before = self._conf
        if before is None:
            return []
        conf, groups, top = before
        found = []
        now_conf, now_groups, now_top = _conf_state()
        for name in sorted(set(now_groups) - set(groups)):
            if not _allowed('conf', '[%s]' % name):
                found.append('CONF: group [%s] registered' % name)
        for name in sorted(set(groups) - set(now_groups)):
            found.append('CONF: group [%s] unregistered' % name)
        for group, state in groups.items():
            now_state = now_groups.get(group)
            if now_state is None or _same_opts(state, now_state):
                continue
            found += _opt_leaks(conf, group, _opt_state(state),
                                _opt_state(now_state))
        for key, value in top.items():
            if now_top[key] is not value and now_top[key] != value:
                found.append('CONF: %s is %s (was %s)' % (
                    key, _show(now_top[key]), _show(value)))
        if found:
            _restore_conf(conf, groups, top)
        return found

    # -- monkeypatches ------------------------------------------------------

    def _attribute_leaks(self):
        found = []
        for owner, label, saved, is_module in self._namespaces:
            current = owner.__dict__
            try:
                if current == saved:
                    continue
            except Exception:
                pass
            found += _namespace_leaks(owner, label, saved, is_module)
        return found

    def _environ_leaks(self):
        now = dict(os.environ)
        if now == self._environ:
            return []
        found = []
        for name in sorted(set(now) | set(self._environ)):
            old = self._environ.get(name, _MISSING)
            new = now.get(name, _MISSING)
            if old != new:
                found.append('environment: %s is %s (was %s)' % (
                    name, _show(new), _show(old)))
        os.environ.clear()
        os.environ.update(self._environ)
        return found

    # -- threads and greenthreads -------------------------------------------

    def _running(self):
        every = threading.enumerate()
        alive = [t for t in every
                 if t not in self._threads and t.is_alive()]
        threads = [t for t in alive if not _idle_worker(t)]
        os_threads = set(thread_frames.current_frames()) - self._os_threads
        # A thread Python knows is judged as a thread (or as one the
        # inventory had: a kept cloud's, started anew inside
        # pool_changing), never as an OS thread of no one's.
        os_threads -= {t.ident for t in every}
        idents = {t.ident for t in alive}
        os_threads -= leak_threads.tpool_idents()
        candidates = [g for g in (ref() for ref in self._seen)
                      if g is not None and not g.dead]
        candidates += leak_threads.pending_greenlets()
        hub = leak_threads.hub_greenlet()
        trampoline = leak_threads.tpool_greenlet()
        known = self._session.known
        greenlets = []
        for g in candidates:
            if (g.parent is None or g is hub or g is trampoline
                    or g in self._known
                    or g in known or id(g) in idents or g in greenlets):
                continue
            greenlets.append(g)
        return threads, os_threads, greenlets

    # -- files ----------------------------------------------------------------

    def _file_leaks(self):
        found = []
        if os.getcwd() != self._cwd:
            found.append('working directory is %s (was %s)' % (
                os.getcwd(), self._cwd))
            try:
                os.chdir(self._cwd)
            except OSError:
                pass
        now = _dirs(self._session.tempdir)
        for where, names in now.items():
            for name in sorted(names - self._dirs.get(where, set())):
                path = os.path.join(where, name)
                if where == self._session.tempdir:
                    kind = 'temp dir' if os.path.isdir(path) else 'temp file'
                    if name.endswith(SQLITE_SUFFIXES):
                        kind = 'sqlite file'
                    found.append('%s %s' % (kind, path))
                    _remove(path)
                elif name.endswith(SQLITE_SUFFIXES):
                    found.append('sqlite file %s' % path)
        return found


def _idle_worker(thread):
    """Whether ``thread`` is an idle worker of a futurist thread pool.

    Under native threading every executor keeps its workers (Nova's
    process-wide pools, a kept cloud's RPC servers, oslo.service's looping
    calls until the collector frees them, when they end): an idle one holds
    no work, and stops with its executor. A worker still running a task
    at the end of a test is work the test left behind, and counts.
    """
    workers = sys.modules.get('futurist._thread')
    return (workers is not None
            and isinstance(thread, workers.ThreadWorker)
            and thread.idle)


# -- inventories --------------------------------------------------------------

class _Inventory(object):
    """What a check compares, taken at one moment."""

    def __init__(self, session, seen):
        self.conf = _conf_state()
        self.namespaces = _namespaces()
        self.patched = _eventlet_patched()
        self.environ = dict(os.environ)
        self.threads = set(threading.enumerate())
        self.os_threads = set(thread_frames.current_frames())
        self.dirs = _dirs(session.tempdir)
        self.pending = set(leak_threads.pending_greenlets())
        self.seen = seen


def _moved(start, before, after):
    """``start`` moved by what changed from ``before`` to ``after``."""
    result = dict(start)
    for name in set(before) | set(after):
        was, now = before.get(name, _MISSING), after.get(name, _MISSING)
        if was is now:
            continue
        if now is _MISSING:
            result.pop(name, None)
        else:
            result[name] = now
    return result


def _conf_state():
    """``(CONF, {group: (opts, [info copies])}, top)`` or None."""
    cfg = sys.modules.get('oslo_config.cfg')
    if cfg is None:
        return None
    conf = cfg.CONF
    copy = dict.copy
    groups = {None: (conf._opts.copy(),
                     list(map(copy, conf._opts.values())))}
    for name, group in conf._groups.items():
        opts = group._opts
        groups[name] = (opts.copy(), list(map(copy, opts.values())))
    top = {
        'parsed arguments': conf._args,
        'config namespace': conf._namespace,
        'mutable namespace': conf._mutable_ns,
        'config sources': list(conf._sources),
        'mutate hooks': set(conf._mutate_hooks),
        'validate_default_values': conf._validate_default_values,
        'use_env': conf._use_env,
    }
    return conf, groups, top


def _same_opts(before, now, _eq=operator.eq):
    """Whether a group's options and their info are as they were."""
    opts, infos = before
    now_opts, now_infos = now
    return (len(opts) == len(now_opts) and opts == now_opts
            and all(map(_eq, infos, now_infos)))


def _opt_state(state):
    """``{name: (opt, override, default)}`` from a group's snapshot."""
    opts, infos = state
    return {name: (info['opt'], info.get('override', _MISSING),
                   info.get('default', _MISSING))
            for name, info in zip(opts, infos)}


def _opt_leaks(conf, group, opts, now_opts):
    found = []
    label = '[%s]' % (group or 'DEFAULT')
    for name in sorted(set(now_opts) | set(opts)):
        old = opts.get(name)
        new = now_opts.get(name)
        where = '%s %s' % (label, name)
        if old == new or _allowed('conf', where):
            continue
        if old is None:
            found.append('CONF: option %s registered' % where)
        elif new is None:
            found.append('CONF: option %s unregistered' % where)
        elif old[0] is not new[0]:
            found.append('CONF: option %s replaced' % where)
        else:
            for index, what in ((1, 'override'), (2, 'default')):
                if old[index] != new[index]:
                    found.append('CONF: %s %s is %s (was %s)' % (
                        where, what, _show(new[index]), _show(old[index])))
    return found


def _restore_conf(conf, groups, top):
    """Put overrides and defaults back.

    Options registered since stay: the modules that registered them (once,
    lazily) read them by name and would not register them again.
    """
    for group, state in groups.items():
        saved = _opt_state(state)
        if group is None:
            infos = conf._opts
        elif group in conf._groups:
            infos = conf._groups[group]._opts
        else:
            continue
        for name, info in infos.items():
            if name not in saved:
                continue
            for index, key in ((1, 'override'), (2, 'default')):
                if saved[name][index] is _MISSING:
                    info.pop(key, None)
                else:
                    info[key] = saved[name][index]
    # oslo.config caches values; its own setters clear the cache this way.
    getattr(conf, '_ConfigOpts__cache', {}).clear()


def _namespaces():
    """``[(owner, label, dict copy, is_module)]`` for what is watched."""
    return [(owner, label, owner.__dict__.copy(), is_module)
            for owner, label, is_module in _targets()]


# by len(sys.modules), which some fixtures move back and forth by adding
# and removing a module
_TARGETS = {}
_CLASSES = {}


def _targets():
    """The modules and classes watched, found again when imports change."""
    modules = sys.modules
    cached = _TARGETS.get(len(modules))
    if cached is not None:
        return cached
    names = [name for name in WATCHED_MODULES if name in modules]
    names += [name for name in list(modules)
              if name.partition('.')[0] in WATCHED_PACKAGES]
    result = []
    seen = set()
    for name in names:
        module = modules[name]
        if module is None:
            continue
        result.append((module, name, True))
        for cls in _classes(module):
            if id(cls) not in seen:
                seen.add(id(cls))
                result.append((cls, '%s.%s' % (
                    cls.__module__, cls.__qualname__), False))
    if len(_TARGETS) > 8:
        _TARGETS.clear()
    _TARGETS[len(modules)] = result
    return result


def _classes(module):
    """The (mutable) classes a module holds, found once per module."""
    cached = _CLASSES.get(module.__name__)
    if cached is not None and cached[0] is module:
        return cached[1]
    classes = [value for value in list(module.__dict__.values())
               if isinstance(value, type) and value.__flags__ & _HEAPTYPE]
    _CLASSES[module.__name__] = (module, classes)
    return classes


def _namespace_leaks(owner, label, saved, is_module):
    found = []
    current = dict(owner.__dict__)
    for name in sorted(set(current) | set(saved)):
        old = saved.get(name, _MISSING)
        new = current.get(name, _MISSING)
        if old is new or name in _IGNORED_NAMES:
            continue
        if (is_module and old is _MISSING
                and type(new) is type(sys)):
            continue  # a submodule imported for the first time
        path = '%s.%s' % (label, name)
        if _allowed('monkeypatch', path):
            _restore_attribute(owner, name, old)
            continue
        if old is _MISSING:
            found.append('monkeypatch: %s added (%s)' % (path, _show(new)))
        elif new is _MISSING:
            found.append('monkeypatch: %s deleted (was %s)' % (
                path, _show(old)))
        else:
            found.append('monkeypatch: %s is %s (was %s)' % (
                path, _show(new), _show(old)))
        _restore_attribute(owner, name, old)
    return found


def _restore_attribute(owner, name, old):
    try:
        if old is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, old)
    except Exception:
        pass


def _dirs(tempdir):
    result = {}
    for where in {os.getcwd(), tempdir}:
        try:
            result[where] = set(os.listdir(where))
        except OSError:
            result[where] = set()
    return result


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _eventlet_patched():
    patcher = sys.modules.get('eventlet.patcher')
    if patcher is None:
        return frozenset()
    return frozenset(getattr(patcher, 'already_patched', ()))


def _allowed(kind, name):
    if (kind, name) in ALLOWED:
        return True
    # '[group] option' is allowed when its whole group is
    return kind == 'conf' and (kind, name.partition(' ')[0]) in ALLOWED
