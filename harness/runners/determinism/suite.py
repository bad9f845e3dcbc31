"""Which tests a check runs, and running one of them, watched.

A check's tests come from its sources (``Source``): the tests
``harness.testing.build_tests`` builds from a folder of scenario files,
those ``build_bug_tests`` builds from the bug registry, and those
unittest loads from a module or package named on the command line. Each
test is an item, ``{'id', 'test'}``: its test ID, and the same without
its package, as the report lists it (``item_id``).

A run loads its test afresh from the sources (``load``) and runs it as
unittest runs a test, watched through the observer hooks
(``harness.core.hooks``): nothing of the harness is patched.
"""

import collections
import dataclasses
import importlib
import os
import re
import sys
import time
import unittest

import testtools

from harness.core import hooks
from harness.runners import determinism
from harness.runners.determinism import pool
from harness.runners.determinism import records
from harness.runners import options

#: Where a checkout keeps its scenario files: what a check runs by default
#: when the harness runs from a checkout.
CHECKOUT_SCENARIOS = os.path.join('tests', 'functional', 'scenarios')
#: The module name the bug registry's tests carry: the checkout's
#: tests/regressions/test_regressions.py builds them under its own name,
#: so a regression test has one ID here and under stestr (a name, not an
#: import: the tool never imports the checkout's tests).
BUG_TESTS = 'tests.regressions.test_regressions'
#: What unittest's class-fixture handling leaves on a test class.
UNITTEST_CLASS_STATE = frozenset(('tearDown_exceptions', '_classSetupFailed'))
#: Which unittest finds in a package named by ``--tests``.
TEST_FILES = 'test*.py'


@dataclasses.dataclass(frozen=True)
class Source(object):
    """Where tests come from (picklable: workers get it with each job).

    ``kind``: ``scenarios`` (``where`` is a folder or scenario file; the
    tests ``build_tests`` builds, ``name`` their module name), ``bugs``
    (the registry's, ``build_bug_tests``) or ``unittest`` (``where`` is
    a module or package name unittest loads).
    """
    kind: str
    where: str = ''
    name: str = ''


def sources(scenarios=None, bugs=True, tests=(), root=None):
    """The sources of a check; ``UsageError`` for a bad one, or none.

    ``scenarios``: folders or files of scenario files (``--scenarios``);
    None for the checkout's ``CHECKOUT_SCENARIOS`` under ``root`` (the
    harness's checkout), if there is one. ``bugs``: the bug registry's
    tests too. ``tests``: module or package names (``--tests``), looked
    up where the tests are loaded (a worker imports them, not this
    process).
    """
    root = root or determinism.ROOT
    if scenarios is None:
        default = os.path.join(root, CHECKOUT_SCENARIOS)
        scenarios = [default] if os.path.isdir(default) else []
    found = []
    for where in scenarios:
        path = os.path.abspath(where)
        if not os.path.exists(path):
            raise options.UsageError('--scenarios %s: no such folder or '
                                     'file' % where)
        found.append(Source('scenarios', path, test_module_name(path)))
    if bugs:
        found.append(Source('bugs', name=BUG_TESTS))
    found.extend(Source('unittest', name) for name in tests)
    if not found:
        raise options.UsageError(
            'nothing to run: no --scenarios, no test suite next to the '
            'harness in %s (%s), and --no-bugs' % (root, CHECKOUT_SCENARIOS))
    return found


def test_module_name(path):
    """The module name the tests of scenario folder (or file) ``path`` get.

    What a test module next to the folder, named after it, would be
    called: ``<package>.test_<folder>``, the package being the folder's
    parent if that is one (``tests/functional/scenarios``:
    ``tests.functional.test_scenarios``, the checkout's own module);
    else ``test_<folder>``.
    """
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    folder = os.path.abspath(folder)
    parts = ['test_' + re.sub(r'[^A-Za-z0-9]+', '_',
                              os.path.basename(folder)).strip('_')]
    parent = os.path.dirname(folder)
    while os.path.isfile(os.path.join(parent, '__init__.py')):
        parts.insert(0, os.path.basename(parent))
        parent = os.path.dirname(parent)
    return '.'.join(parts)


def item_id(test_id, module):
    """How a test is listed: its ID without its module's package.

    ``module``: the module name the test's class carries
    (``tests.functional.test_scenarios``: ``test_scenarios.Boot...``).
    """
    package = module.rpartition('.')[0]
    if package and test_id.startswith(package + '.'):
        return test_id[len(package) + 1:]
    return test_id


def discover(sources):
    """The tests of ``sources``, as plain dicts (run where Nova may be).

    ``{'items': [{'id', 'test'}...]}`` in the sources' order, each test
    once: a test that a ``unittest`` source gives again (a module that
    builds its tests as a ``scenarios`` or ``bugs`` source does) is the
    same test; one that two built sources give is a ``UsageError``.
    """
    items = collections.OrderedDict()
    for source in sources:
        for case in testtools.iterate_tests(tests_of(source)):
            test_id = case.id()
            if test_id in items:
                if source.kind == 'unittest':
                    continue
                raise options.UsageError(
                    'two sources give the test %s (the second: %s %s): '
                    'give --scenarios folders of different names'
                    % (test_id, source.kind, source.where or source.name))
            items[test_id] = {'id': item_id(test_id, type(case).__module__),
                              'test': test_id}
    return {'items': list(items.values())}


def tests_of(source, shape_order=True):
    """The test suite of ``source`` (see ``Source``), freshly made.

    Built tests are built once per process (``harness.testing``'s
    loader keeps a file's classes while it does not change); their test
    cases are new each time, as a loader's are. ``shape_order``: built
    tests in the order a ``load_tests`` hook gives them (a shape's tests
    together, so that they share a worker's kept cloud).
    """
    loader = unittest.TestLoader()
    if source.kind == 'scenarios':
        return _testing().build_tests(source.where, loader, source.name,
                                      shape_order=shape_order)
    if source.kind == 'bugs':
        return _testing().build_bug_tests(loader, source.name,
                                          shape_order=shape_order)
    if determinism.ROOT not in sys.path:
        sys.path.insert(0, determinism.ROOT)
    try:
        module = importlib.import_module(source.where)
    except ImportError as exc:
        raise options.UsageError('--tests %s: %s: %s' % (
            source.where, type(exc).__name__, exc))
    if not hasattr(module, '__path__'):
        return loader.loadTestsFromModule(module)
    # A package: every test module in it, as unittest's discovery finds
    # them from the folder its top-level package is in.
    folder = module.__path__[0]
    top = folder
    for _ in source.where.split('.'):
        top = os.path.dirname(top)
    return loader.discover(folder, pattern=TEST_FILES, top_level_dir=top)


def load(test_id, sources=None):
    """A suite of the one test ``test_id``, a new test case.

    Found among the tests of ``sources``; a test none of them gives (or
    without sources) is loaded by its name, as ``python -m unittest ID``
    does.
    """
    for source in sources or ():
        fresh = tests_of(source, shape_order=False)
        for case in testtools.iterate_tests(fresh):
            if case.id() == test_id:
                return unittest.TestSuite([case])
    return unittest.TestLoader().loadTestsFromName(test_id)


def _testing():
    # The test-case layer stands on the runners (its ScenarioTestCase runs
    # scenarios with harness.runners.runner), so this runner of its tests
    # takes its loader by name when it builds a suite, as unittest takes a
    # test module, rather than import it (tests/unit/test_layers.py).
    return importlib.import_module('harness.testing')


class Outcomes(object):
    """What the worker keeps of one test's outcome (a testtools result)."""

    def __init__(self):
        import testtools
        outer = self

        class Result(testtools.TestResult):
            def addSuccess(self, test, details=None):
                outer.set('pass')

            def addFailure(self, test, err=None, details=None):
                outer.set('fail', outer.message(err, details))

            def addError(self, test, err=None, details=None):
                outer.set('error', outer.message(err, details))

            def addSkip(self, test, reason=None, details=None):
                if reason is None and details and 'reason' in details:
                    reason = details['reason'].as_text()
                outer.set('skip', reason or '')

            def addExpectedFailure(self, test, err=None, details=None):
                outer.set('expected failure', outer.message(err, details))

            def addUnexpectedSuccess(self, test, details=None):
                outer.set('unexpected success')

        self.result = Result()
        self.outcomes = []

    def set(self, outcome, message=''):
        self.outcomes.append((outcome, message))

    @staticmethod
    def message(err, details):
        import traceback
        if err is not None:
            return ''.join(traceback.format_exception_only(
                err[0], err[1])).strip()
        # testtools names the traceback detail "traceback" ("traceback-2"
        # and on for more than one exception).
        return '\n'.join(
            records.exception_message(details[name].as_text())
            for name in sorted(details or {}) if name.startswith('traceback'))

    def verdict(self):
        if not self.outcomes:
            return 'error: the test reported no outcome'
        return '\n'.join(records.verdict(outcome, message)
                         for outcome, message in self.outcomes)


def run_once(job):
    """Run one test once, Nova imported first (see ``run_test``).

    Nova's monkey patching comes first (``harness.cloud`` does it), as in
    every functional test module: a test module imported before it would
    keep a native thread's locals where Nova's code needs greenthreads'.
    """
    from harness.cloud import fixture  # noqa: F401
    return run_test(job)


def run_test(job):
    """Run the test ``job['test']`` once; return a plain (picklable) result.

    ``job`` is ``{'item', 'test', 'number'}`` (and in a worker ``timeout``
    and ``hangs``), with ``sources`` when the test is one of theirs (see
    ``load``). The test is watched through ``hooks.observing`` while it
    runs; its timeline and race-point records are made once it is over.
    """
    import resource

    over = pool.watchdog(job)
    suite = load(job['test'], job.get('sources'))
    classes = {type(case) for case in testtools.iterate_tests(suite)}
    before = {cls: set(vars(cls)) for cls in classes}
    result = Outcomes()
    watcher = records.Watcher()
    started = time.perf_counter()
    try:
        with hooks.observing(watcher):
            suite.run(result.result)
    finally:
        seconds = time.perf_counter() - started
        if over is not None:
            over.set()
        # What unittest's class-fixture handling leaves on a test class
        # (as it does in any runner); gone again, so that a run inside a
        # test leaves nothing behind.
        for cls in classes:
            for name in UNITTEST_CLASS_STATE - before[cls]:
                if name in vars(cls):
                    delattr(cls, name)
    timeline = records.timeline_record(watcher.runs)
    points = records.points_record(watcher.runs, watcher.recordings)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {'item': job['item'], 'number': job['number'],
            'verdict': result.verdict(),
            'timeline': records.digest(timeline),
            'timeline_text': records.record_text('timeline', timeline),
            'points': records.digest(points),
            'points_text': records.record_text('points', points),
            'scenarios': watcher.scenarios(),
            'seconds': seconds, 'worker': os.getpid(), 'rss_mb': rss,
            'hash_seed': pool.current_hash_seed()}


def select(items, pattern):
    """The items whose ID or test ID ``pattern`` (a regex) finds."""
    if not pattern:
        return list(items)
    regex = re.compile(pattern)
    return [item for item in items
            if regex.search(item['id']) or regex.search(item['test'])]
