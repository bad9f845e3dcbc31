"""The scenario reference, generated from the harness's own registries.

A small Sphinx extension. Its directives put in a page what the code
declares, so the reference cannot drift from it:

``.. harness-step-kinds::``
    every step kind of the step registry (``harness.core.steps``): its
    summary, fields (name, type, meaning), race points and an example,
    from the class attributes each kind declares;
``.. harness-checks::``
    every expectation key and invariant;
``.. harness-bugs::``
    the bug registry (``harness.bugs``) as a table;
``.. harness-corpus::``
    Nova's regression tests and the bug files that write them
    (``harness.bugs.corpus``);
``.. harness-cli::``
    the ``harness`` command's subcommands and options, from its argparse
    parsers;
``.. harness-profiles::``
    the host profiles shipped in ``fixtures/hosts``;
``.. harness-tox-envs::``
    the tox envs of ``tox.ini``, with their descriptions.

The text is made by the plain functions below (reStructuredText, no
Sphinx needed), which ``tests/unit/test_docs.py`` calls; the directives
only hand it to Sphinx.
"""

import argparse
import configparser
import importlib.util
import inspect
import os

#: The hosts, flavors, images and config every step kind's ``example``
#: names. A test (``tests/unit/test_docs.py``) loads each example in it,
#: so an example that names anything else, or a step that cannot stand
#: where it stands, fails there.
EXAMPLE_SCENARIO = '''\
name: the examples' scenario
hosts:
  src: {profile: dev-1s-8c-smt2}        # libvirt, 12 dedicated CPUs
  dst: {profile: dev-1s-8c-smt2}
  bm: {driver: fake, nodes: [n1, n2]}   # one compute service, two nodes
  bm2: {driver: fake, nodes: [n3]}
config:
  DEFAULT: {shelved_offload_time: -1}   # shelve keeps a server on its host
flavors:
  pin2: {vcpus: 2, ram: 512, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
  pin4: {vcpus: 4, ram: 1024, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
  small: {vcpus: 1, ram: 512, disk: 1}
images:
  other: {properties: {hw_disk_bus: virtio}}
'''


def example_document(unit):
    """The example scenario with ``unit``'s example as its steps."""
    from harness.core import yamlsafe   # the scenario loader's YAML
    document = yamlsafe.parse(EXAMPLE_SCENARIO)
    document['name'] = 'example of %s' % unit.name
    document['steps'] = yamlsafe.parse(unit.example)
    return document


# -- reStructuredText helpers ------------------------------------------------

def escape(text):
    """``text`` shown as it is, not read as inline markup."""
    for char in ('\\', '*', '`', '|', '_'):
        text = text.replace(char, '\\' + char)
    return text


def heading(text, char):
    return [text, char * len(text), '']


def indented(text, by='   '):
    return [by + line if line.strip() else '' for line in text.splitlines()]


def code_block(text, language):
    return ['.. code-block:: %s' % language, ''] + indented(
        text.rstrip('\n')) + ['']


def list_table(header, rows, widths=None):
    """A ``list-table``; each cell is reStructuredText (a string or lines)."""
    lines = ['.. list-table::', '   :header-rows: 1']
    if widths:
        lines.append('   :widths: %s' % ' '.join(map(str, widths)))
    lines.append('')
    for row in [header] + rows:
        for number, cell in enumerate(row):
            cell_lines = cell if isinstance(cell, list) else \
                (cell or '').splitlines() or ['']
            first = '   * - ' if number == 0 else '     - '
            lines.append((first + cell_lines[0]).rstrip())
            lines.extend(('       ' + line).rstrip()
                         for line in cell_lines[1:])
    return lines + ['']


def docstring_lines(obj):
    """``obj``'s docstring, as reStructuredText lines (none: [])."""
    text = inspect.getdoc(obj) or ''
    return _blank_before_terms(text.splitlines()) + [''] if text else []


def _blank_before_terms(lines):
    """A blank line before each definition-list term that lacks one.

    A docstring may start a term right under a paragraph, which
    reStructuredText reads as that paragraph's indented continuation.
    """
    out = []
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ''
        if out and out[-1].strip() and not out[-1].startswith(' ') \
                and line.strip() and not line.startswith(' ') \
                and following.startswith('    '):
            out.append('')
        out.append(line)
    return out


# -- step kinds --------------------------------------------------------------

def _points_text(unit, any_point):
    if unit.points is any_point:
        return ('any (a periodic task, or a compute that starts, may set '
                'off any operation: an injection before the step may name '
                'any point)')
    if not unit.points:
        return 'none'
    return ', '.join('``%s``' % point for point in sorted(unit.points))


def _traits(unit):
    traits = []
    if unit.operation:
        traits.append('may say ``error: <text>`` (Nova must then refuse '
                      'or fail it, with that text in the message)')
    if unit.moves:
        traits.append('a move: ``harness explore`` injects periodics at '
                      'its race points, on the hosts of its roles (%s)'
                      % ', '.join('``%s``' % role for role in unit.roles))
    if unit.arms:
        traits.append('only arms: nothing is checked after it, and it '
                      'fails if Nova writes anything while it runs')
    if unit.resting:
        traits.append('resting state: %s' % ', '.join(
            '%s ``%s``' % (key, value)
            for key, value in sorted(unit.resting.items())))
    return traits


def step_kind_rst(unit, any_point):
    """One step kind's section."""
    lines = ['.. _step-%s:' % unit.name, '']
    lines += heading('``%s``' % unit.name, '-')
    lines += [unit.summary, '']
    for trait in _traits(unit):
        lines.append('- ' + trait[0].upper() + trait[1:] + '.')
    lines.append('')
    lines += list_table(
        ['Field', 'Type', 'Meaning'],
        [['``%s``' % name, kind, meaning]
         for name, (kind, meaning) in unit.fields.items()],
        widths=(15, 25, 60))
    lines += ['Race points it can pass: ' + _points_text(unit, any_point)
              + '.', '']
    lines += ['Example:', ''] + code_block(unit.example, 'yaml')
    return lines


def step_kinds_rst(registry, names, any_point):
    """Every step kind: an overview table, then a section each.

    :param registry: step kind name -> unit (``steps.registry()``)
    :param names: the kinds in the order to show them (``steps.names()``)
    :param any_point: ``steps.base.ANY_POINT``
    """
    lines = ['Every example below is a scenario\'s ``steps:``, with the '
             'hosts, flavors, images and config of this scenario:', '']
    lines += code_block(EXAMPLE_SCENARIO, 'yaml')
    lines += list_table(
        ['Step', 'What it does'],
        [[':ref:`%s <step-%s>`' % (name, name), registry[name].summary]
         for name in names], widths=(20, 80))
    for name in names:
        lines += step_kind_rst(registry[name], any_point)
    return '\n'.join(lines) + '\n'


# -- expectation keys and invariants -----------------------------------------

def _check_rst(unit, label, expectation):
    lines = ['.. _%s-%s:' % (label, unit.name), '']
    lines += heading('``%s``' % unit.name, '~')
    lines += [unit.summary, '']
    lines += ['- %s.' % ('An accounting check' if unit.accounting
                         else 'Not an accounting check'), '']
    lines += docstring_lines(unit)
    if expectation:
        # A shape is a pattern (alternatives with |), not YAML.
        lines += ['Shape:', ''] + code_block(unit.shape, 'text')
        lines += ['Example:', ''] + code_block(unit.example, 'yaml')
    return lines


def checks_rst(expectations, invariants):
    """The check registry's expectation keys and invariants.

    :param expectations: key -> unit (``harness.core.checks.
        expectations()``): ``name``, ``accounting``, ``summary``, a
        docstring, ``shape`` and ``example``
    :param invariants: name -> unit (``harness.core.checks.invariants()``):
        the same less ``shape`` and ``example``
    """
    lines = _checks_section(
        'Expectation keys', "A step's ``expect:`` may give any of these "
        'keys.', expectations, 'expect', ['Key', 'What it checks'])
    lines += _checks_section(
        'Invariants', 'Checked after every step that is not only arming.',
        invariants, 'invariant', ['Invariant', 'What holds'])
    return '\n'.join(lines) + '\n'


def _checks_section(title, intro, units, label, header):
    """A table of ``units`` (name -> unit) linking to a section each."""
    lines = heading(title, '-') + [intro, '']
    lines += list_table(
        header, [[':ref:`%s <%s-%s>`' % (name, label, name), unit.summary]
                 for name, unit in units.items()], widths=(30, 70))
    for unit in units.values():
        lines += _check_rst(unit, label, expectation=label == 'expect')
    return lines


# -- bugs --------------------------------------------------------------------

def bugs_rst(bugs, module_exists=None):
    """The bug registry: a table, then each bug's story.

    :param bugs: ``harness.bugs.known()``
    :param module_exists: module name -> bool (whether the reintroduction
        module is there); by default, whether Python finds it
    """
    module_exists = module_exists or (
        lambda name: importlib.util.find_spec(name) is not None)
    rows = []
    for bug in bugs:
        names = [scenario.name for scenario in bug.scenarios]
        rows.append([
            '`LP#%s <%s>`__' % (bug.id, bug.link),
            escape(bug.title),
            bug.fixed_in_text or 'not recorded',
            ['%d:' % len(names), ''] + ['- ' + escape(name)
                                        for name in names],
            ('yes (``%s``)' % bug.module) if module_exists(bug.module)
            else 'no' + (': ' + escape(' '.join(
                bug.no_reintroduction.split()))
                if bug.no_reintroduction else '')])
    lines = list_table(['Bug', 'Title', 'Fixed in', 'Scenarios',
                        'Reintroduction'], rows,
                       widths=(12, 28, 14, 34, 12))
    lines += heading('Stories', '-')
    for bug in bugs:
        lines += ['LP#%s: %s' % (bug.id, escape(bug.title))]
        lines += indented(escape(' '.join(bug.story.split())))
        if bug.invariants_off:
            lines += indented('Its tests leave off: ' + '; '.join(
                '``%s`` (%s)' % (name, escape(' '.join(why.split())))
                for name, why in sorted(bug.invariants_off.items())) + '.')
        lines.append('')
    return '\n'.join(lines) + '\n'


# -- Nova's regression tests, as scenarios ----------------------------------

#: The corpus table's status column, per ``harness.bugs.corpus`` status.
CORPUS_STATUS = {'missing': 'cannot be written',
                 'not_accounting': 'not accounting',
                 'pending': 'not written yet',
                 'unreviewed': 'not yet read'}


def corpus_rst(corpus):
    """Nova's regression tests and the scenarios that write them.

    :param corpus: ``harness.bugs.corpus.load()``
    """
    from harness.bugs import corpus as corpus_mod
    entries = corpus.entries
    accounting = corpus.count(lambda e: e.accounting)
    whole = corpus.count(lambda e: e.whole)
    lines = [
        'Nova %s has %d regression test modules: %d about accounting '
        '(%d written whole, %d in part, %d that cannot be written, %d not '
        'written yet), %d about something else, %d not yet read. %d of the '
        'written ones bite (fail with their fix put back).' % (
            corpus.release, len(entries), accounting, whole,
            corpus.count(lambda e: e.status == 'bug' and e.part),
            corpus.count(lambda e: e.status == 'missing'),
            corpus.count(lambda e: e.status == 'pending'),
            corpus.count(lambda e: e.status == 'not_accounting'),
            corpus.count(lambda e: e.status == 'unreviewed'),
            corpus.count(lambda e: e.bites)), '']
    if accounting:
        lines += ['Written whole: %d of %d accounting tests (%d %%).' % (
            whole, accounting, 100 * whole // accounting), '']
    rows = []
    for entry in entries:
        module = '`%s <%s>`__' % (entry.module, corpus.source(entry.module))
        if entry.status != 'bug':
            rows.append([module, CORPUS_STATUS[entry.status], '',
                         escape(entry.text), '', ''])
            continue
        bug = entry.bug
        scenarios = []
        for scenario in bug.scenarios:
            scenarios += ['- %s: %s' % (escape(scenario.name), escape(
                corpus_mod.scenario_asserts(scenario, bug)))]
        rows.append([
            module,
            'in part: ' + escape(entry.part) if entry.part else 'whole',
            '`LP#%s <%s>`__' % (bug.id, bug.link),
            escape(' '.join(bug.nova_test.asserts.split())),
            scenarios,
            'yes' if entry.bites else 'no: ' + escape(' '.join(
                bug.no_reintroduction.split()))])
    lines += list_table(['Nova test', 'Written', 'Bug',
                         'Nova\'s test asserts', 'Scenarios assert',
                         'Bites'], rows, widths=(14, 12, 10, 24, 30, 10))
    return '\n'.join(lines) + '\n'


# -- host profiles -----------------------------------------------------------

def profiles_rst(profiles):
    """The shipped host profiles: a table, then each one's description.

    :param profiles: ``HostProfile``s (``profiles.load_profile``)
    """
    rows = []
    for profile in profiles:
        nova = profile.nova.get('compute', {})
        rows.append([
            '``%s``' % profile.name,
            '%d socket(s), %d NUMA cell(s)' % (profile.sockets,
                                               len(profile.cells)),
            '%d (%d per core)' % (len(profile.cpus),
                                  profile.threads_per_core),
            '%d GiB' % (profile.memory_mb // 1024),
            '``%s``' % nova['cpu_dedicated_set']
            if nova.get('cpu_dedicated_set') else 'none',
            '``%s``' % nova['cpu_shared_set']
            if nova.get('cpu_shared_set') else 'none',
            str(len(profile.devices))])
    lines = list_table(['Profile', 'Topology', 'CPUs', 'Memory',
                        'Dedicated CPUs', 'Shared CPUs',
                        'PCI devices (VFs too)'],
                       rows, widths=(22, 20, 12, 10, 14, 12, 10))
    for profile in profiles:
        lines += ['``%s``' % profile.name]
        lines += indented(escape(' '.join(profile.description.split())))
        lines.append('')
    return '\n'.join(lines) + '\n'


# -- tox envs ---------------------------------------------------------------

def tox_envs_rst(path):
    """The envs of the ``tox.ini`` at ``path``, each with its description.

    ``[testenv]`` describes the default envs (``py3``).
    """
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(path, encoding='utf-8')
    rows = []
    for section in tox.sections():
        if section == 'testenv':
            name = 'py3'
        elif section.startswith('testenv:'):
            name = section[len('testenv:'):]
        else:
            continue
        description = ' '.join(tox.get(section, 'description',
                                       fallback='').split())
        rows.append(['``tox -e %s``' % name,
                     escape(description) or '(no description)'])
    lines = list_table(['Env', 'What it runs'], rows, widths=(30, 70))
    return '\n'.join(lines) + '\n'


# -- the command line --------------------------------------------------------

def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help
                     for choice in action._choices_actions}
            return [(name, sub, helps.get(name))
                    for name, sub in action.choices.items()]
    return []


def _option_rst(parser, action):
    names = ', '.join(action.option_strings) if action.option_strings \
        else action.metavar or action.dest
    if action.option_strings and action.nargs != 0:
        metavar = action.metavar or action.dest.upper()
        names = ', '.join('%s %s' % (name, metavar)
                          for name in action.option_strings)
    text = parser._get_formatter()._expand_help(action) \
        if action.help else ''
    return ['.. option:: ' + names, ''] + indented(
        escape(' '.join(text.split())) or '(no help text)') + ['']


def parser_rst(program, parser, summary=None):
    """One program's section: what it does, its usage and options."""
    lines = ['.. program:: %s' % program, '']
    lines += heading('``%s``' % program, '-')
    if summary:
        lines += [escape(summary[0].upper() + summary[1:]) + '.', '']
    lines += ['::', ''] + indented(
        parser.format_usage().replace('usage: ', '', 1).rstrip()) + ['']
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction,
                               argparse._SubParsersAction)):
            continue
        lines += _option_rst(parser, action)
    return lines


def cli_rst(parser, determinism_parser):
    """Every subcommand of ``harness`` (``determinism``'s own options).

    :param parser: ``harness.runners.cli.build_parser()``
    :param determinism_parser: ``harness.runners.determinism.
        build_parser()``, which parses that verb's options
    """
    lines = []
    for name, sub, summary in _subparsers(parser):
        if name == 'determinism':
            sub = determinism_parser
        lines += parser_rst('harness %s' % name, sub, summary)
    return '\n'.join(lines) + '\n'


# -- Sphinx ------------------------------------------------------------------

def _step_kinds_text():
    from harness.core import steps
    from harness.core.steps import base
    return step_kinds_rst(steps.registry(), steps.names(), base.ANY_POINT)


def _checks_text():
    from harness.core import checks
    return checks_rst(checks.expectations(), checks.invariants())


def _bugs_text():
    from harness import bugs
    return bugs_rst(bugs.known())


def _corpus_text():
    from harness.bugs import corpus
    return corpus_rst(corpus.load())


def _cli_text():
    from harness.runners import cli
    from harness.runners.determinism import cli as determinism
    return cli_rst(cli.build_parser(), determinism.build_parser())


def _profiles_text():
    from harness.core import profiles
    return profiles_rst([profiles.load_profile(name)
                         for name in profiles.known_profiles()])


def _tox_envs_text():
    here = os.path.dirname(os.path.abspath(__file__))
    return tox_envs_rst(os.path.join(here, os.pardir, os.pardir, os.pardir,
                                     'tox.ini'))


TEXTS = {'harness-step-kinds': _step_kinds_text,
         'harness-checks': _checks_text,
         'harness-bugs': _bugs_text,
         'harness-corpus': _corpus_text,
         'harness-cli': _cli_text,
         'harness-profiles': _profiles_text,
         'harness-tox-envs': _tox_envs_text}


def setup(app):
    from docutils.parsers.rst import Directive

    def directive(make):
        class Generated(Directive):
            has_content = False

            def run(self):
                source = self.state_machine.input_lines.source(
                    self.lineno - self.state_machine.input_offset - 1)
                self.state_machine.insert_input(
                    make().splitlines(), source)
                return []
        return Generated

    for name, make in TEXTS.items():
        app.add_directive(name, directive(make))
    return {'parallel_read_safe': True, 'parallel_write_safe': True,
            'version': '1'}
