"""Nova's own regression tests, and the bug files that write them.

``corpus.yaml`` next to this module lists every module of Nova's
``nova/tests/functional/regressions`` (as of the release it names) with
what the harness makes of it, exactly one of:

``bug: <ID>``
    written as scenarios in ``lp<ID>.yaml``, whose ``nova_test`` names the
    module and what Nova's test asserts; ``part: <text>`` adds what of
    Nova's test the scenarios do not assert, and why (else it is whole);
``missing: <text>``
    about accounting, but not written: what the harness lacks to write it;
``not_accounting: <text>``
    what it tests instead (API behaviour, volumes, networking, ...);
``pending: <text>``
    about accounting, not written yet (no reason it cannot be);
``unreviewed: <text>``
    not yet read (the table counts these apart).

The docs' corpus table (``doc/source/reference/corpus.rst``) is made from
this file and the bug registry, never by hand. Reading it imports no Nova.
"""

import dataclasses
import os
import re

from harness import bugs as bugs_mod
from harness.core import checking
from harness.core import errors
from harness.core import yamlsafe

CORPUS_PATH = os.path.join(bugs_mod.BUG_DIR, 'corpus.yaml')
STATUSES = ('bug', 'missing', 'not_accounting', 'pending', 'unreviewed')
ENTRY_KEYS = ('module',) + STATUSES + ('part',)
RELEASE = re.compile(r'^[1-9][0-9]*\.[0-9]+\.[0-9]+$')
#: Where a module's source is shown (the release's tag on opendev).
SOURCE = ('https://opendev.org/openstack/nova/src/tag/%s/'
          'nova/tests/functional/regressions/%s.py')


@dataclasses.dataclass(frozen=True)
class Entry(object):
    """One regression test module of Nova's tree."""

    module: str
    status: str         # one of STATUSES
    text: str = ''      # the status's text (missing, not_accounting, ...)
    bug: object = None  # the ``Bug`` that writes it (status 'bug')
    part: str = ''      # what the bug's scenarios leave out, and why

    @property
    def accounting(self):
        return self.status in ('bug', 'missing', 'pending')

    @property
    def whole(self):
        return self.status == 'bug' and not self.part

    @property
    def bites(self):
        return self.status == 'bug' and self.bug.reintroducible


@dataclasses.dataclass(frozen=True)
class Corpus(object):
    release: str        # the Nova release whose tree it lists
    entries: tuple

    @property
    def modules(self):
        return [entry.module for entry in self.entries]

    def count(self, predicate):
        return sum(1 for entry in self.entries if predicate(entry))

    def source(self, module):
        return SOURCE % (self.release, module)


def load(path=CORPUS_PATH, registry=None):
    """The corpus of ``path``, checked against the bug registry.

    :param registry: bug ID -> ``Bug`` (default: the registered bugs)
    :raises ScenarioError: naming the file, the entry and the field
    """
    if registry is None:
        registry = {bug.id: bug for bug in bugs_mod.known()}
    with open(path, encoding='utf-8') as source:
        document = yamlsafe.load(source.read(), path, errors.ScenarioError)
    check = checking.Checker(path)
    check.mapping(document, 'the corpus')
    check.keys(document, ('nova', 'tests'), required=('nova', 'tests'))
    release = document['nova']
    if not isinstance(release, str) or not RELEASE.match(release):
        check.fail('nova', 'expected a Nova release (34.0.0), got %s'
                   % errors.show(release))
    entries = []
    for number, item in enumerate(check.sequence(
            document['tests'], 'tests'), 1):
        entries.append(_entry(check, item, 'tests[%d]' % number, registry))
    modules = [entry.module for entry in entries]
    for number, module in enumerate(modules, 1):
        if number > 1 and module <= modules[number - 2]:
            check.fail('tests[%d].module' % number, '%s is listed twice or '
                       'out of order (the list is sorted by module)'
                       % module)
    return Corpus(release=release, entries=tuple(entries))


def _entry(check, item, field, registry):
    check.mapping(item, field)
    check.keys(item, ENTRY_KEYS, required=('module',), field=field)
    module = item['module']
    if not isinstance(module, str) or \
            not bugs_mod.NOVA_TEST_MODULE.match(module):
        check.fail(field + '.module', 'expected a module name '
                   '(test_bug_1944759), got %s' % errors.show(module))
    given = [status for status in STATUSES if status in item]
    if len(given) != 1:
        check.fail(field, '%s needs exactly one of %s, got %s' % (
            module, ', '.join(STATUSES), ', '.join(given) or 'none'))
    status = given[0]
    if 'part' in item and status != 'bug':
        check.fail(field + '.part', 'only a module written as a bug\'s '
                   'scenarios (bug:) can be written in part')
    if status != 'bug':
        return Entry(module=module, status=status,
                     text=_text(check, item[status], field + '.' + status))
    bug_id = str(check.integer(item['bug'], field + '.bug', minimum=1))
    bug = registry.get(bug_id)
    if bug is None:
        check.fail(field + '.bug', 'LP#%s is not a registered bug (no '
                   'harness/bugs/lp%s.yaml)' % (bug_id, bug_id))
    if bug.nova_test is None or bug.nova_test.module != module:
        check.fail(field + '.bug', 'lp%s.yaml must say bug.nova_test.module:'
                   ' %s (it says %s)' % (bug_id, module, errors.show(
                       bug.nova_test.module if bug.nova_test else None)))
    part = _text(check, item['part'], field + '.part') \
        if 'part' in item else ''
    return Entry(module=module, status='bug', bug=bug, part=part)


def _text(check, value, field):
    if not isinstance(value, str) or not value.strip():
        check.fail(field, 'expected text, got %s' % checking.kind(value))
    return ' '.join(value.split())


def installed_modules():
    """The regression test modules of the installed Nova (imports Nova)."""
    import nova.tests.functional.regressions as regressions
    folder = os.path.dirname(regressions.__file__)
    return sorted(name[:-len('.py')] for name in os.listdir(folder)
                  if name.startswith('test_') and name.endswith('.py'))


def scenario_asserts(scenario, bug):
    """What one of ``bug``'s scenarios asserts, as short text.

    The expectation keys its steps use (with how many steps use each),
    what it declares to break, and the invariants its tests check.
    """
    keys = {}
    for step in scenario.steps:
        for key in (step.expect or {}):
            keys[key] = keys.get(key, 0) + 1
    parts = ['%s (%d)' % (key, count) if count > 1 else key
             for key, count in sorted(keys.items())]
    said = ['expect: ' + ', '.join(parts)] if parts else []
    if scenario.expected_breaks:
        said.append('expected to break: ' + ', '.join(
            sorted(scenario.expected_breaks)))
    if scenario.known_open_bug:
        said.append('known open bug LP#%s' % scenario.known_open_bug.bug)
    said.append('invariants: all' if not bug.invariants_off else
                'invariants: all but ' + ', '.join(
                    sorted(bug.invariants_off)))
    return '; '.join(said)
