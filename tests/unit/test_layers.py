"""The layers hold: the core stays Nova-free, nothing imports in a circle.

``harness.core`` is what the loader, the checks and the unit tests stand
on; importing Nova (and with it eventlet's monkey-patching of the whole
process) there would make every unit test pay Nova's start-up and run on
a patched interpreter. A circle between modules makes the import order
decide which half sees the other half-initialised, and ties layers that
should depend one way; so does an import against the layers' direction,
even one inside a function, which the Nova-free check cannot see until it
runs. All of these creep in silently, so they are tested.

A circle may run through a package's ``__init__``: ``from P import x``
(and ``import P.x as y``) looks ``x`` up in package ``P``, so it needs
``P``'s ``__init__`` to have run, with everything that ``__init__``
imports to re-export it. The circle check counts such a read as an
import of ``P`` itself, whatever ``x`` is: a module of ``P`` that takes a
sibling through ``P``, while ``P``'s ``__init__`` imports that module,
runs when ``P`` is half-initialised (it works only while ``x`` is a
submodule Python falls back to). The layer check counts the modules
the statements name (``from harness import bugs`` uses the bugs layer,
not the public names).

Each import check runs in a fresh interpreter: this test process may
already hold Nova, imported by another test of the same worker.
"""

import ast
import json
import os
import pkgutil
import re
import subprocess
import sys
import textwrap

import harness
from harness import testing

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE_DIR = os.path.join(REPO, 'harness')

#: What the core and ``import harness`` must not bring in.
WATCHED = ('nova', 'eventlet')

#: Layer -> the layers its modules may import, statically, anywhere in
#: a module (a function-level import runs too, later). One direction: the
#: core at the bottom, the cloud and the bugs on it, the runners on those,
#: the test cases on top. ``harness`` itself (the public names) may import
#: every layer, and no layer may import it: it is the users' entrance, not
#: a shortcut.
LAYERS = {
    'core': set(),
    'cloud': {'core'},
    # A bug's reintroduction patches Nova, maybe through the cloud's parts.
    'bugs': {'core', 'cloud'},
    # The HTML reports: drawn from timelines (Nova only read, lazily, by
    # the recorder a run is given).
    'report': {'core'},
    # Scenarios written as other projects' tests (no Nova imported).
    'export': {'core'},
    'runners': {'core', 'cloud', 'bugs', 'report', 'export'},
    'testing': {'core', 'cloud', 'bugs', 'runners', 'report', 'export'},
}

#: Public names whose import stays Nova-free: unit tests derive from the
#: test cases, load scenarios (and build tests of them), tie tests to
#: bugs and catch the errors without standing anything up.
NOVA_FREE_EXPORTS = (
    'HarnessError', 'OperationFailed', 'Problem', 'ProfileError',
    'ScenarioError', 'ScenarioFailed', 'ScenarioTestCase', 'TestCase',
    'build_tests', 'load_scenarios', 'related_bug')

# Imports the given modules one by one in a fresh interpreter and prints,
# as JSON, the first that brought a watched package into sys.modules, with
# the harness frames of the stack that asked for it (who pulled it in).
_IMPORT_PROBE = textwrap.dedent('''
    import importlib
    import json
    import os
    import sys
    import traceback

    WATCHED = %(watched)r
    REPO = %(repo)r
    asked = {}


    class Spy(object):
        """Notes the stack of the first import of each watched package."""

        def find_spec(self, name, path=None, target=None):
            top = name.partition('.')[0]
            if top in WATCHED and top not in asked:
                asked[top] = ['%%s:%%d: %%s' %% (
                    os.path.relpath(f.filename, REPO), f.lineno, f.line)
                    for f in traceback.extract_stack()[:-1]
                    if f.filename.startswith(REPO)]
            return None


    sys.meta_path.insert(0, Spy())
    result = {'imported': [], 'offender': None}
    for module in sys.argv[1:]:
        importlib.import_module(module)
        result['imported'].append(module)
        pulled = [top for top in WATCHED if top in sys.modules]
        if pulled:
            result['offender'] = {'module': module, 'pulled': pulled,
                                  'stacks': {t: asked.get(t) for t in pulled}}
            break
    print(json.dumps(result))
''')


def python(code, *args):
    """Run ``code`` in a fresh interpreter on this checkout; its result."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [REPO] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep)
                  if p])
    return subprocess.run([sys.executable, '-c', code] + list(args),
                          capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=300)


def submodules(path, prefix):
    """Dotted names of every module and package under ``path``.

    Found with pkgutil, without importing any of them.
    """
    names = []
    for info in sorted(pkgutil.iter_modules([path], prefix),
                       key=lambda info: info.name):
        names.append(info.name)
        if info.ispkg:
            names += submodules(
                os.path.join(path, info.name.rpartition('.')[2]),
                info.name + '.')
    return names


def harness_modules():
    """{dotted name: file} for every module of the harness package."""
    modules = {}
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(files):
            if not name.endswith('.py'):
                continue
            path = os.path.join(root, name)
            parts = os.path.relpath(path, REPO)[:-3].split(os.sep)
            if parts[-1] == '__init__':
                parts.pop()
            modules['.'.join(parts)] = path
    return modules


def from_module(node, package):
    """The dotted name a ``from`` import in ``package`` takes names from."""
    if not node.level:
        return node.module
    base = package
    for _ in range(node.level - 1):
        base = base.rpartition('.')[0]
    return '%s.%s' % (base, node.module) if node.module else base


def imported_modules(module, is_package, source, known):
    """[(harness module imported, line)] by ``module``'s source.

    Every ``import`` and ``from ... import`` statement counts, wherever it
    stands (a function body, an ``if``), since any of them runs sooner or
    later. ``from harness.x import y`` is an import of ``harness.x.y``
    when that is a module, else of ``harness.x``. Imports by string
    (``importlib.import_module``: ``harness``'s lazy public names, the
    step registry's discovery, a bug's reintroduction) are not statements
    and are not counted: they run on demand, after every module involved
    has finished importing, so they cannot meet a half-initialised one.
    """
    package = module if is_package else module.rpartition('.')[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in known:
                    name = name.rpartition('.')[0]
                if name:
                    found.append((name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            if base not in known:
                continue
            for alias in node.names:
                target = '%s.%s' % (base, alias.name)
                found.append((target if target in known else base,
                              node.lineno))
    return found


def packages_read(module, is_package, source, packages):
    """[(package, line)] whose namespace ``module``'s imports read.

    ``from P import x`` and ``import P.x as y`` look ``x`` up in package
    ``P`` (in its ``__init__``'s names and re-exports first), so they
    depend on ``P``'s ``__init__``, whatever ``x`` is. ``import P.x``
    binds ``P`` without reading it, and ``from P.x import y`` reads the
    module ``P.x`` (an edge ``imported_modules`` gives already).
    """
    package = module if is_package else module.rpartition('.')[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            if base in packages:
                found.append((base, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None:
                    continue
                parts = alias.name.split('.')
                for end in range(1, len(parts)):
                    name = '.'.join(parts[:end])
                    if name in packages:
                        found.append((name, node.lineno))
    return found


def graph_of(sources, reads=True):
    """{module: {imported module: 'file:line'}} of ``sources``.

    ``sources`` is {dotted name: (file, text)}; with ``reads``, a read
    of a package's namespace counts as an import of the package
    (``packages_read``).
    """
    packages = {module for module, (path, _) in sources.items()
                if path.endswith('__init__.py')}
    graph = {}
    for module, (path, text) in sources.items():
        is_package = module in packages
        found = imported_modules(module, is_package, text, sources)
        if reads:
            found += packages_read(module, is_package, text, packages)
        edges = graph.setdefault(module, {})
        for target, line in sorted(found, key=lambda edge: edge[1]):
            # A module naming itself (``from . import x`` in a package
            # whose x is a name, not a module) is no circle.
            if target != module:
                edges.setdefault(target, '%s:%d' % (
                    os.path.relpath(path, REPO), line))
    return graph


def import_graph(reads=True):
    """``graph_of`` the whole package."""
    sources = {}
    for module, path in harness_modules().items():
        with open(path, encoding='utf-8') as source:
            sources[module] = (path, source.read())
    return graph_of(sources, reads)


def cycles(graph):
    """One cycle through each strongly connected group of modules.

    Each is a list of modules whose last imports the first; the groups
    are found with Tarjan's algorithm.
    """
    index = {}
    low = {}
    stack = []
    on_stack = set()
    groups = []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    found = []
    for group in groups:
        start = min(group)
        # Shortest way back to start inside the group (breadth first).
        paths = {start: [start]}
        queue = [start]
        cycle = None
        while queue and cycle is None:
            node = queue.pop(0)
            for nxt in sorted(graph[node]):
                if nxt == start:
                    cycle = paths[node]
                    break
                if nxt in group and nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    queue.append(nxt)
        found.append(cycle)
    return found


def render_cycle(graph, cycle):
    hops = cycle + [cycle[0]]
    return '\n'.join(['  %s' % hops[0]] + [
        '  -> %s  (%s)' % (b, graph[a][b]) for a, b in zip(hops, hops[1:])])


class TestCoreIsNovaFree(testing.TestCase):

    def test_core_modules_found(self):
        # Guards the next test against passing on an empty list.
        found = submodules(os.path.join(PACKAGE_DIR, 'core'),
                           'harness.core.')
        self.assertIn('harness.core.scenario', found)
        self.assertIn('harness.core.errors', found)
        if os.path.isdir(os.path.join(PACKAGE_DIR, 'core', 'steps')):
            self.assertIn('harness.core.steps.base', found)

    def test_importing_the_core_imports_neither_nova_nor_eventlet(self):
        modules = ['harness', 'harness.core'] + submodules(
            os.path.join(PACKAGE_DIR, 'core'), 'harness.core.')
        result = python(_IMPORT_PROBE % {'watched': WATCHED, 'repo': REPO},
                        *modules)
        self.assertEqual(0, result.returncode, result.stderr)
        report = json.loads(result.stdout)
        offender = report['offender']
        if offender:
            self.fail('importing %s imported %s; asked for by:\n%s' % (
                offender['module'], ' and '.join(offender['pulled']),
                '\n'.join('  %s:\n    %s' % (top, '\n    '.join(
                    stack or ['(no harness frame)']))
                    for top, stack in offender['stacks'].items())))
        self.assertEqual(modules, report['imported'])


class TestNoImportCircles(testing.TestCase):

    def test_no_module_imports_itself_through_others(self):
        # Reads of a package's namespace count (the module docstring).
        graph = import_graph()
        found = cycles(graph)
        self.assertEqual([], found, 'import circles in harness/:\n%s' % (
            '\n'.join(render_cycle(graph, c) for c in found)))

    def test_layers_import_downwards_only(self):
        # The modules named: which layer's code a module uses.
        graph = import_graph(reads=False)
        wrong = []
        for module, edges in sorted(graph.items()):
            layer = module.split('.')[1] if '.' in module else None
            if layer is None:
                continue
            self.assertIn(layer, LAYERS, 'a new layer? add it to LAYERS')
            for target, where in sorted(edges.items()):
                other = target.split('.')[1] if '.' in target else 'harness'
                if other != layer and other not in LAYERS[layer]:
                    wrong.append('  %s imports %s  (%s)' % (
                        module, target, where))
        self.assertEqual([], wrong, 'imports against the layers (%s):\n%s'
                         % ('; '.join('%s may import %s' % (
                             layer, ', '.join(sorted(allowed)) or 'none')
                             for layer, allowed in LAYERS.items()),
                            '\n'.join(wrong)))

    def test_the_graph_is_the_package(self):
        # Guards the test above against an empty or unresolved graph.
        graph = import_graph()
        self.assertIn('harness', graph)
        self.assertIn('harness.core.errors', graph)
        # The runner drives the cloud: an edge any layout keeps.
        self.assertTrue([target for target in graph['harness.runners.runner']
                         if target.startswith('harness.cloud.')])

    def test_imports_resolve_to_modules(self):
        known = {'harness', 'harness.core', 'harness.core.errors',
                 'harness.core.scenario', 'harness.cloud',
                 'harness.cloud.faults', 'harness.testing',
                 'harness.testing.cases'}
        source = textwrap.dedent('''
            import os
            import harness.core.errors
            from harness.core import errors, scenario as s
            from harness.testing.cases import TestCase
            from . import faults
            from .. import core

            def later():
                from harness.core.scenario import load
                import harness.cloud.faults as f
        ''')
        self.assertEqual(
            [('harness.core.errors', 3),
             ('harness.core.errors', 4),
             ('harness.core.scenario', 4),
             ('harness.testing.cases', 5),
             ('harness.cloud.faults', 6),
             ('harness.core', 7),
             ('harness.core.scenario', 10),
             ('harness.cloud.faults', 11)],
            sorted(imported_modules('harness.cloud.fixture', False, source,
                                    known), key=lambda edge: edge[1]))

    def test_reads_of_a_package_resolve_to_it(self):
        packages = {'harness', 'harness.core', 'harness.report'}
        source = textwrap.dedent('''
            import harness.report.page
            import harness.report.svg as svg
            from harness.report import page
            from harness.report.page import Run
            from harness import report
            from . import recorder
            from .. import core

            def later():
                from harness.core import errors
        ''')
        self.assertEqual(
            [('harness', 3), ('harness.report', 3),
             ('harness.report', 4),
             ('harness', 6),
             ('harness.report', 7),
             ('harness', 8),
             ('harness.core', 11)],
            sorted(packages_read('harness.report.page', False, source,
                                 packages), key=lambda read: read[1]))

    def test_a_circle_through_a_reexport_is_found(self):
        # The package re-exports a name of its module, and the module
        # takes a sibling through the package: no module imports itself,
        # yet the module runs while the package is half-initialised.
        sources = {
            'pkg': ('pkg/__init__.py', 'from pkg.mod import Name\n'),
            'pkg.mod': ('pkg/mod.py', 'from pkg import sibling\n'),
            'pkg.sibling': ('pkg/sibling.py', ''),
        }
        self.assertEqual([], cycles(graph_of(sources, reads=False)))
        graph = graph_of(sources)
        self.assertEqual([['pkg', 'pkg.mod']], cycles(graph))
        self.assertEqual('  pkg\n  -> pkg.mod  (pkg/__init__.py:1)\n'
                         '  -> pkg  (pkg/mod.py:1)',
                         render_cycle(graph, cycles(graph)[0]))
        # Taken by its own name, the sibling is no circle.
        sources['pkg.mod'] = ('pkg/mod.py',
                              'from pkg.sibling import thing\n')
        self.assertEqual([], cycles(graph_of(sources)))

    def test_the_package_reads_are_counted(self):
        # Guards the circle check against counting no read: the harness
        # takes modules through packages everywhere.
        graph = import_graph()
        self.assertIn('harness.core', graph['harness.core.scenario'])
        self.assertNotIn('harness.core',
                         import_graph(reads=False)['harness.core.scenario'])

    def test_a_circle_is_found_and_shown(self):
        graph = {'a': {'b': 'a.py:1'}, 'b': {'c': 'b.py:2'},
                 'c': {'a': 'c.py:3', 'd': 'c.py:4'}, 'd': {}}
        found = cycles(graph)
        self.assertEqual([['a', 'b', 'c']], found)
        self.assertEqual('  a\n  -> b  (a.py:1)\n  -> c  (b.py:2)\n'
                         '  -> a  (c.py:3)', render_cycle(graph, found[0]))


class TestPublicApi(testing.TestCase):

    def test_version_is_pyprojects(self):
        with open(os.path.join(REPO, 'pyproject.toml'),
                  encoding='utf-8') as source:
            text = source.read()
        # The [project] table's version (tomllib is 3.11+).
        match = re.search(r'^\[project\]$.*?^version\s*=\s*"([^"]+)"', text,
                          re.MULTILINE | re.DOTALL)
        self.assertIsNotNone(match, 'no version in pyproject.toml')
        self.assertEqual(match.group(1), harness.__version__)

    def test_pyprojects_packages_are_the_package_tree(self):
        # Listed by hand (the profiles' mapping rules out ``find``): a
        # package left out would be missing from the wheel only, and one
        # listed that is gone would fail the build.
        with open(os.path.join(REPO, 'pyproject.toml'),
                  encoding='utf-8') as source:
            text = source.read()
        listed = re.search(r'^\[tool\.setuptools\]$.*?^packages\s*=\s*'
                           r'\[(.*?)\]', text, re.MULTILINE | re.DOTALL)
        self.assertIsNotNone(listed, 'no packages list in pyproject.toml')
        listed = re.findall(r'"([^"]+)"', listed.group(1))
        self.assertEqual(len(set(listed)), len(listed))
        tree = {name for name, path in harness_modules().items()
                if path.endswith('__init__.py')}
        # Each folder mapped to a package name, and its folders.
        mapped = re.search(r'^\[tool\.setuptools\.package-dir\]$(.*?)^\[',
                           text, re.MULTILINE | re.DOTALL)
        for name, folder in re.findall(r'^"([^"]+)"\s*=\s*"([^"]+)"$',
                                       mapped.group(1) if mapped else '',
                                       re.MULTILINE):
            top = os.path.join(REPO, folder)
            for root, dirs, _ in os.walk(top):
                dirs[:] = [d for d in dirs if d != '__pycache__']
                inside = os.path.relpath(root, top)
                tree.add(name if inside == os.curdir else '%s.%s' % (
                    name, inside.replace(os.sep, '.')))
        self.assertIn('harness.core.steps', tree)
        self.assertIn('harness._fixtures.hosts', tree)
        self.assertEqual(sorted(tree), sorted(listed))

    def test_names_listed_once_and_in_dir(self):
        self.assertEqual(len(set(harness.__all__)), len(harness.__all__))
        self.assertLessEqual(set(harness.__all__), set(dir(harness)))
        self.assertIn('__version__', dir(harness))

    def test_import_harness_alone_keeps_nova_out(self):
        # dir() lists the names without resolving them.
        result = python(
            'import sys; import harness; dir(harness); '
            'print(sorted(m for m in %r if m in sys.modules))' % (WATCHED,))
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('[]', result.stdout.strip())

    def test_every_public_name_resolves(self):
        # In a fresh interpreter: Cloud, CloudPool and run_scenario import
        # Nova, which this process must not. The Nova-free names go first,
        # so whether they kept Nova out can be told.
        code = textwrap.dedent('''
            import json
            import sys
            import harness
            nova_free = %r
            order = list(nova_free) + [
                n for n in harness.__all__ if n not in nova_free]
            out = {'resolved': {}, 'nova_after_nova_free': None}
            for name in order:
                value = getattr(harness, name)
                out['resolved'][name] = '%%s.%%s' %% (
                    value.__module__, value.__qualname__)
                if name == nova_free[-1]:
                    out['nova_after_nova_free'] = [
                        m for m in %r if m in sys.modules]
            try:
                harness.no_such_name
            except AttributeError as exc:
                out['unknown'] = str(exc)
            print(json.dumps(out))
        ''') % (NOVA_FREE_EXPORTS, WATCHED)
        result = python(code)
        self.assertEqual(0, result.returncode, result.stderr)
        out = json.loads(result.stdout.splitlines()[-1])
        self.assertEqual(sorted(harness.__all__), sorted(out['resolved']))
        self.assertEqual('harness.testing.cases.TestCase',
                         out['resolved']['TestCase'])
        self.assertEqual('harness.cloud.fixture.Cloud',
                         out['resolved']['Cloud'])
        self.assertEqual([], out['nova_after_nova_free'],
                         'resolving %s imported Nova'
                         % ', '.join(NOVA_FREE_EXPORTS))
        self.assertEqual("module 'harness' has no attribute 'no_such_name'",
                         out['unknown'])
