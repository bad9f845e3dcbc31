"""A finding as a bug report in Nova's Launchpad template.

``harness export report FINDING`` writes, ready to paste into a new
Launchpad bug of Nova: a summary (the scenario's name), the description
(the finding file's header: what happens), the steps to reproduce (the
scenario file, and the exported Nova functional test, or why the
exporter refuses it), the expected result (the header's documented
behaviour), the actual result (the step that fails, what differs, and
the allocation timeline up to it, from a run on the installed Nova) and
the environment (Nova's version and the concurrency mode it ran in).

``render`` builds the text from what a run gave (``Outcome``), which the
command line's ``harness export report`` makes by running the finding's
scenario once, expectations only (the findings fail alike with and
without the invariants); this module runs nothing.
"""

import dataclasses
import re
import typing

from harness.core import scenario as scenario_mod
from harness.export import nova_test
from harness.export import refusal

# Paragraph openings of a finding's header (findings/README.rst).
_EXPECTED = re.compile(r'^(Documented behaviour expected|Expected)\b')
_HOSTS = re.compile(r'^Hosts?:')


@dataclasses.dataclass
class Outcome(object):
    """What a run of the finding gave, for its report."""
    # The failure's message (the step, what differs), None if it passed.
    failure: typing.Optional[str]
    # The allocation timeline up to the end of the run, rendered.
    timeline: str
    nova_version: str
    concurrency: str


def header(path):
    """The finding file's leading comment, as paragraphs of text."""
    paragraphs, lines = [], []
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            text = line[1:].strip()
            if not text:
                continue
            if lines and (_EXPECTED.match(text) or _HOSTS.match(text)):
                paragraphs.append(' '.join(lines))
                lines = []
            lines.append(text)
    if lines:
        paragraphs.append(' '.join(lines))
    return paragraphs


def _split(paragraphs):
    """(description, expected, environment notes) of a header."""
    described, expected, notes = [], [], []
    for paragraph in paragraphs:
        if _EXPECTED.match(paragraph):
            expected.append(_EXPECTED.sub('', paragraph).lstrip(' :'))
        elif _HOSTS.match(paragraph):
            notes.append(paragraph)
        else:
            text = re.sub(r'^Finding:\s*', '', paragraph)
            described.append(text[:1].upper() + text[1:])
    return described, expected, notes


def _exported(path):
    """The exported test, whether it imports the harness, or the refusal.

    A finding Nova's fixtures alone cannot express (hosts with options of
    their own) may still export with the harness imported for that one
    thing (``--with-harness``): a report gives that test rather than none.
    """
    try:
        return nova_test.export(path), False, None
    except refusal.Refused as exc:
        refused = str(exc)
    try:
        return nova_test.export(path, with_harness=True), True, None
    except refusal.Refused:
        return None, False, refused


def _indent(text):
    return '\n'.join(('    ' + line).rstrip() for line in text.splitlines())


def _section(title):
    return ['', title, '=' * len(title), '']


def render(path, outcome):
    """The report's text for the finding at ``path`` and a run's outcome."""
    _, scenarios = scenario_mod.load_file(path)
    described, expected, notes = _split(header(path))
    with open(path) as f:
        scenario_text = f.read()
    test, with_harness, refused = _exported(path)
    summary = '; '.join(scenario.name for scenario in scenarios)
    out = ['Summary: %s' % summary]
    out += _section('Description')
    out += described or ['(the finding file has no description)']
    out += _section('Steps to reproduce')
    out += ['As a nova-harness scenario (harness run FILE), on the fake '
            'hosts or', 'host profiles it names:', '',
            _indent(scenario_text.rstrip('\n')), '']
    if test is not None and with_harness:
        out += ["As a functional test in Nova's tree (harness export "
                'nova-test --with-harness),', 'which fails on this Nova at '
                'the same step; run it with python -m testtools.run,',
                'nova-harness installed: Nova\'s test config is one per '
                'process, and the', 'hosts here have options of their own '
                '(harness.PerHostConfig gives each', "compute its own, as "
                "each has its own nova.conf in a deployment):", '',
                _indent(test.rstrip('\n'))]
    elif test is not None:
        out += ["As a functional test in Nova's tree (harness export "
                'nova-test), which', "fails on this Nova at the same step; "
                'run it with python -m testtools.run:', '',
                _indent(test.rstrip('\n'))]
    else:
        out += ['(No Nova functional test: %s)' % refused]
    out += _section('Expected result')
    out += expected or ['(the finding file states no expected behaviour)']
    out += _section('Actual result')
    if outcome.failure is None:
        out += ['The scenario passed on this Nova: the finding does not '
                'reproduce here.']
    else:
        out += [_indent(outcome.failure.rstrip('\n'))]
    out += ['', 'Allocations, step by step:', '',
            _indent(outcome.timeline.rstrip('\n'))]
    out += _section('Environment')
    out += ['1. Nova %s, with Placement, as installed from its release '
            '(a single' % outcome.nova_version,
            '   process: nova-harness, real services, fake hypervisors).',
            '2. Hypervisor: %s.' % _hypervisors(scenarios),
            '3. Storage: local disk (the fake drivers\').',
            '4. Networking: none (servers booted without ports).',
            '5. Concurrency mode of nova-compute: %s.' % outcome.concurrency]
    out += ['   %s' % note for note in notes]
    return '\n'.join(out) + '\n'


def _hypervisors(scenarios):
    kinds = set()
    for scenario in scenarios:
        for host in scenario.hosts.values():
            kinds.add('libvirt (fake libvirt, host profile %s)'
                      % host.profile if host.profile
                      else 'the fake driver (%s)' % host.driver)
    return '; '.join(sorted(kinds))
