"""The HTML report from hand-made timelines: what it draws, what it marks.

No cloud: snapshots are built from records here, and the recorder's notes
(which guest holds which CPU, what fired) are given directly. The page is
read back with the standard library's HTML parser.
"""

import html.parser
import os
import types

import fixtures

from harness.core import errors
from harness.core.problems import Problem
from harness.core import snapshot as snap_mod
from harness.core import timeline as timeline_mod
from harness import report
from harness.report import page
from harness.report import recorder as recorder_mod
from harness import testing

INVENTORY = {'total': 16, 'reserved': 0, 'allocation_ratio': 1.0,
             'min_unit': 1, 'max_unit': 16, 'step_size': 1}


class Elements(html.parser.HTMLParser):
    """Every start tag as ``(tag, attributes)``."""

    def __init__(self, text):
        super().__init__()
        self.found = []
        self.chart = {}
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'svg':
            self.chart = attrs
        if tag == 'circle':
            # Which chart the point is in.
            attrs['chart'] = (self.chart.get('data-host'),
                              self.chart.get('data-rc'))
        self.found.append((tag, attrs))

    def points(self, host, rc, series):
        return [a for a in self.select('circle', data_series=series)
                if a['chart'] == (host, rc)]

    def select(self, tag, **want):
        """Elements of ``tag`` whose attributes include ``want``.

        ``data_step`` means ``data-step``; a class matches any of an
        element's classes; None, an attribute present with no value.
        """
        chosen = []
        for name, attrs in self.found:
            if name != tag:
                continue
            ok = True
            for key, value in want.items():
                key = key.replace('_', '-')
                if key == 'class':
                    ok = ok and value in attrs.get('class', '').split()
                elif value is None:
                    # Present, with no value (``selected``).
                    ok = ok and key in attrs
                else:
                    ok = ok and attrs.get(key) == str(value)
            if ok:
                chosen.append(attrs)
        return chosen


def provider(name, pcpu_used=0, vcpu_used=0):
    return snap_mod.Provider(
        name=name, uuid='uuid-' + name, generation=1, parent=None, root=name,
        inventories={'VCPU': dict(INVENTORY), 'PCPU': dict(INVENTORY),
                     'MEMORY_MB': dict(INVENTORY, total=4096)},
        usages={k: v for k, v in (('PCPU', pcpu_used),
                                  ('VCPU', vcpu_used)) if v})


def tracker(host, pinned=()):
    cell = snap_mod.Cell(id=0, cpus=(0, 1, 8, 9), pcpus=(2, 3, 10, 11),
                         cpu_usage=len(pinned), memory_mb=4096,
                         memory_usage=0, pinned_cpus=tuple(pinned),
                         pages={4: {'total': 100, 'used': 0, 'reserved': 0},
                                2048: {'total': 8, 'used': 2,
                                       'reserved': 0}})
    return snap_mod.Tracker(host=host, node=host, vcpus=16,
                            vcpus_used=len(pinned), memory_mb=4096,
                            memory_mb_used=0, local_gb=10, local_gb_used=0,
                            cells=(cell,))


def snapshot(pinned_src=(), held=None):
    held = held or {}
    return snap_mod.Snapshot(
        providers={'src': provider('src', sum(
            r.get('src', {}).get('PCPU', 0) for r in held.values())),
            'dst': provider('dst')},
        allocations=held,
        trackers={'src': tracker('src', pinned_src), 'dst': tracker('dst')})


def timeline(*snaps):
    line = timeline_mod.Timeline()
    for index, (label, snap) in enumerate(snaps):
        line.add(index, label, snap)
    return line


class FakeRecorder(object):
    """What a ``Recorder`` would have noted, by entry position."""

    def __init__(self, line, extras):
        self._by_id = {id(e): x for e, x in zip(line.entries, extras)}

    def extra(self, entry):
        return self._by_id.get(id(entry), recorder_mod.Extra())


def pinned_run():
    """Boot vm1 pinned to 2,10 on src; then the tracker drops them."""
    held = {'vm1': {'src': {'PCPU': 2}}}
    line = timeline(('start', snapshot()),
                    ('boot vm1', snapshot((2, 10), held)),
                    ('resize vm1', snapshot((), held)))
    guests = {'src': {2: 'vm1', 10: 'vm1'}}
    extras = [recorder_mod.Extra(),
              recorder_mod.Extra(guests=guests),
              recorder_mod.Extra(guests=guests, marks=[
                  (0, 'update_available_resource on source at before '
                      'finish_resize on dst (vm1)')])]
    return line, FakeRecorder(line, extras)


class TestCharts(testing.TestCase):

    def test_one_point_per_step_per_series(self):
        line, recorder = pinned_run()
        run = page.Run('pinned', line, recorder=recorder)
        doc = Elements(page.run_page(run))
        charts = doc.select('svg', data_host='src', data_rc='PCPU')
        self.assertEqual(1, len(charts))
        # PCPU: the tracker's pinned CPUs, usage, capacity.
        for series, values in (('usage', ['0', '2', '2']),
                               ('capacity', ['16', '16', '16']),
                               ('tracker pinned', ['0', '2', '0'])):
            src = doc.points('src', 'PCPU', series)
            self.assertEqual(['0', '1', '2'], [p['data-step'] for p in src])
            self.assertEqual(values, [p['data-value'] for p in src])
        # VCPU and MEMORY_MB have usage and capacity only: 7 series on
        # each of 2 providers, 3 steps each.
        self.assertEqual(2 * 7 * 3, len(doc.select('circle',
                                                   **{'class': 'point'})))

    def test_what_fired_is_marked_at_its_step(self):
        line, recorder = pinned_run()
        text = page.run_page(page.Run('pinned', line, recorder=recorder))
        doc = Elements(text)
        marks = doc.select('g', **{'class': 'mark'})
        self.assertEqual({'2'}, {m['data-step'] for m in marks})
        self.assertIn('update_available_resource on source at before '
                      'finish_resize', text)


class TestNumaMap(testing.TestCase):

    def cpus(self, doc, step):
        """CPU -> (class, guest) in src's map at ``step``."""
        found, inside = {}, False
        for tag, attrs in doc.found:
            if tag == 'div' and 'numa-step' in attrs.get('class', ''):
                inside = attrs['data-step'] == str(step)
            if tag == 'div' and 'numa-host' in attrs.get('class', ''):
                host = attrs['data-host']
            if inside and tag == 'span' and 'cpu' in attrs.get(
                    'class', '').split() and 'data-cpu' in attrs:
                if host == 'src':
                    found[int(attrs['data-cpu'])] = (
                        attrs['class'].split()[1], attrs.get('data-guest'))
        return found

    def test_pinned_cpus_show_their_guest_and_siblings_side_by_side(self):
        line, recorder = pinned_run()
        doc = Elements(page.run_page(page.Run('pinned', line,
                                              recorder=recorder)))
        cpus = self.cpus(doc, 1)
        self.assertEqual(('pinned', 'vm1'), cpus[2])
        self.assertEqual(('pinned', 'vm1'), cpus[10])
        self.assertEqual(('free', None), cpus[3])
        self.assertEqual(('shared', None), cpus[0])

    def test_a_guest_held_cpu_the_tracker_dropped_is_unpinned(self):
        line, recorder = pinned_run()
        doc = Elements(page.run_page(page.Run('pinned', line,
                                              recorder=recorder)))
        cpus = self.cpus(doc, 2)
        self.assertEqual(('unpinned', 'vm1'), cpus[2])
        self.assertEqual(('unpinned', 'vm1'), cpus[10])

    def test_pinned_without_a_guest_is_an_orphan(self):
        line, _ = pinned_run()
        doc = Elements(page.run_page(page.Run('pinned', line)))
        self.assertEqual(('orphan', '?'), self.cpus(doc, 1)[2])

    def test_siblings_from_the_profile_share_a_core(self):
        profile = types.SimpleNamespace(cells=[types.SimpleNamespace(
            id=0, siblings=(frozenset({0, 8}), frozenset({1, 9}),
                            frozenset({2, 10}), frozenset({3, 11})))])
        cell = snapshot().trackers['src'].cells[0]
        self.assertEqual([[0, 8], [1, 9], [2, 10], [3, 11]],
                         page._cores(cell, profile))
        self.assertEqual([[0], [1], [2], [3], [8], [9], [10], [11]],
                         page._cores(cell, None))


class TestWrongCells(testing.TestCase):

    def test_subjects_map_to_cells(self):
        held = {'vm1': {'src': {'PCPU': 2}},
                'migration(vm1)': {'dst': {'PCPU': 2}}}
        snap = snapshot((2, 10), held)
        cases = (
            (Problem('allocations', 'vm1 on src', {'PCPU': 1},
                     {'PCPU': 2}), {('vm1', 'src')}),
            (Problem('allocations', 'vm1', {'dst': {'PCPU': 2}},
                     {'src': {'PCPU': 2}}), {('vm1', 'src'), ('vm1', 'dst')}),
            (Problem('usages_add_up', 'provider src, PCPU', 2, 3),
             {(page.USAGE, 'src')}),
            (Problem('tracker_agrees', 'host src, pinned CPUs (PCPU)', 2, 0),
             {(page.TRACKER, 'src')}),
            (Problem('tracker_agrees', 'host src cell 0', text='x'),
             {(page.TRACKER, 'src')}),
            (Problem('pinned_cpus', 'src', 2, []), {(page.TRACKER, 'src')}),
            (Problem('usages', 'dst', {}, {}), {(page.USAGE, 'dst')}),
            (Problem('nothing_leaks', 'migration(vm1)', text='x'),
             {('migration(vm1)', 'dst')}),
            (Problem('servers', 'vm1 status', 'ACTIVE', 'ERROR'), set()),
        )
        for problem, cells in cases:
            self.assertEqual(cells, page.wrong_cells(problem, snap), problem)

    def test_the_wrong_cell_is_highlighted_with_expected_and_got(self):
        held = {'vm1': {'src': {'PCPU': 2}}}
        line = timeline(('start', snapshot()),
                        ('boot vm1', snapshot((2, 10), held)))
        problem = Problem('allocations', 'vm1 on src', {'PCPU': 1},
                          {'PCPU': 2}, 'allocations of vm1 on src: PCPU '
                          'expected 1, got 2', step=1)
        line.entries[1].problems = [problem]
        text = page.run_page(page.Run('wrong', line))
        doc = Elements(text)
        wrong = doc.select('td', **{'class': 'wrong'})
        self.assertEqual([('1', 'vm1', 'src')], [
            (c['data-step'], c['data-consumer'], c['data-provider'])
            for c in wrong])
        self.assertIn('expected PCPU=1', text)
        self.assertIn('got PCPU=2', text)


class TestPages(testing.TestCase):

    def test_names_are_escaped(self):
        line, _ = pinned_run()
        text = page.run_page(page.Run('<script>alert(1)</script>', line))
        self.assertNotIn('<script>alert', text)
        self.assertIn('&lt;script&gt;alert(1)', text)

    def test_no_network(self):
        line, recorder = pinned_run()
        text = page.run_page(page.Run('x', line, recorder=recorder))
        for needle in ('src="http', 'href="http', '@import', 'url(http'):
            self.assertNotIn(needle, text)

    def test_reproduce_marks_the_first_divergence(self):
        installed, _ = pinned_run()
        reintroduced, _ = pinned_run()
        reintroduced.entries[2].snapshot = snapshot(
            (), {'vm1': {'src': {'PCPU': 2}}})
        installed.entries[2].snapshot = snapshot(
            (2, 10), {'vm1': {'src': {'PCPU': 2}}})
        text = page.reproduce_page(
            'LP#1', 'intro', page.Run('x', installed, key='installed'),
            page.Run('x', reintroduced, key='reintroduced'))
        doc = Elements(text)
        rows = doc.select('tr', id='first-divergence')
        self.assertEqual(['2'], [r['data-step'] for r in rows])
        self.assertEqual(2, len(doc.select('section', **{'class': 'run'})))
        # Both maps open where the runs part.
        selected = doc.select('option', selected=None)
        self.assertEqual(['2', '2'], [o['value'] for o in selected])


class TestAttach(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.out = self.useFixture(fixtures.TempDir()).path

    def test_nothing_without_a_directory(self):
        self.useFixture(fixtures.EnvironmentVariable(report.ENV))
        line, _ = pinned_run()
        self.assertIsNone(report.attach(self, line))
        self.assertNotIn('report', self.getDetails())

    def test_a_failure_is_written_and_attached(self):
        self.useFixture(fixtures.EnvironmentVariable(report.ENV, self.out))
        line, _ = pinned_run()
        failure = errors.ScenarioFailed('step 2 (resize vm1): wrong',
                                        timeline=line)
        path = report.attach(self, failure)
        self.assertEqual(self.out, os.path.dirname(path))
        detail = self.getDetails()['report']
        self.assertEqual('html', detail.content_type.subtype)
        body = b''.join(detail.iter_bytes()).decode('utf-8')
        self.assertIn('step 2 (resize vm1): wrong', body)
        self.assertIn('data-verdict="FAILED"', body)
        self.assertEqual(path, self.getDetails()['report-path'].as_text())

    def test_file_names_are_safe(self):
        self.assertEqual('a_b_c.html', report.file_name('a/b c'))
        self.assertEqual('scenario.html', report.file_name('../'))


class TestExplorePage(testing.TestCase):

    def test_grouped_by_problem_with_links_to_reproducers(self):
        lost = Problem('pinned_cpus', 'src', 2, [])
        outcome = types.SimpleNamespace
        outcomes = [
            outcome(injections=('periodic on source before x',),
                    failed=False, step=None, label='', problems=(),
                    shrunk_path=None),
            outcome(injections=('periodic on source before finish_resize',),
                    failed=True, step=3, label='resize vm1',
                    problems=(lost,), shrunk_path='/x/explored_1.yaml'),
            outcome(injections=('periodic on both before finish_resize',),
                    failed=True, step=3, label='resize vm1',
                    problems=(lost,), shrunk_path=None),
        ]
        explored = types.SimpleNamespace(
            outcomes=outcomes, tried=3, failed=outcomes[1:])
        text = page.explore_page('resize', explored,
                                 {'/x/explored_1.yaml': 'explored_1.html'})
        doc = Elements(text)
        [group] = doc.select('section', **{'class': 'problem'})
        self.assertEqual('resize vm1: pinned_cpus src', group['data-kind'])
        self.assertEqual(['explored_1.html'], [
            a['href'] for a in doc.select('a', **{'class': 'reproducer'})])
        # Every interleaving once more at the end, with its verdict.
        verdicts = [r['data-verdict'] for r in doc.select('tr')
                    if 'data-verdict' in r]
        self.assertEqual(['failed', 'failed', 'ok', 'failed', 'failed'],
                         verdicts)
