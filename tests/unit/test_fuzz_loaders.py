"""Fuzzing the scenario and host profile loaders: any input either loads
or gets our own error (ScenarioError, ProfileError), never another
exception and never a hang.

Three kinds of generated input, each fed to the real ``scenario.load`` and
``profiles.load_profile`` through a file on disk:

* arbitrary YAML-ish structures (nested mappings, lists and scalars with
  odd keys, huge integers, floats, None, booleans, unicode) dumped to YAML;
* raw text mutations of valid and generated documents (truncation, byte
  flips, tabs, unbalanced brackets, anchors and aliases, tags, odd
  scalars);
* structure-aware mutations of the shipped scenarios and host profiles
  (fields deleted, replaced, retyped, renamed, moved).

Hypothesis runs derandomized with no example database, so the gate sees
the same documents every run; ``DOCUMENTS`` says how many each test
makes. Every interesting input found so far is kept, minimized, under
``tests/unit/data/fuzz_corpus/{scenario,profile}`` and loaded by
``TestCorpus``.

Loader bugs: an input that makes a loader raise anything but its own
error is a bug to fix in the loader, not here. The 33 found while writing
these tests (crashes on unhashable keys, huge numbers, non-UTF-8 files,
PyYAML constructor errors; memory blow-ups on alias bombs and CPU ranges
in the billions) are fixed (``harness/yamlsafe.py`` and the loaders'
bounds) and kept in the corpus. Should a new one be found before it is
fixed, list its corpus file in ``KNOWN_LOADER_BUGS`` (its corpus case then
fails, naming it) and its signature in ``KNOWN_SIGNATURES``;
``HARNESS_FUZZ_STRICT=1`` fails on those too.

The ``hang-*.yaml`` corpus files load in a child process bounded in CPU time
and address space, so a regression there cannot take the test run down.
"""

import contextlib
import glob
import os
import re
import signal
import subprocess
import sys
import traceback

import ddt
import fixtures
from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings
from hypothesis import strategies as st
import yaml

from harness.core import errors
from harness.core import profiles
from harness.core import scenario
from harness import testing

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCENARIO_DIR = os.path.join(TOP, 'tests', 'functional', 'scenarios')
CORPUS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          'data', 'fuzz_corpus')
STRICT = os.environ.get('HARNESS_FUZZ_STRICT', '') not in ('', '0')

# Examples each fuzz test runs, and the documents (loader calls) that
# makes: the arbitrary structures go through both loaders.
EXAMPLES = {
    'scenario_structures': 1200,
    'profile_structures': 1200,
    'scenario_text': 1500,
    'profile_text': 1500,
    'scenario_mutations': 1500,
    'profile_mutations': 1500,
}
DOCUMENTS = {name: count * (2 if name.endswith('_structures') else 1)
             for name, count in EXAMPLES.items()}
# The bound of one load, in seconds of the process's CPU time (user and
# system: ITIMER_PROF), not of the wall clock: a load is a few
# milliseconds, a hang (an alias bomb, a huge range) spins, and on a
# loaded machine the wall clock runs on while the test waits for a core.
HANG_SECONDS = 5


def _settings(name):
    return settings(max_examples=EXAMPLES[name], deadline=None,
                    derandomize=True, database=None, print_blob=False,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# -- known loader bugs (reported; fix the loader, then drop them here) -------

# Corpus file (relative to CORPUS_DIR) -> the bug it reproduces. The
# TestCorpus case of each of these FAILS until the loader is fixed.
# Every crash the fuzzing found is fixed in the loaders; none is known.
KNOWN_LOADER_BUGS = {}

# How the fuzz tests recognise the known bugs above: (exception type, where
# it is raised: the innermost harness function, or "yaml" for PyYAML,
# message pattern). Anything else fails the fuzz test.
KNOWN_SIGNATURES = []


def _signature(exc):
    """(type, innermost harness or yaml function, message) of ``exc``."""
    where = '?'
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename
        if os.sep + 'yaml' + os.sep in path:
            where = 'yaml'
        elif os.sep + 'harness' + os.sep in path:
            where = '%s.%s' % (os.path.splitext(os.path.basename(path))[0],
                               frame.name)
    return type(exc).__name__, where, str(exc)[:200]


def _known(exc):
    kind, where, message = _signature(exc)
    for known_kind, known_where, pattern in KNOWN_SIGNATURES:
        if (kind == known_kind and known_where in ('*', where)
                and pattern in message):
            return True
    return False


# -- loading one document, bounded ---------------------------------------

class Hang(Exception):
    """A load ran longer than HANG_SECONDS of CPU time."""


@contextlib.contextmanager
def _bounded(seconds=HANG_SECONDS):
    def alarm(signum, frame):
        raise Hang('a load ran over %ss of CPU time' % seconds)
    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _write(path, text):
    data = text if isinstance(text, bytes) else text.encode(
        'utf-8', 'surrogatepass')
    with open(path, 'wb') as out:
        out.write(data)
    return path


def _outcome(load, own_error, path):
    """'loaded' or 'refused'; anything else propagates."""
    with _bounded():
        try:
            load(path)
        except own_error as exc:
            if path not in str(exc):
                raise AssertionError('%s does not name the file %s: %s'
                                     % (own_error.__name__, path, exc))
            return 'refused'
    return 'loaded'


class FuzzTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.scenario_path = os.path.join(self.dir, 'fuzz-scenario.yaml')
        self.profile_path = os.path.join(self.dir, 'fuzz-profile.yaml')
        self.outcomes = {}

    def _check(self, load, own_error, path, text):
        _write(path, text)
        problem = None
        try:
            result = _outcome(load, own_error, path)
        except Hang:
            problem = 'HANG: a load ran over %ss on:\n%s' % (
                HANG_SECONDS, _show(text))
        except AssertionError:
            raise
        except Exception as exc:
            if STRICT or not _known(exc):
                problem = '%s escaped the loader (%r) on:\n%s\n%s' % (
                    type(exc).__name__, _signature(exc), _show(text),
                    ''.join(traceback.format_exception(
                        type(exc), exc, exc.__traceback__)[-6:]))
            result = 'known bug'
        if problem:
            # Outside the except block: no chained traceback in the report.
            self.fail(problem)
        self.outcomes[result] = self.outcomes.get(result, 0) + 1
        return result

    def check_scenario(self, text):
        return self._check(scenario.load, errors.ScenarioError,
                           self.scenario_path, text)

    def check_profile(self, text):
        return self._check(profiles.load_profile, errors.ProfileError,
                           self.profile_path, text)


def _show(text, limit=2000):
    shown = repr(text[:limit])
    return shown + (' ...(%d more)' % (len(text) - limit)
                    if len(text) > limit else '')


# -- strategies: arbitrary structures ------------------------------------

BIG_INTS = [0, 1, -1, 2 ** 31, 2 ** 32, 2 ** 63 - 1, -2 ** 63, 2 ** 64,
            10 ** 30, -10 ** 30, 10 ** 4000]
UNICODE = ['', ' ', '\t', '\n', 'caf\u00e9', '\u2603', '\U0001f600',
           '\u202e', '\ufeff', '\x00', '\x85', 'a\u0301', '\u0660\u0661',
           '\uff11\uff12']

text = st.text(st.characters(blacklist_categories=('Cs',)), max_size=12)
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.sampled_from(BIG_INTS),
    st.floats(allow_nan=True, allow_infinity=True),
    text, st.sampled_from(UNICODE))
keys = st.one_of(text, st.integers(-3, 3), st.booleans(), st.none(),
                 st.floats(allow_nan=False), st.sampled_from(UNICODE))
structures = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4)),
    max_leaves=10)

SCENARIO_KEYS = ('name', 'bugs', 'config', 'hosts', 'flavors', 'steps',
                 'expected_breaks', 'known_open_bug', 'description')
PROFILE_KEYS = tuple(profiles.TOP_KEYS)
STEP_KEYS = scenario.STEP_KINDS + ('expect', 'error')


def _shaped(top_keys):
    """Mappings whose keys are mostly the loader's own, to get deeper."""
    return st.dictionaries(
        st.one_of(st.sampled_from(top_keys), keys), structures,
        max_size=5)


# The generated documents are written with libyaml when there is one (the
# loaders under test read them with PyYAML's own pure-Python parser).
DUMPER = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)
FAST_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def _dump(doc, flow, unicode_ok):
    return yaml.dump(doc, Dumper=DUMPER, default_flow_style=flow,
                     allow_unicode=unicode_ok, sort_keys=False)


dump_style = st.tuples(st.sampled_from([None, False, True]), st.booleans())


# -- strategies: raw text mutations --------------------------------------

def _shipped_texts(paths):
    texts = []
    for path in sorted(paths):
        with open(path, encoding='utf-8') as source:
            texts.append(source.read())
    return texts


def _one_by_one(texts):
    """Each scenario of a shipped file as its own text, as written.

    A whole file takes the pure-Python YAML parser ~30 ms, one scenario
    a few; the fuzz budget goes further on single scenarios.
    """
    chunks = []
    for text in texts:
        parts = re.split(r'(?m)^(?=- )', text)
        chunks.extend(parts[0] + part for part in parts[1:])
    return chunks


SCENARIO_TEXTS = _one_by_one(_shipped_texts(
    glob.glob(os.path.join(SCENARIO_DIR, '*.yaml'))))
PROFILE_TEXTS = _shipped_texts(glob.glob(os.path.join(profiles.PROFILE_DIR,
                                                      '*.yaml')))

# Things to splice into YAML text: structure, anchors and aliases (small:
# real alias bombs run in a child process, see TestAliasBombs), tags,
# scalars that PyYAML resolves to odd types.
TOKENS = [
    '\t', ' ', '\n', '\r\n', '[', ']', '{', '}', ',', ':', ': ', '- ', '? ',
    '#', '"', "'", '|', '>', '&', '*', '!', '%', '@', '`', '---\n',
    '...\n', '\\', '\x00', '\x85', '\ufeff', '\u2028',
    '&a ', '*a', '*a ', '*undefined', '<<: *a\n', '&a [x, y] ',
    '&a {k: v} ', '[*a, *a, *a]', '&b [*a, *a, *a] ', '<<: ', '<<',
    '!!str ', '!!int ', '!!float ', '!!bool ', '!!null ', '!!binary ',
    '!!timestamp ', '!!set ', '!!omap ', '!!pairs ', '!!map ', '!!seq ',
    '!!python/object:os.system ', '!<tag:yaml.org,2002:str> ', '!local ',
    '%YAML 1.1\n---\n', '%TAG ! tag:example.com,2000:\n---\n',
    '~', 'null', 'true', 'True', 'yes', 'on', 'off', '.nan', '.inf',
    '-.inf', '1e400', '0x1F', '0o17', '017', '0b101', '190:20:30',
    '1_000', '+12', '2001-12-14', '2001-12-14t21:59:43.10-05:00',
    '2001-13-45', '2001-02-30', '1.5', '-0', '0-7', '^0', '1-0', '2M',
    '1G', 'CUSTOM_X', 'migration(vm1)',
]


@st.composite
def text_mutants(draw, seeds):
    """A seed YAML text (or a generated one) mutated 1-5 times."""
    if draw(st.integers(0, 4)) == 0:
        doc = draw(structures)
        flow, unicode_ok = draw(dump_style)
        base = _dump(doc, flow, unicode_ok)
    else:
        base = draw(st.sampled_from(seeds))
    data = bytearray(base.encode('utf-8'))
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(['truncate', 'flip', 'insert', 'insert',
                                   'insert', 'delete', 'dupline',
                                   'dropline', 'indent']))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == 'truncate':
            del data[at:]
        elif op == 'flip' and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == 'insert':
            token = draw(st.one_of(st.sampled_from(TOKENS), text))
            data[at:at] = token.encode('utf-8')
        elif op == 'delete':
            del data[at:at + draw(st.integers(1, 20))]
        else:
            lines = bytes(data).split(b'\n')
            index = draw(st.integers(0, len(lines) - 1))
            if op == 'dupline':
                lines.insert(index, lines[index])
            elif op == 'dropline':
                del lines[index]
            else:
                lines[index] = draw(st.sampled_from(
                    [b' ', b'\t', b'  ', b''])) + lines[index].lstrip()
            data = bytearray(b'\n'.join(lines))
    return bytes(data)


# -- strategies: structure-aware mutations -------------------------------

def _scenario_docs():
    docs = []
    for text in SCENARIO_TEXTS:
        doc = scenario.safe_load(text)
        docs.extend(doc if isinstance(doc, list) else [doc])
    return docs


def _profile_docs():
    return [yaml.safe_load(text) for text in PROFILE_TEXTS]


SCENARIO_DOCS = _scenario_docs()
PROFILE_DOCS = _profile_docs()

# Values that mean something to one loader or the other.
MEANINGFUL = [
    0, 1, 2, 7, 8, 1024, -1, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 30, 1.5,
    -0.0, float('nan'), float('inf'), float('-inf'), True, False, None,
    '', ' ', 'fake', 'xen', 'dev-1s-8c-smt2', 'no-such-profile',
    'no-such.yaml', '../no-such.yaml', 'dedicated', 'shared', 'vm1', 'vm2',
    'migration(vm1)', 'migration(', 'src', 'dst', 'host1', 'small',
    'large', 'source', 'dest', 'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB',
    'CUSTOM_X', 'custom_x', 'resources:VCPU', 'resources:CUSTOM_X',
    'hw:cpu_policy', 'finish_resize', 'conductor.x', 'instance.host',
    'migration.status=finished', 'migration.status=', 'ACTIVE',
    'update_available_resource', 'report_state', 'linux', 'consecutive',
    '0', '0-7', '0-3,^2', '^0', '1-0', '0-', '-1', '0,,1', '0-3,8-11',
    '\u0660-\u0663', '4K', '2M', '1G', '3M', 'compute', 'DEFAULT',
    'cpu_dedicated_set', 'reserved_huge_pages', 'node', 'size', 'count',
    [], {}, [[]], [None], {'a': None}, {None: None}, [0, 1], ['0-1'],
    {'node': 0, 'size': '2M', 'count': 1}, {'2M': 1}, {'server': 'vm1'},
    {'seconds': 1}, {'host': 'src'},
]
meaningful = st.sampled_from(MEANINGFUL)
values = st.one_of(meaningful, meaningful, scalars, structures)
odd_keys = st.one_of(st.sampled_from(
    list(SCENARIO_KEYS) + list(PROFILE_KEYS) + list(STEP_KEYS)
    + list(scenario.EXPECT_KEYS) + ['cpus', 'siblings', 'pages', 'socket',
                                    'memory_mb', 'server', 'flavor', 'host',
                                    'hosts', 'task', 'seconds', 'profile',
                                    'driver', 'extra_specs', 'vcpus', 'ram',
                                    'disk', 'before', 'on', 'run', 'times',
                                    'status', 'unknown']), keys)


def _paths(node, prefix=()):
    """Every (path, value) in a document, the root included."""
    found = [(prefix, node)]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, prefix + (key,)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, prefix + (index,)))
    return found


def _get(doc, path):
    for part in path:
        doc = doc[part]
    return doc


def _copy(node):
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


def _names(doc):
    """Strings already in the document: host, flavor, server names."""
    return sorted({value for _, value in _paths(doc)
                   if isinstance(value, str) and len(value) < 40}
                  | {key for path, _ in _paths(doc) for key in path
                     if isinstance(key, str) and len(key) < 40})


@st.composite
def structure_mutants(draw, docs):
    """A shipped document with 1-4 fields deleted, replaced, retyped..."""
    doc = _copy(draw(st.sampled_from(docs)))
    names = _names(doc)
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(doc)
        path, value = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(['delete', 'replace', 'replace',
                                   'retype', 'rename', 'add', 'swap',
                                   'name', 'duplicate']))
        new = None
        if op == 'replace':
            # A copy: MEANINGFUL's mappings are shared, and an 'add' into
            # one that holds itself would make a cycle.
            new = _copy(draw(values))
        elif op == 'name':
            new = draw(st.sampled_from(names))
        elif op == 'retype':
            new = draw(st.sampled_from([
                [value], {'x': value}, str(value), None, len(str(value)),
                {value: 1} if not isinstance(value, (dict, list)) else 1,
                -1 if isinstance(value, int) else 0.5]))
        elif op == 'swap':
            new = _copy(draw(st.sampled_from(paths))[1])
        elif op == 'add':
            if isinstance(value, dict):
                value[draw(odd_keys)] = _copy(draw(values))
            elif isinstance(value, list):
                value.insert(draw(st.integers(0, len(value))),
                             _copy(draw(values)))
            continue
        elif op == 'duplicate':
            if isinstance(value, list) and value:
                index = draw(st.integers(0, len(value) - 1))
                value.insert(index, _copy(value[index]))
            continue
        if not path:
            if op in ('replace', 'retype', 'swap', 'name'):
                doc = new
            continue
        parent = _get(doc, path[:-1])
        last = path[-1]
        if op == 'delete':
            del parent[last]
        elif op == 'rename' and isinstance(parent, dict):
            new_key = draw(st.one_of(odd_keys, st.sampled_from(names)))
            moved = parent.pop(last)
            parent[new_key] = moved
        elif op != 'rename':
            parent[last] = new
    return doc


def _safe_dump_or_none(doc, flow):
    try:
        return _dump(doc, flow, True)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        return None


# -- the fuzz tests ----------------------------------------------------------

class TestScenarioStructures(FuzzTestCase):

    @_settings('scenario_structures')
    @given(doc=st.one_of(structures, _shaped(SCENARIO_KEYS),
                         st.lists(_shaped(SCENARIO_KEYS), max_size=3)),
           style=dump_style)
    def test_arbitrary_structures(self, doc, style):
        text = _dump(doc, *style)
        self.check_scenario(text)
        self.check_profile(text)


class TestProfileStructures(FuzzTestCase):

    @_settings('profile_structures')
    @given(doc=st.one_of(structures, _shaped(PROFILE_KEYS)),
           style=dump_style)
    def test_arbitrary_structures(self, doc, style):
        text = _dump(doc, *style)
        self.check_profile(text)
        self.check_scenario(text)


class TestScenarioText(FuzzTestCase):

    @_settings('scenario_text')
    @given(data=text_mutants(SCENARIO_TEXTS))
    def test_text_mutations(self, data):
        self.check_scenario(data)


class TestProfileText(FuzzTestCase):

    @_settings('profile_text')
    @given(data=text_mutants(PROFILE_TEXTS))
    def test_text_mutations(self, data):
        self.check_profile(data)


class TestScenarioMutations(FuzzTestCase):

    @_settings('scenario_mutations')
    @given(doc=structure_mutants(SCENARIO_DOCS),
           flow=st.sampled_from([None, False, True]))
    def test_structure_mutations(self, doc, flow):
        text = _safe_dump_or_none(doc, flow)
        if text is not None:
            self.check_scenario(text)


class TestProfileMutations(FuzzTestCase):

    @_settings('profile_mutations')
    @given(doc=structure_mutants(PROFILE_DOCS),
           flow=st.sampled_from([None, False, True]))
    def test_structure_mutations(self, doc, flow):
        text = _safe_dump_or_none(doc, flow)
        if text is not None:
            self.check_profile(text)


class TestSeeds(FuzzTestCase):
    """The mutation seeds load as they are, so mutants start valid."""

    def test_seeds_load(self):
        for doc in SCENARIO_DOCS:
            self.assertEqual('loaded',
                             self.check_scenario(_dump(doc, None, True)))
        for doc in PROFILE_DOCS:
            self.assertEqual('loaded',
                             self.check_profile(_dump(doc, None, True)))


# -- the corpus --------------------------------------------------------------

def _corpus(kind):
    return sorted(os.path.relpath(path, CORPUS_DIR) for path in
                  glob.glob(os.path.join(CORPUS_DIR, kind, '*.yaml')))


# A child process loads one file, bounded in CPU time and address space,
# and prints the outcome on its last line. Past its CPU bound the kernel
# ends it with SIGXCPU; the wall-clock bound is only a backstop for a load
# that blocks (a start and a load take under half a second of CPU, one to
# two seconds of wall on a loaded two-core machine).
CHILD = r'''
import resource, sys, traceback
limit = %(limit)d
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
resource.setrlimit(resource.RLIMIT_CPU, (%(cpu)d, %(cpu)d + 1))
from harness.core import errors
from harness.core import profiles
from harness.core import scenario
kind, path = sys.argv[1], sys.argv[2]
load, own = ((scenario.load, errors.ScenarioError) if kind == 'scenario'
             else (profiles.load_profile, errors.ProfileError))
try:
    load(path)
    print('loaded')
except own as exc:
    print('refused' if path in str(exc) else 'unnamed: %%s' %% exc)
except BaseException as exc:
    traceback.print_exc()
    print('escaped: %%s: %%s' %% (type(exc).__name__, str(exc)[:200]))
'''
CHILD_CPU_SECONDS = 3
CHILD_WALL_SECONDS = 120
CHILD_MEMORY = 512 << 20


def _load_in_child(kind, path):
    """'loaded', 'refused', 'escaped: ...', 'unnamed: ...' or 'hang'."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [TOP] + [p for p in os.environ.get('PYTHONPATH', '').split(
            os.pathsep) if p]))
    try:
        done = subprocess.run(
            [sys.executable, '-c', CHILD % {'limit': CHILD_MEMORY,
                                            'cpu': CHILD_CPU_SECONDS},
             kind, path], capture_output=True, text=True,
            timeout=CHILD_WALL_SECONDS, env=env, cwd=TOP)
    except subprocess.TimeoutExpired:
        return 'hang: still running after %ss' % CHILD_WALL_SECONDS
    if done.returncode == -signal.SIGXCPU:
        return 'hang: over %ss of CPU time' % CHILD_CPU_SECONDS
    lines = done.stdout.strip().splitlines()
    if not lines:
        return 'escaped: no outcome (rc %s): %s' % (
            done.returncode, done.stderr[-500:])
    return lines[-1]


@ddt.ddt
class TestCorpus(testing.TestCase):
    """Each kept input loads or gets our error naming the file.

    The cases of KNOWN_LOADER_BUGS fail until their loader is fixed.
    """

    def _assert_clean(self, name, kind, load, own_error):
        path = os.path.join(CORPUS_DIR, name)
        bug = KNOWN_LOADER_BUGS.get(name)
        prefix = ('KNOWN LOADER BUG (reported, not fixed yet): %s\n' % bug
                  if bug else '')
        if os.path.basename(name).startswith('hang-'):
            outcome = _load_in_child(kind, path)
            if outcome not in ('loaded', 'refused'):
                self.fail('%s%s: %s' % (prefix, name, outcome))
            return
        problem = outcome = None
        try:
            outcome = _outcome(load, own_error, path)
        except Hang:
            problem = 'HANG (over %ss)' % HANG_SECONDS
        except AssertionError as exc:
            problem = str(exc)
        except Exception as exc:
            problem = '%s escaped the loader: %s\n%s' % (
                type(exc).__name__, str(exc)[:300],
                ''.join(traceback.format_exception(
                    type(exc), exc, exc.__traceback__)[-4:]))
        if problem:
            # Outside the except block: no chained traceback in the report.
            self.fail('%s%s: %s' % (prefix, name, problem))
        self.assertIn(outcome, ('loaded', 'refused'))

    @ddt.data(*_corpus('scenario'))
    def test_scenario(self, name):
        self._assert_clean(name, 'scenario', scenario.load,
                           errors.ScenarioError)

    @ddt.data(*_corpus('profile'))
    def test_profile(self, name):
        self._assert_clean(name, 'profile', profiles.load_profile,
                           errors.ProfileError)

    def test_known_bugs_are_in_the_corpus(self):
        for name in KNOWN_LOADER_BUGS:
            self.assertTrue(os.path.isfile(os.path.join(CORPUS_DIR, name)),
                            name)
