"""The Launchpad bugs the harness remembers, and how tests tie to them.

A bug is one unit, two files in this package (so a wheel ships them):

``lp<ID>.yaml``
    its scenarios (``scenarios:``, a list as in any scenario file) under
    its metadata::

        bug:
          id: 1944759
          title: Store old_flavor already on source host during resize
          fix: b841e553... Store old_flavor ...   # fixing commit, subject
          fixed_in: 25.0.0          # first release with it (or a list)
          story: A periodic on the source ...
          invariants_off:           # optional: left off by its tests, why
            tracker_agrees: The fix freed Placement only, by design ...
          nova_test:                # optional: Nova's own regression test
            module: test_bug_1944759
            asserts: the source's usage after a periodic mid-resize ...
          no_reintroduction: ...    # optional: why the fix cannot be put
                                    # back as a fixture (then no lp<ID>.py)

    Every scenario lists the bug in its ``bugs:``.
``lp<ID>.py``
    its reintroduction fixture, the one ``base.Reintroduction`` subclass
    the module defines; its docstring names the fixing commit. A bug whose
    fix cannot be put back in a fixture has none, and says why in
    ``no_reintroduction``: it has no bite proof.

``corpus.yaml`` (``harness.bugs.corpus``) lists every regression test
module of Nova's tree and which bug file writes it as a scenario.

The registry is the files: ``known()`` reads every ``lp*.yaml`` here,
``get(ID)`` one. Reading a bug file imports no Nova (the scenario loader
is Nova-free); only ``Bug.reintroduce()`` imports the bug's module. A
malformed file is one ``ScenarioError`` naming the file and the field.

Tests are generated from the files (``tests/regressions``): one class
per bug running its scenarios with the invariants on (less the bug's
``invariants_off``), and a proof that each fails with its bug put back.
``related_bug`` ties a test method to a bug the way Tempest's decorator
does: the ID goes in the test's name, and a failure carries a hint with
the bug's link.

``fixed_in`` is the first Nova release carrying the fix: the first tag
on master that contains the fixing commit (``git tag --contains SHA``),
and, as a list, the first release of each stable series it was
backported to (found by the ``cherry picked from commit SHA`` line):
``[31.2.0, 32.0.0]``. ``Bug.fixed_on(version)`` says whether a release
has the fix, so the tests of a release that predates it expect the bug
itself (``tests/regressions``).
"""

import dataclasses
import functools
import glob
import importlib
import importlib.util
import inspect
import os
import re
import typing

from testtools import content

from harness.core import checking
from harness.core import errors
from harness.core import invariants as invariants_mod
from harness.core import scenario as scenario_mod

LAUNCHPAD = 'https://bugs.launchpad.net/nova/+bug/%s'
BUG_DIR = os.path.dirname(os.path.abspath(__file__))
FILE_NAME = re.compile(r'^lp(?P<id>[1-9][0-9]*)\.yaml$')
HEADER_KEYS = ('id', 'title', 'fix', 'fixed_in', 'story', 'invariants_off',
               'nova_test', 'no_reintroduction')
NOVA_TEST_KEYS = ('module', 'asserts')
NOVA_TEST_MODULE = re.compile(r'^test_[a-z0-9_]+$')
REQUIRED_KEYS = ('id', 'title', 'fix', 'story')
RELEASE = re.compile(r'^[1-9][0-9]*\.[0-9]+\.[0-9]+$')

# Path -> Bug, each file read once per process.
_LOADED = {}


@dataclasses.dataclass(frozen=True)
class Bug(object):
    id: str
    title: str
    fix: str                # fixing commit (master) and its subject
    story: str
    path: str               # its lp<ID>.yaml
    # First release with the fix per series, (major, minor, patch), sorted.
    fixed_in: tuple = ()
    # Invariant -> why the bug's tests leave it off.
    invariants_off: dict = dataclasses.field(
        default_factory=dict, compare=False)
    scenarios: tuple = dataclasses.field(
        default=(), compare=False, repr=False)
    # Nova's own regression test of it (``NovaTest``), if the bug has one.
    nova_test: typing.Optional['NovaTest'] = None
    # Why its fix cannot be put back as a fixture ('' when it can).
    no_reintroduction: str = ''

    @property
    def reintroducible(self):
        """Whether ``lp<ID>.py`` puts the bug back (a bite proof exists)."""
        return not self.no_reintroduction

    @property
    def link(self):
        return LAUNCHPAD % self.id

    def fixed_on(self, version):
        """Whether Nova ``version`` ((major, minor, patch)) has the fix.

        A release of a series listed in ``fixed_in`` has it from that
        entry on; a release newer than every entry has it; any other
        (older, or of a series the fix was not backported to) has not.
        """
        version = tuple(version)
        if not self.fixed_in:
            return True     # not recorded: taken as fixed, as before
        for first in self.fixed_in:
            if first[0] == version[0]:
                return version >= first
        return version > max(self.fixed_in)

    @property
    def fixed_in_text(self):
        return ', '.join('%d.%d.%d' % v for v in self.fixed_in)

    @property
    def scenario_path(self):
        return self.path

    @property
    def module(self):
        """The module of its reintroduction fixture."""
        return '%s.lp%s' % (__name__, self.id)

    @property
    def invariants(self):
        """The invariants its tests check: all but ``invariants_off``."""
        return [name for name in invariants_mod.INVARIANTS
                if name not in self.invariants_off]

    def fixture_class(self):
        """Its ``Reintroduction`` subclass (imports the module, and Nova)."""
        from harness.bugs import base
        module = importlib.import_module(self.module)
        found = [value for _, value in inspect.getmembers(
            module, inspect.isclass)
            if issubclass(value, base.Reintroduction)
            and value is not base.Reintroduction
            and value.__module__ == module.__name__]
        if len(found) != 1:
            raise errors.HarnessError(
                '%s must define one Reintroduction subclass (the bug put '
                'back), not %d%s' % (module.__name__, len(found), ''.join(
                    ': ' + ', '.join(cls.__name__ for cls in found)
                    if found else '')))
        return found[0]

    def reintroduce(self):
        """A fresh fixture that puts this bug back into Nova."""
        if not self.reintroducible:
            raise errors.UnknownName(
                'LP#%s cannot be put back into Nova: %s' % (
                    self.id, ' '.join(self.no_reintroduction.split())))
        return self.fixture_class()()


@dataclasses.dataclass(frozen=True)
class NovaTest(object):
    """Nova's own regression test of a bug, which its scenarios write."""

    module: str     # test_bug_1944759, in nova/tests/functional/regressions
    asserts: str    # the accounting facts Nova's test asserts


def paths():
    """This package's bug files, in ID order."""
    found = [path for path in glob.glob(os.path.join(BUG_DIR, 'lp*.yaml'))
             if FILE_NAME.match(os.path.basename(path))]
    return sorted(found, key=lambda path: int(
        FILE_NAME.match(os.path.basename(path)).group('id')))


def of_file(path):
    """The bug of ``path`` if it is a bug file (``lp<ID>.yaml``), else None."""
    path = os.path.abspath(path)
    if not FILE_NAME.match(os.path.basename(path)):
        return None
    return load(path)


def load(path):
    """The bug of file ``path`` (``lp<ID>.yaml``), checked.

    Raises ``ScenarioError`` naming the file and the field for a
    malformed header or scenario, a scenario that does not list the bug,
    or a missing reintroduction module. Imports no Nova.
    """
    path = os.path.abspath(path)
    if path in _LOADED:
        return _LOADED[path]
    match = FILE_NAME.match(os.path.basename(path))
    if not match:
        raise errors.ScenarioError(
            '%s: a bug file is named lp<ID>.yaml, with its Launchpad ID'
            % path)
    bug_id = match.group('id')
    header, scenarios = scenario_mod.load_file(path)
    check = checking.Checker(path)
    check.keys(header, ('bug',), required=('bug',))
    meta = check.mapping(header['bug'], 'bug')
    check.keys(meta, HEADER_KEYS, required=REQUIRED_KEYS, field='bug')
    if str(check.integer(meta['id'], 'bug.id', minimum=1)) != bug_id:
        check.fail('bug.id', '%s does not match the file name lp%s.yaml'
                   % (errors.show(meta['id']), bug_id))
    text = {key: _text(check, meta[key], 'bug.' + key)
            for key in ('title', 'fix', 'story')}
    fixed_in = (_releases(check, meta['fixed_in'], 'bug.fixed_in')
                if 'fixed_in' in meta else ())
    off = check.mapping(meta.get('invariants_off', {}), 'bug.invariants_off')
    for name, why in off.items():
        check.known(name, invariants_mod.INVARIANTS, 'bug.invariants_off',
                    noun='invariant')
        _text(check, why, 'bug.invariants_off.%s' % name)
    for number, scenario in enumerate(scenarios, 1):
        where = checking.Checker('%s[%d]' % (path, number))
        if bug_id not in scenario.bugs:
            where.fail('bugs', 'a scenario of LP#%s must list %s in its '
                       'bugs' % (bug_id, bug_id))
        for name in scenario.expected_breaks:
            if name in off:
                where.fail('expected_breaks.%s' % name,
                           'the bug turns this invariant off '
                           '(bug.invariants_off), so it cannot break')
        known = scenario.known_open_bug
        for number, declared in enumerate(known.breaks if known else (), 1):
            if declared.check in off:
                where.fail('known_open_bug.breaks.%d.check' % number,
                           'the bug turns this invariant off '
                           '(bug.invariants_off), so it cannot break')
    nova_test = _nova_test(check, meta['nova_test']) \
        if 'nova_test' in meta else None
    why_not = _text(check, meta['no_reintroduction'],
                    'bug.no_reintroduction') \
        if 'no_reintroduction' in meta else ''
    module = '%s.lp%s' % (__name__, bug_id)
    has_module = importlib.util.find_spec(module) is not None
    if not why_not and not has_module:
        raise errors.ScenarioError(
            '%s: no reintroduction module %s (lp%s.py next to the file; '
            'or say in bug.no_reintroduction why the fix cannot be put '
            'back)' % (path, module, bug_id))
    if why_not and has_module:
        check.fail('bug.no_reintroduction', 'lp%s.py puts the bug back: '
                   'drop no_reintroduction, or the module' % bug_id)
    bug = Bug(id=bug_id, path=path, invariants_off=dict(off),
              fixed_in=fixed_in, scenarios=tuple(scenarios),
              nova_test=nova_test, no_reintroduction=why_not, **text)
    _LOADED[path] = bug
    return bug


def _nova_test(check, value):
    """``nova_test: {module: test_bug_N, asserts: text}``."""
    meta = check.mapping(value, 'bug.nova_test')
    check.keys(meta, NOVA_TEST_KEYS, required=NOVA_TEST_KEYS,
               field='bug.nova_test')
    module = meta['module']
    if not isinstance(module, str) or not NOVA_TEST_MODULE.match(module):
        check.fail('bug.nova_test.module', 'expected the name of a module '
                   'of nova/tests/functional/regressions (test_bug_1944759),'
                   ' got %s' % errors.show(module))
    return NovaTest(module=module, asserts=_text(
        check, meta['asserts'], 'bug.nova_test.asserts'))


def _releases(check, value, field):
    """``32.0.0`` or ``[31.2.0, 32.0.0]``: one release per series."""
    values = value if isinstance(value, list) else [value]
    found = {}
    for item in values:
        if not isinstance(item, str) or not RELEASE.match(item):
            check.fail(field, 'expected a Nova release (32.0.0) or a list '
                       'of them, got %s' % errors.show(item))
        release = tuple(int(part) for part in item.split('.'))
        if release[0] in found:
            check.fail(field, '%s and %s are of one series: give the first '
                       'release of each series with the fix' % (
                           '%d.%d.%d' % found[release[0]], item))
        found[release[0]] = release
    if not found:
        check.fail(field, 'expected a Nova release (32.0.0), got nothing')
    return tuple(sorted(found.values()))


def _text(check, value, field):
    if not isinstance(value, str) or not value.strip():
        check.fail(field, 'expected text, got %s' % checking.kind(value))
    return value


def get(bug_id):
    """The registered bug ``bug_id`` (``'1944759'``, ``'LP#1944759'``)."""
    key = re.sub(r'^(LP)?#?', '', str(bug_id).strip().upper())
    path = os.path.join(BUG_DIR, 'lp%s.yaml' % key)
    if not (key.isdigit() and os.path.isfile(path)):
        raise errors.UnknownName(
            'unknown bug %r; known: %s' % (bug_id, ', '.join(
                '%s (%s)' % (b.id, b.title) for b in known())))
    return load(path)


def known():
    """Every registered bug, in ID order."""
    return [load(path) for path in paths()]


def related_bug(bug_id):
    """Tie a test method to a Launchpad bug (as Tempest's decorator does).

    The method's name must carry the ID (``test_bug_1944759_...``) so that
    ``stestr run 1944759`` selects it; on failure the test gets a
    ``related bug`` detail and a hint with the link.
    """
    bug = get(bug_id)

    def decorator(test):
        if bug.id not in test.__name__:
            raise errors.HarnessError(
                '%s is tied to LP#%s but its name lacks the ID, so '
                '`stestr run %s` would miss it' % (test.__name__, bug.id,
                                                   bug.id))

        @functools.wraps(test)
        def wrapper(self, *args, **kwargs):
            try:
                return test(self, *args, **kwargs)
            except Exception:
                self.addDetail('related bug', content.text_content(
                    'This test guards LP#%s "%s": %s\nFixed by %s\n'
                    'Reproduce: harness reproduce %s'
                    % (bug.id, bug.title, bug.link, bug.fix, bug.id)))
                raise

        wrapper.related_bug = bug.id
        return wrapper
    return decorator
