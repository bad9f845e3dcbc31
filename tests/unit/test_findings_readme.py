"""findings/README.rst's "Upstream" table holds every finding, once.

Each finding file has one row: the file, whether a Launchpad bug of
Nova already describes it (a match, a partial match, or none found), and
the ``harness export report`` command that writes its report. The
table is read as text (docutils is not in the unit environment): a row
opens with ``   * - ``, its further cells with ``     - ``.
"""

import collections
import glob
import os
import re
import shlex

from harness.runners import cli
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FINDINGS = os.path.join(ROOT, 'findings')
README = os.path.join(FINDINGS, 'README.rst')

_ROW = re.compile(r'^   \* - (.*)$')
_CELL = re.compile(r'^     - (.*)$')
_MORE = re.compile(r'^       (\S.*)$')
_FILE = re.compile(r'^``([a-z0-9_]+\.yaml)``$')
_VERDICT = re.compile(r'^(Match|Partial|None found)\b')
_LP = re.compile(r'LP#(\d+)')
_LINK = re.compile(r'`LP#(\d+) <https://bugs\.launchpad\.net/nova/\+bug/'
                   r'(\d+)>`__')


def upstream_section(text):
    """The text of the README's "Upstream" section, to its end."""
    match = re.search(r'^Upstream\n=+\n', text, re.MULTILINE)
    if match is None:
        raise AssertionError('findings/README.rst has no "Upstream" section')
    rest = text[match.end():]
    following = re.search(r'^\S.*\n[=-]+\n', rest, re.MULTILINE)
    return rest[:following.start()] if following else rest


def table_rows(section):
    """The list-table's rows, each a list of its cells' text."""
    rows = []
    for line in section.splitlines():
        row, cell, more = _ROW.match(line), _CELL.match(line), \
            _MORE.match(line)
        if row:
            rows.append([row.group(1)])
        elif cell and rows:
            rows[-1].append(cell.group(1))
        elif more and rows:
            rows[-1][-1] += ' ' + more.group(1)
    return rows


def finding_files():
    return sorted(os.path.basename(path)
                  for path in glob.glob(os.path.join(FINDINGS, '*.yaml')))


class UpstreamTableTest(testing.TestCase):

    def setUp(self):
        super().setUp()
        with open(README, encoding='utf-8') as f:
            self.rows = table_rows(upstream_section(f.read()))
        self.header, self.body = self.rows[0], self.rows[1:]

    def test_three_columns_under_their_header(self):
        self.assertEqual(['Finding', 'Upstream bug', 'Report command'],
                         self.header)
        for row in self.body:
            self.assertEqual(3, len(row), row[0])

    def test_every_finding_has_exactly_one_row(self):
        named = collections.Counter(
            _FILE.match(row[0]).group(1) if _FILE.match(row[0]) else row[0]
            for row in self.body)
        self.assertEqual([], sorted(name for name, count in named.items()
                                    if count > 1))
        self.assertEqual(finding_files(), sorted(named))

    def test_every_row_names_an_existing_finding(self):
        for row in self.body:
            match = _FILE.match(row[0])
            self.assertIsNotNone(match, row[0])
            self.assertTrue(
                os.path.isfile(os.path.join(FINDINGS, match.group(1))),
                row[0])

    def test_the_command_reports_the_rows_file(self):
        parser = cli.build_parser()
        for row in self.body:
            name = _FILE.match(row[0]).group(1)
            self.assertEqual(
                '``harness export report findings/%s``' % name, row[2])
            words = shlex.split(row[2].strip('`'))
            self.assertEqual('harness', words[0])
            args = parser.parse_args(words[1:])
            self.assertEqual(('export', 'report', 'findings/' + name),
                             (args.command, args.format, args.file))

    def test_every_row_says_match_partial_or_none_found(self):
        for row in self.body:
            self.assertRegex(row[1], _VERDICT, row[0])
            if row[1].startswith('None found'):
                # It says what was searched.
                self.assertIn('searched', row[1], row[0])

    def test_every_bug_is_a_launchpad_link_to_itself(self):
        for row in self.body:
            named = _LP.findall(row[1])
            links = _LINK.findall(row[1])
            for text, target in links:
                self.assertEqual(text, target, row[0])
            # Every LP#N in the cell is a link's text.
            self.assertEqual(len(named), len(links), row[0])


class TableReaderTest(testing.TestCase):
    """The reader itself: what it makes of a small table."""

    TEXT = (
        'Intro\n=====\n\ntext\n\nUpstream\n========\n\n'
        '.. list-table::\n   :header-rows: 1\n\n'
        '   * - Finding\n     - Upstream bug\n     - Report command\n'
        '   * - ``a.yaml``\n     - Partial: one\n       two\n'
        '     - ``harness export report findings/a.yaml``\n'
        '\nLater\n=====\n\n   * - ``b.yaml``\n')

    def test_reads_rows_cells_and_continuations_of_its_section(self):
        rows = table_rows(upstream_section(self.TEXT))
        self.assertEqual(
            [['Finding', 'Upstream bug', 'Report command'],
             ['``a.yaml``', 'Partial: one two',
              '``harness export report findings/a.yaml``']],
            rows)

    def test_a_readme_without_the_section_fails(self):
        self.assertRaises(AssertionError, upstream_section,
                          'Findings\n========\n\ntext\n')
