"""Test suites from scenario files: ``build_tests`` and ``build_bug_tests``.

One call in a module's ``load_tests`` hook turns a folder of scenario
files into tests, as gabbi's ``driver.build_tests`` does for its YAML
files: one test class per file, one test method per scenario. See
``build_tests`` for the whole story and an example.

``build_bug_tests`` does the same for the bugs the harness remembers
(``harness/bugs/lp<ID>.yaml``): one class per bug, its scenarios run
as the installed Nova calls for (``Bug.fixed_on``).

Both order their tests so that those of one cloud shape come together
(``in_shape_order``): a worker's kept cloud (``harness.cloud.reuse``)
then serves a shape's tests in a row. Importing this module, and
building tests, imports no Nova: running them does.
"""

import glob
import inspect
import os
import re
import unittest

import ddt
import testtools

from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.core import shapes
import harness.testing.cases

#: The class built from one file, by (kind, file, module name, base
#: class), with the file's size and time then: built again when the file
#: changes (``_built``).
_BUILT = {}
# The number ddt gives a scenario's test method: test N runs the class's
# ``scenarios[N - 1]``.
_NUMBER = re.compile(r'^test(?:_bug_[0-9]+)?_(\d+)_')


def build_tests(path, loader=None, test_loader_name=None, *, base=None,
                shape_order=True):
    """Tests of the scenario files in ``path``, for a ``load_tests`` hook.

    ``path`` is a folder (its ``*.yaml`` files, in name order) or one
    scenario file. Each file becomes one test class, named after the file
    in CamelCase (``resize_confirm.yaml``: ``ResizeConfirm``), so that
    stestr's ``group_regex`` keeps a file's tests in one worker. Each
    scenario in it becomes one test method, ``test_<N>_<file>__<scenario
    name>[_bug_<ID>...]``: the file, the scenario's name and the bugs it
    lists are in the test ID, so ``stestr run resize_confirm`` or
    ``stestr run 1944759`` selects them. N numbers a file's scenarios with
    those of one cloud shape together (the order they run in).

    Each test runs its scenario with ``ScenarioTestCase.run_scenario``:
    the scenario's own expectations, every invariant after every step,
    the race points checked against the step kinds, its
    ``expected_breaks`` honoured, and the run compared with one without
    checks. A file that does not load (bad YAML, an unknown flavor or
    profile) is one test, ``test_load``, that fails with the loader's
    message naming the file, the step and the field; the other files'
    tests run as usual.

    ``loader``: the ``unittest.TestLoader`` the hook was given (a default
    one if None). ``test_loader_name``: the module name the classes carry,
    the first part of every test ID; by default the calling module's
    ``__name__``, which is what a ``load_tests`` hook wants. ``base``: the
    class each file's test class derives from, ``ScenarioTestCase`` or a
    subclass of it that sets ``invariants``, ``periodic_idempotence`` or
    ``compare_without_checks`` for all of them. ``shape_order``: the
    tests of one cloud shape together across files (the default; see
    ``in_shape_order``), else file by file.

    A module with this ``load_tests`` runs every scenario file in the
    ``scenarios`` folder next to it under ``stestr run``, ``python -m
    unittest`` and ``python -m testtools.run``::

        import os

        import harness

        SCENARIOS = os.path.join(os.path.dirname(__file__), 'scenarios')


        def load_tests(loader, standard_tests, pattern):
            return harness.build_tests(SCENARIOS, loader)

    A file's tests share a kept cloud where their shapes allow and read
    best in order: keep a class in one stestr worker with
    ``group_regex=^(.*)[.][^.]+$`` in ``.stestr.conf`` (the test ID up to
    the method's name).

    pytest does not call ``load_tests``, and loading one test by its name
    (``python -m testtools.run MODULE.Class.test_1_...``) looks the class
    up in the module. For either, make the classes the module's own too
    (the suite's ``classes``); building the same files again gives the
    same classes (a file is built once per process while it does not
    change)::

        globals().update(harness.build_tests(SCENARIOS).classes)

    Returns a ``unittest.TestSuite`` whose order testtools keeps
    (``OrderedSuite``), with ``classes``: ``{class name: class}`` of its
    tests, one per file. Raises ``ScenarioError`` when ``path`` is neither
    a scenario file nor a folder holding any.
    """
    if test_loader_name is None:
        test_loader_name = _caller_module()
    base = base or harness.testing.cases.ScenarioTestCase
    paths = _scenario_files(path)
    classes = _unique([_built('scenarios', file_path, test_loader_name,
                              base, _scenario_class) for file_path in paths],
                      paths)
    return _suite(classes, loader, shape_order)


def build_bug_tests(loader=None, test_loader_name=None, *, shape_order=True,
                    paths=None):
    """Tests of the registered bugs (``harness.bugs``), as ``build_tests``.

    One class per bug file, ``TestBug<ID>``, one method per scenario,
    ``test_bug_<ID>_<N>_<scenario name>``, tied to the bug with
    ``related_bug`` (a failure links it). Each runs with the invariants
    on, less those the bug's ``invariants_off`` names, honouring the
    scenario's ``expected_breaks``; on a Nova that predates the bug's fix
    (``Bug.fixed_on``) it passes only if the scenario shows the bug, as
    wrong accounting (``Problem.accounting``). A malformed bug file is one
    failing ``test_load``.

    ``paths``: bug files (``lp<ID>.yaml``; every registered one by
    default). ``loader``, ``test_loader_name`` and ``shape_order`` as for
    ``build_tests``.
    """
    if test_loader_name is None:
        test_loader_name = _caller_module()
    bugs = _bugs()
    paths = bugs.paths() if paths is None else list(paths)
    classes = _unique([_built('bugs', path, test_loader_name,
                              harness.testing.cases.ScenarioTestCase,
                              _bug_class)
                       for path in paths], paths)
    return _suite(classes, loader, shape_order)


class OrderedSuite(unittest.TestSuite):
    """Tests in the order given: testtools sorts only plain suites."""

    def sort_tests(self):
        pass


def in_shape_order(suite):
    """``suite``'s tests with those of one cloud shape together.

    Shapes in the order of their first test (by ID); within a shape, by
    ID. A test of no scenario (``scenario_of``: a file that did not
    load) comes first. A worker runs its share in this order, so its
    kept cloud (``harness.cloud.reuse``) serves every test of a shape in
    a row.
    """
    first = {}
    keyed = []
    for case in sorted(testtools.iterate_tests(suite),
                       key=lambda case: case.id()):
        scenario = scenario_of(case)
        if scenario is None:
            keyed.append(((-1, case.id()), case))
            continue
        shape = repr(shapes.cloud_shape(scenario))
        keyed.append(((first.setdefault(shape, len(first)), case.id()),
                      case))
    return OrderedSuite(case for key, case in sorted(
        keyed, key=lambda pair: pair[0]))


def scenario_of(case):
    """The scenario a test built here runs, or None.

    None for a test of no scenario (a file's ``test_load``) and for any
    test not built by this module.
    """
    found = _NUMBER.match(case.id().rsplit('.', 1)[-1])
    scenarios = getattr(type(case), 'scenarios', None)
    if found is None or scenarios is None:
        return None
    return scenarios[int(found.group(1)) - 1]


def _caller_module():
    # Two frames up: the caller of build_tests or build_bug_tests.
    return inspect.currentframe().f_back.f_back.f_globals['__name__']


def _scenario_files(path):
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise errors.ScenarioError(
            '%s: no such folder or scenario file' % path)
    found = sorted(glob.glob(os.path.join(path, '*.yaml')))
    if not found:
        raise errors.ScenarioError('%s: no scenario files (*.yaml) in this '
                                   'folder' % path)
    return found


def _unique(classes, paths):
    """``classes``, refused if two files made classes of one name."""
    seen = {}
    for cls, path in zip(classes, paths):
        if cls.__name__ in seen:
            raise errors.ScenarioError(
                '%s and %s both make the test class %s: rename one'
                % (seen[cls.__name__], path, cls.__name__))
        seen[cls.__name__] = path
    return classes


def _built(kind, path, test_loader_name, base, make):
    """The class ``make`` builds from ``path``, built once per version.

    Built again only when the file changes (its size or modification
    time), so a module that builds its tests at import and again in
    ``load_tests`` runs one set of classes.
    """
    path = os.path.abspath(path)
    try:
        status = os.stat(path)
        stamp = (status.st_mtime_ns, status.st_size)
    except OSError:
        stamp = None
    key = (kind, path, test_loader_name, base)
    if key not in _BUILT or _BUILT[key][0] != stamp:
        _BUILT[key] = (stamp, make(path, test_loader_name, base))
    return _BUILT[key][1]


def _class_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return ''.join(part.title() for part in re.split(r'[^A-Za-z0-9]+', stem)
                   if part)


def _scenario_class(path, test_loader_name, base):
    name = _class_name(path)
    try:
        scenarios = shapes.in_shape_order(scenario_mod.load(path))
    except errors.ScenarioError as exc:
        return _failing_load(name, test_loader_name, str(exc))
    for scenario in scenarios:
        # ddt names each test after its datum's __name__.
        scenario.__name__ = scenario.id

    def test(self, scenario):
        # The first scenario stands for its file when the runs with and
        # without checks are compared for one per file
        # (``cases.COMPARE_ENV``).
        self.run_scenario(scenario, stands_for_file=scenario is scenarios[0])

    return ddt.ddt(type(name, (base,), {
        '__module__': test_loader_name,
        '__qualname__': name,
        '__doc__': 'The scenarios of %s.' % os.path.basename(path),
        # In ddt's order: test N runs scenarios[N - 1].
        'scenarios': scenarios,
        'test': ddt.data(*scenarios)(test),
    }))


def _bugs():
    # Here, not at the top: ``harness`` exports build_tests from this
    # module, and ``from harness import bugs`` reads that package.
    import harness.bugs
    return harness.bugs


def _bug_class(path, test_loader_name, base):
    bugs = _bugs()
    stem = os.path.splitext(os.path.basename(path))[0]
    name = 'TestBug%s' % stem[len('lp'):]
    try:
        bug = bugs.load(path)
    except errors.HarnessError as exc:
        return _failing_load(name, test_loader_name, str(exc))
    for scenario in bug.scenarios:
        # ddt names each test after its datum's __name__.
        scenario.__name__ = re.sub(r'[^a-z0-9]+', '_',
                                   scenario.name.lower()).strip('_')

    def test(self, scenario):
        from harness.cloud import install
        version = install.nova_version()
        if bug.fixed_on(version):
            self.run_scenario(scenario)
        else:
            _shows_the_bug(self, bug, scenario, version)

    test.__name__ = test.__qualname__ = 'test_bug_%s' % bug.id
    return ddt.ddt(type(name, (base,), {
        '__module__': test_loader_name,
        '__qualname__': name,
        '__doc__': 'LP#%s: %s (%s)' % (bug.id, bug.title, bug.link),
        'invariants': bug.invariants,
        # In ddt's order: test N runs scenarios[N - 1].
        'scenarios': bug.scenarios,
        test.__name__: ddt.data(*bug.scenarios)(
            bugs.related_bug(bug.id)(test)),
    }))


def _shows_the_bug(test, bug, scenario, version):
    """On a Nova without the fix, the scenario fails as the bug does."""
    from harness.cloud import reuse
    from harness.core import invariants
    from harness.runners import runner
    checker = invariants.Checker(enabled=bug.invariants)
    timeline = runner.run(
        scenario, keep_going=True, checks=[checker],
        pool=test.useFixture(reuse.CloudPool()), test_id=test.id())
    problems = [p for entry in timeline for p in entry.problems]
    test.assertTrue(
        any(p.accounting for p in problems),
        'LP#%s: Nova %s predates the fix (fixed in %s), so %s must show '
        'the bug as wrong accounting, but it did not (checks that failed: '
        '%s)' % (bug.id, '.'.join(map(str, version)), bug.fixed_in_text,
                 scenario.name,
                 sorted({p.check for p in problems}) or 'none'))


def _failing_load(name, test_loader_name, message):
    """A class whose one test fails with ``message`` (a file's error)."""

    def test_load(self):
        self.fail(message)

    return type(name, (harness.testing.cases.TestCase,), {
        '__module__': test_loader_name, '__qualname__': name,
        'test_load': test_load})


def _suite(classes, loader, shape_order):
    loader = loader or unittest.TestLoader()
    suite = OrderedSuite(loader.loadTestsFromTestCase(cls)
                         for cls in classes)
    if shape_order:
        suite = in_shape_order(suite)
    # What a module binds for runners that find a test by its name.
    suite.classes = {cls.__name__: cls for cls in classes}
    return suite
