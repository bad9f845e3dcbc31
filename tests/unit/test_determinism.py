"""harness determinism: watching, normalising, comparing and reporting runs.

Everything here is pure (no Nova): verdicts and their normalisation, how
a run is watched through the observer hooks and turned into records whose
digests are compared, where two runs first diverge, the table and the
summary line, resuming, and the clean errors for bad arguments, of the
module and of the ``harness determinism`` verb.
"""

import collections
import concurrent.futures.process
import dataclasses
import io
import json
import os
import shutil
import sys
import typing
import unittest

import fixtures
import testtools

from harness.core import hooks
from harness.core import problems as problems_mod
from harness.core import snapshot as snapshot_mod
from harness.core import timeline as timeline_mod
from harness.runners import cli
from harness.runners import determinism
from harness.runners.determinism import check
from harness.runners.determinism import cli as determinism_cli
from harness.runners.determinism import compare
from harness.runners.determinism import pool
from harness.runners.determinism import records
from harness.runners.determinism import report as report_mod
from harness.runners.determinism import suite
from harness.runners import options
from harness import testing

UUID = '6a1c0c54-34b5-4b8e-9d0e-2f3c4d5e6f70'


def _run(item, number, verdict='pass', digest='d1', seconds=1.0,
         points='p1', scenarios=(), hash_seed=None):
    return compare.Run(item, number, verdict, digest, points, seconds,
                       scenarios=[list(s) for s in scenarios],
                       hash_seed=hash_seed)


def _snapshot(pinned=(), vm1_host='src', generation=3):
    provider = snapshot_mod.Provider(
        name='src', uuid=UUID, generation=generation, parent=None,
        root='src', inventories={'VCPU': {'total': 8}}, usages={'VCPU': 1})
    cell = snapshot_mod.Cell(id=0, cpus=(0, 1, 2, 3), pcpus=(2, 3),
                             cpu_usage=0, memory_mb=4096, memory_usage=0,
                             pinned_cpus=tuple(pinned),
                             pages={4: {'total': 1024, 'used': 0}})
    tracker = snapshot_mod.Tracker(host='src', node='src', vcpus=8,
                                   vcpus_used=1, memory_mb=4096,
                                   memory_mb_used=512, local_gb=10,
                                   local_gb_used=1, cells=(cell,))
    server = snapshot_mod.Server(name='vm1', uuid=UUID, status='ACTIVE',
                                 host=vm1_host, task_state=None)
    return snapshot_mod.Snapshot(
        {'src': provider}, {'vm1': {'src': {'VCPU': 1}}}, {'src': tracker},
        {'vm1': server}, {}, label='boot vm1')


@dataclasses.dataclass
class _Passage(object):
    """``harness.cloud.race.Passage``'s fields (that module needs Nova)."""
    point: str
    when: str
    host: typing.Optional[str]
    server: typing.Optional[str]
    migration: typing.Any = None
    version: int = 0
    deferred: bool = False
    deferred_runs: list = dataclasses.field(default_factory=list)
    deferred_at: typing.Optional[int] = None
    roles: typing.Optional[tuple] = None


def _passage(host='src', version=3, **changes):
    return _Passage('build_and_run_instance', 'before', host, 'vm1',
                    migration=object(), version=version, **changes)


def _timeline(**kwargs):
    passages = kwargs.pop('passages', None)
    timeline = timeline_mod.Timeline()
    timeline.add(0, 'start', _snapshot())
    entry = timeline.add(1, 'boot vm1', _snapshot(**kwargs))
    entry.passages = [_passage()] if passages is None else passages
    return timeline


class TestNormalise(testing.TestCase):

    def test_volatile_parts_become_placeholders(self):
        text = ('instance 6a1c0c54-34B5-4b8e-9d0e-2f3c4d5e6f70 at '
                '<Foo object at 0x7f3a2b1c0d90> req-'
                '11111111-2222-3333-4444-555555555555 at '
                '2025-01-02T03:04:05.123456+00:00 in /tmp/tmpab_12c, '
                'pid 4242, after 1.25 s; OS thread ident 140384629946048')
        self.assertEqual(
            'instance <uuid> at <Foo object at <address>> <request> at '
            '<timestamp> in <tmp>, pid <pid>, after <duration>; OS thread '
            'ident <ident>',
            records.normalise(text))

    def test_what_is_not_volatile_stays(self):
        text = ('step 3 (resize vm1 to pin2b): pinned CPUs on src: '
                'expected 2, got 0; migration(vm1)@src PCPU=2 @41')
        self.assertEqual(text, records.normalise(text))

    def test_verdict(self):
        self.assertEqual('pass', records.verdict('pass'))
        self.assertEqual(
            'fail: AssertionError: <uuid> held',
            records.verdict(
                'fail', 'AssertionError: '
                '6a1c0c54-34b5-4b8e-9d0e-2f3c4d5e6f70 held'))

    def test_exception_message_drops_the_frames(self):
        text = ('Traceback (most recent call last):\n'
                '  File "x.py", line 3, in test\n'
                '    self.fail("no")\n'
                '    ^^^^^^^^^^^^^^^\n'
                'AssertionError: step 2 failed:\n'
                '  pinned CPUs on src\n')
        self.assertEqual('AssertionError: step 2 failed:\n'
                         '  pinned CPUs on src',
                         records.exception_message(text))

    def test_exception_message_of_a_chain_is_the_last(self):
        text = ('Traceback (most recent call last):\n'
                '  File "a.py", line 1, in f\n'
                'KeyError: 1\n\n'
                'During handling of the above exception, another exception '
                'occurred:\n\n'
                'Traceback (most recent call last):\n'
                '  File "b.py", line 2, in g\n'
                'ValueError: bad\n')
        self.assertEqual('ValueError: bad',
                         records.exception_message(text))


def _inner():
    """Tests to run inside a test, for their verdicts.

    Made in a function, so that the loader does not find them.
    """

    class Inner(testtools.TestCase):

        def test_pass(self):
            pass

        def test_fail(self):
            self.fail('consumer 6a1c0c54-34b5-4b8e-9d0e-2f3c4d5e6f70 leaked')

        def test_error(self):
            raise KeyError('no such host')

        def test_skip(self):
            self.skipTest('not today')

    return Inner


class TestVerdicts(testing.TestCase):

    def _verdict(self, name):
        result = suite.Outcomes()
        _inner()(name).run(result.result)
        return result.verdict()

    def test_each_outcome(self):
        self.assertEqual('pass', self._verdict('test_pass'))
        self.assertEqual(
            'fail: AssertionError: consumer <uuid> leaked',
            self._verdict('test_fail'))
        self.assertEqual("error: KeyError: 'no such host'",
                         self._verdict('test_error'))
        self.assertEqual('skip: not today', self._verdict('test_skip'))

    def test_no_outcome(self):
        self.assertEqual('error: the test reported no outcome',
                         suite.Outcomes().verdict())


def _digests(timelines, recordings=()):
    return (records.digest(records.timeline_record(timelines)),
            records.digest(records.points_record(timelines,
                                                 recordings)))


class TestRecords(testing.TestCase):
    """What is compared is the runs' data, not a rendering of it."""

    def test_same_runs_same_digests(self):
        for record in (records.timeline_record,
                       records.points_record):
            one = record([_timeline(pinned=(2,))])
            two = record([_timeline(pinned=(2,))])
            self.assertEqual(one, two)
            self.assertEqual(records.digest(one),
                             records.digest(two))
        self.assertEqual(_digests([_timeline(pinned=(2,))]),
                         _digests([_timeline(pinned=(2,))]))

    def test_the_snapshot_is_its_fields(self):
        (run,) = records.timeline_record([_timeline(pinned=(2,))])
        self.assertEqual([0, 1], [step['step'] for step in run['steps']])
        snapshot = run['steps'][1]['snapshot']
        self.assertEqual({'name': 'src', 'generation': 3, 'parent': None,
                          'root': 'src', 'inventories': {'VCPU': {
                              'total': 8}}, 'usages': {'VCPU': 1},
                          'traits': []},
                         snapshot['providers']['src'])
        cell = snapshot['trackers']['src']['cells'][0]
        self.assertEqual([2], cell['pinned_cpus'])
        self.assertEqual({'4': {'total': 1024, 'used': 0}}, cell['pages'])
        self.assertEqual({'vm1': {'src': {'VCPU': 1}}},
                         snapshot['allocations'])
        # The text shown where runs differ is made from the record, a
        # field a line, and is not the rendered table.
        text = records.timeline_text([_timeline(pinned=(2,))])
        self.assertIn('-- step 1: boot vm1\n', text)
        self.assertIn('snapshot.trackers.src.cells[0].pinned_cpus = [2]',
                      text)
        self.assertNotIn(_timeline(pinned=(2,)).render(), text)

    def test_what_the_render_leaves_out_still_counts(self):
        base = _digests([_timeline()])[0]
        for other in (_timeline(generation=4), _timeline(vm1_host='dst')):
            self.assertNotEqual(base, _digests([other])[0])

    def test_every_field_of_a_passage_counts(self):
        base = records.points_record([_timeline()])
        self.assertEqual(
            [{'point': 'build_and_run_instance', 'when': 'before',
              'host': 'src', 'server': 'vm1', 'version': 3,
              'deferred': False, 'deferred_runs': [], 'deferred_at': None,
              'roles': None}],
            base['timelines'][0]['steps'][1]['passages'])
        for other in (_passage(version=4), _passage(host=None),
                      _passage(deferred=True, deferred_at=7,
                               deferred_runs=[('update', 'src')]),
                      _passage(roles=('source',))):
            self.assertNotEqual(
                records.digest(base),
                records.digest(records.points_record(
                    [_timeline(passages=[other])])))
        # Points are not part of the timeline's digest.
        self.assertEqual(_digests([_timeline()])[0],
                         _digests([_timeline(passages=[])])[0])

    def test_problems_as_records_and_recordings_count(self):
        problem = problems_mod.Problem(
            check='usages_add_up', subject='provider src, VCPU',
            expected=1, actual=2, step=1)
        timeline = _timeline()
        timeline.entries[-1].problems = [problem]
        (run,) = records.timeline_record([timeline])
        self.assertEqual([{'check': 'usages_add_up',
                           'subject': 'provider src, VCPU', 'expected': 1,
                           'actual': 2, 'text': '', 'step': 1}],
                         run['steps'][1]['problems'])
        self.assertNotEqual(_digests([_timeline()])[0],
                            _digests([timeline])[0])
        changed = _timeline()
        changed.entries[-1].problems = [dataclasses.replace(problem,
                                                            actual=3)]
        self.assertNotEqual(_digests([timeline])[0],
                            _digests([changed])[0])
        # A problem still given as text is its text.
        timeline.entries[-1].problems = ['usages_add_up: off by one']
        self.assertIn('problems = ["usages_add_up: off by one"]',
                      records.timeline_text([timeline]))
        text = records.points_text([], [[_passage('dst', 9)]])
        self.assertTrue(text.startswith('== race recording 1: 1 points\n'
                                        '{"point": "build_and_run_instance",'
                                        ' "when": "before", "host": "dst"'),
                        text)
        self.assertNotEqual(_digests([], [[_passage('dst', 9)]])[1],
                            _digests([], [[_passage('dst', 10)]])[1])

    def test_no_uuid_in_the_record(self):
        for record in (records.timeline_record([_timeline()]),
                       records.points_record([_timeline()])):
            self.assertNotIn(UUID, json.dumps(record))
            self.assertNotIn('"uuid"', json.dumps(record))
            self.assertNotIn('"migration"', json.dumps(record))


def _scenario():
    class Scenario(object):
        id = 'boot__a_fake_one'
        path = os.path.join(determinism.ROOT, 'tests', 'functional',
                            'scenarios', 'boot.yaml')
    return Scenario()


class _Step(object):
    index, label = 1, 'boot vm1'


def _emit_a_run(fail_in_step=False):
    """The events a runner and its cloud send for a one-step run.

    Every object new, as in another run of the same test.
    """
    scenario, cloud, step = _scenario(), object(), _Step()
    timeline = timeline_mod.Timeline()
    hooks.notify('cloud_started', cloud)
    hooks.notify('run_started', scenario, cloud)
    timeline.add(0, 'start', _snapshot())
    hooks.notify('step_started', step)
    passage = _passage()
    hooks.notify('point_passed', passage)
    if fail_in_step:
        raise AssertionError('step 1 (boot vm1) failed')
    entry = timeline.add(1, 'boot vm1', _snapshot(pinned=(2,)))
    entry.passages = [passage]
    hooks.notify('step_done', step, entry)
    hooks.notify('run_done', scenario, timeline)
    # Filled in after its event, as a deferred periodic's place is.
    passage.deferred_at = 1
    return timeline, passage


class _EmitsEvents(testtools.TestCase):
    """Tests ``run_test`` runs by ID (no method name starts with test)."""

    def emit_a_run(self):
        _emit_a_run()

    def emit_a_failed_step(self):
        _emit_a_run(fail_in_step=True)


class TestWatchedThroughHooks(testing.TestCase):
    """The tool sees runs only through ``harness.core.hooks``."""

    def test_a_watcher_records_what_the_events_say(self):
        watcher = records.Watcher()
        with hooks.observing(watcher):
            timeline, passage = _emit_a_run()
        # Outside the block, nothing reaches it.
        hooks.notify('cloud_started', object())
        self.assertEqual(1, len(watcher.recordings))
        (run,) = watcher.runs
        self.assertEqual(('boot__a_fake_one', True, None),
                         (run.scenario, run.ended, run.unfinished))
        self.assertEqual(timeline.entries, run.entries)
        self.assertEqual([[passage]], watcher.recordings)
        self.assertEqual([['boot__a_fake_one',
                           os.path.join('tests', 'functional', 'scenarios',
                                        'boot.yaml')]],
                         watcher.scenarios())
        record = records.points_record(watcher.runs, watcher.recordings)
        # Made when asked, so what was filled in after the event is in.
        self.assertEqual(1, record['recordings'][0][0]['deferred_at'])

    def test_run_test_digests_what_the_hooks_sent(self):
        job = {'item': 'x', 'number': 1,
               'test': '%s._EmitsEvents.emit_a_run' % __name__}
        init = timeline_mod.Timeline.__init__
        one, two = suite.run_test(job), suite.run_test(job)
        # Nothing was patched, and the watch ended with the test.
        self.assertIs(init, timeline_mod.Timeline.__init__)
        self.assertEqual([], hooks._WATCHING)
        self.assertEqual('pass', one['verdict'])
        self.assertEqual([['boot__a_fake_one', os.path.join(
            'tests', 'functional', 'scenarios', 'boot.yaml')]],
            one['scenarios'])
        # Two runs of the same events: the same digests, which are those
        # of the records of the objects the events carried.
        self.assertEqual((one['timeline'], one['points']),
                         (two['timeline'], two['points']))
        watcher = records.Watcher()
        with hooks.observing(watcher):
            _emit_a_run()
        self.assertEqual(
            (one['timeline'], one['points']),
            (records.digest(records.timeline_record(watcher.runs)),
             records.digest(records.points_record(
                 watcher.runs, watcher.recordings))))
        self.assertIn('== timeline 1: boot__a_fake_one\n-- step 0: start',
                      one['timeline_text'])

    def test_a_run_that_stops_in_a_step_says_so(self):
        job = {'item': 'x', 'number': 1,
               'test': '%s._EmitsEvents.emit_a_failed_step' % __name__}
        result = suite.run_test(job)
        self.assertEqual('fail: AssertionError: step 1 (boot vm1) failed',
                         result['verdict'])
        self.assertTrue(result['timeline_text'].startswith(
            '== timeline 1: boot__a_fake_one (did not end, in step 1: '
            'boot vm1)'), result['timeline_text'])
        passed = suite.run_test(dict(
            job, test='%s._EmitsEvents.emit_a_run' % __name__))
        self.assertNotEqual(passed['timeline'], result['timeline'])


class TestDivergence(testing.TestCase):

    def test_identical_texts(self):
        self.assertIsNone(records.first_divergence('a\nb', 'a\nb'))

    def test_first_differing_line_with_context(self):
        left = '\n'.join('line %d' % n for n in range(1, 11))
        right = left.replace('line 6', 'line six').replace('line 9', 'x')
        number, lines = records.first_divergence(left, right, 1)
        self.assertEqual(6, number)
        self.assertEqual(['a     5  line 5', 'a>    6  line 6',
                          'a     7  line 7', 'b     5  line 5',
                          'b>    6  line six', 'b     7  line 7'], lines)

    def test_one_text_ends_first(self):
        number, lines = records.first_divergence('a\nb', 'a\nb\nc', 1)
        self.assertEqual(3, number)
        self.assertIn('a>    3  (ends)', lines)
        self.assertIn('b>    3  c', lines)

    def test_headings_of_a_line(self):
        text = ('== timeline 1: a\n-- step 0: start\nx = 1\n'
                '== timeline 2: b\n-- step 0: start\nx = 1\n'
                '-- step 1: boot vm1\nx = 2\ny = 3')
        self.assertEqual(['timeline 2: b', 'step 1: boot vm1'],
                         records.headings(text, 9))
        self.assertEqual(['timeline 1: a'], records.headings(text, 2))
        self.assertEqual([], records.headings(text, 1))


class TestSummaries(testing.TestCase):

    def test_steady_and_flaky(self):
        runs = [_run('steady', 1), _run('steady', 2),
                _run('verdicts', 1), _run('verdicts', 2, 'fail: boom'),
                _run('timelines', 1, digest='a', seconds=1.0),
                _run('timelines', 2, digest='b', seconds=3.0)]
        steady, verdicts, timelines = compare.summarise(runs)
        self.assertFalse(steady.flaky)
        self.assertTrue(verdicts.flaky)
        self.assertTrue(timelines.flaky)
        self.assertEqual(collections.Counter({'pass': 1, 'fail: boom': 1}),
                         verdicts.verdicts)
        self.assertEqual(2, len(timelines.timelines))
        self.assertEqual(2.0, timelines.mean_seconds)

    def test_race_points_alone_make_it_flaky(self):
        (summary,) = compare.summarise(
            [_run('x', 1, points='p'), _run('x', 2, points='q')])
        self.assertTrue(summary.flaky)
        self.assertEqual(1, len(summary.timelines))
        self.assertIn('x: 2 race-point recordings; runs 1 (p) and 2 (q) '
                      'first differ at', summary.divergence())

    def test_divergence_names_runs_and_shows_lines(self):
        runs = [_run('x', 1, digest='a'), _run('x', 2, digest='a'),
                _run('x', 3, digest='b')]
        texts = {('x', 'a'): 'same\nbefore boot on src @12',
                 ('x', 'b'): 'same\nbefore boot on - @12'}
        (summary,) = compare.summarise(runs, texts)
        lines = summary.divergence()
        self.assertEqual('x: 2 timelines; runs 1 (a) and 3 (b) first '
                         'differ at', lines[0])
        self.assertIn('    a>    2  before boot on src @12', lines)
        self.assertIn('    b>    2  before boot on - @12', lines)

    def test_divergence_names_the_timeline_and_step(self):
        left = records.timeline_text([_timeline()])
        right = records.timeline_text([_timeline(generation=4)])
        runs = [_run('x', 1, digest='a'), _run('x', 2, digest='b')]
        (summary,) = compare.summarise(
            runs, {('x', 'a'): left, ('x', 'b'): right})
        lines = summary.divergence()
        self.assertRegex(lines[1], r'^  line \d+ \(timeline 1: \(no '
                                   r'scenario\), step 1: boot vm1\):$')
        self.assertIn('snapshot.providers.src.generation = 4',
                      '\n'.join(lines))

    def test_divergence_lists_verdicts(self):
        runs = [_run('x', 1), _run('x', 2, 'fail: boom\nmore')]
        (summary,) = compare.summarise(runs)
        self.assertEqual(['x: 2 verdicts:', '  1 x pass',
                          '  1 x fail: boom | more'], summary.divergence())

    def test_scenarios_the_runs_ran(self):
        (summary,) = compare.summarise(
            [_run('x', 1, scenarios=[('b', 'd/b.yaml')]),
             _run('x', 2, scenarios=[('a', 'd/a.yaml'),
                                     ('b', 'd/b.yaml')])])
        self.assertEqual(['b', 'a'], summary.scenarios)

    def test_table_and_summary_line(self):
        summaries = compare.summarise(
            [_run('a_long_scenario', 1, seconds=2.0),
             _run('a_long_scenario', 2, seconds=4.0),
             _run('b', 1, digest='x'), _run('b', 2, digest='y')])
        self.assertEqual(
            ['test             runs  verdicts  timelines  points  flaky  '
             's/run',
             'a_long_scenario     2         1          1       1     no   '
             '3.00',
             'b                   2         1          2       1    yes   '
             '1.00'],
            compare.table(summaries))
        self.assertEqual('determinism: 4 runs, 1 flaky, wall 12 s',
                         compare.summary_line(summaries, 12.4))


SCENARIO_TEXT = '''
- name: %s
  hosts: {h1: {driver: fake}}
  flavors: {f: {vcpus: 1, ram: 64, disk: 1}}
  steps:
    - boot: {server: vm1, flavor: f}
'''


class TestOrphans(testing.TestCase):

    def test_scenarios_next_to_those_run_that_no_test_ran(self):
        root = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(root, 'ran'))
        os.makedirs(os.path.join(root, 'elsewhere'))
        for directory, name in (('ran', 'one'), ('ran', 'two'),
                                ('elsewhere', 'three')):
            with open(os.path.join(root, directory, name + '.yaml'),
                      'w') as target:
                target.write(SCENARIO_TEXT % name)
        with open(os.path.join(root, 'ran', 'broken.yaml'), 'w') as target:
            target.write('- name: [not, a, name]\n')
        runs = [_run('t', 1, scenarios=[('one__one',
                                         os.path.join('ran', 'one.yaml'))])]
        # two.yaml sits next to one.yaml and no run ran it; elsewhere/ is
        # no folder a run ran from; broken.yaml fails its own test.
        self.assertEqual(['two__two'], report_mod.orphans(runs, root))
        self.assertEqual([], report_mod.orphans([_run('t', 1)], root))


class TestJobs(testing.TestCase):

    ITEMS = [{'id': 'boot__one', 'test': 'tests.f.Boot.test_1_boot__one'},
             {'id': 'test_bites.T.test_x', 'test': 'tests.r.test_bites.T.'
                                                   'test_x'}]

    def test_select_by_id_or_test_id(self):
        self.assertEqual(self.ITEMS[:1],
                         suite.select(self.ITEMS, '^boot'))
        self.assertEqual(self.ITEMS[1:],
                         suite.select(self.ITEMS, r'r\.test_bites'))
        self.assertEqual(self.ITEMS, suite.select(self.ITEMS, None))

    def test_round_robin(self):
        jobs = check.jobs_for(self.ITEMS, 2)
        self.assertEqual([('boot__one', 1), ('test_bites.T.test_x', 1),
                          ('boot__one', 2), ('test_bites.T.test_x', 2)],
                         [(job['item'], job['number']) for job in jobs])

    def test_no_suite_to_run_is_one_clean_error(self):
        root = self.useFixture(fixtures.TempDir()).path
        # No checkout there: the bug registry's tests, which ship with
        # the harness, and nothing else.
        self.assertEqual([suite.Source('bugs', name=suite.BUG_TESTS)],
                         suite.sources(root=root))
        error = self.assertRaises(options.UsageError, suite.sources,
                                  bugs=False, root=root)
        self.assertIn('no test suite next to the harness in %s' % root,
                      str(error))
        missing = os.path.join(root, 'missing')
        error = self.assertRaises(options.UsageError, suite.sources,
                                  [missing], root=root)
        self.assertEqual('--scenarios %s: no such folder or file' % missing,
                         str(error))

    def test_a_test_is_listed_without_its_package(self):
        self.assertEqual(
            'test_scenarios.Boot.test_1_boot__one',
            suite.item_id('tests.functional.test_scenarios.Boot.'
                          'test_1_boot__one',
                          'tests.functional.test_scenarios'))
        # A module of no package: the whole ID.
        self.assertEqual(
            'test_mine.Boot.test_1_boot__one',
            suite.item_id('test_mine.Boot.test_1_boot__one', 'test_mine'))


PROBE_PACKAGE = 'determinism_probe'
# A test module of the probe package: it builds the scenario tests of the
# folder next to it, as the checkout's test_scenarios.py does, and has a
# test of its own.
PROBE_MODULE = """
import os

import testtools

from harness import testing

FOLDER = os.path.join(os.path.dirname(__file__), 'scen')


def load_tests(loader, standard_tests, pattern):
    suite = testing.build_tests(FOLDER, loader)
    suite.addTests(loader.loadTestsFromTestCase(Probe))
    return suite


class Probe(testtools.TestCase):

    def test_probe(self):
        pass
"""


class TestSources(testing.TestCase):
    """Which tests: built from scenario folders, the bugs, by name."""

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.package = os.path.join(self.root, PROBE_PACKAGE)
        self.folder = os.path.join(self.package, 'scen')
        os.makedirs(self.folder)
        for name, text in (('__init__.py', ''),
                           ('test_scen.py', PROBE_MODULE)):
            with open(os.path.join(self.package, name), 'w') as target:
                target.write(text)
        with open(os.path.join(self.folder, 'one.yaml'), 'w') as target:
            target.write(SCENARIO_TEXT % 'one')
        with open(os.path.join(self.folder, 'broken.yaml'), 'w') as target:
            target.write('- name: [not, a, name]\n')
        self.useFixture(fixtures.PythonPathEntry(self.root))
        self.addCleanup(self._forget_the_probe)

    @staticmethod
    def _forget_the_probe():
        for name in list(sys.modules):
            if name.split('.')[0] == PROBE_PACKAGE:
                del sys.modules[name]

    def test_a_folders_tests_are_named_as_a_module_next_to_it(self):
        self.assertEqual('%s.test_scen' % PROBE_PACKAGE,
                         suite.test_module_name(self.folder))
        self.assertEqual('%s.test_scen' % PROBE_PACKAGE,
                         suite.test_module_name(
                             os.path.join(self.folder, 'one.yaml')))
        # Outside a package: a module of no package.
        outside = os.path.join(self.root, 'my-scenarios')
        os.makedirs(outside)
        self.assertEqual('test_my_scenarios',
                         suite.test_module_name(outside))
        # The checkout's folder: its own module's name.
        self.assertEqual(
            [suite.Source('scenarios', os.path.join(
                determinism.ROOT, 'tests', 'functional', 'scenarios'),
                'tests.functional.test_scenarios'),
             suite.Source('bugs', name='tests.regressions.test_regressions')],
            suite.sources())

    def test_the_checkouts_tests_have_the_ids_stestr_lists(self):
        # What the tool runs by default is what the checkout's two test
        # modules give unittest (stestr), ID for ID and in their order.
        from tests.functional import test_scenarios
        from tests.regressions import test_regressions
        loader = unittest.TestLoader()
        expected = [case.id() for module in (test_scenarios,
                                             test_regressions)
                    for case in testtools.iterate_tests(
                        loader.loadTestsFromModule(module))]
        items = suite.discover(suite.sources())['items']
        self.assertEqual(expected, [item['test'] for item in items])
        self.assertEqual(
            'test_scenarios.Boot.test_1_boot__boot_on_a_fake_host_with_'
            'periodics_around_it', items[0]['id'])

    def test_a_test_named_again_is_one_test(self):
        built = suite.Source('scenarios', self.folder,
                             suite.test_module_name(self.folder))
        # The package's module builds the folder's tests too: the same
        # tests, once; then its own.
        found = suite.discover([built, suite.Source('unittest',
                                                    PROBE_PACKAGE)])
        name = '%s.test_scen' % PROBE_PACKAGE
        self.assertEqual(
            [{'id': 'test_scen.Broken.test_load',
              'test': name + '.Broken.test_load'},
             {'id': 'test_scen.One.test_1_one__one',
              'test': name + '.One.test_1_one__one'},
             {'id': 'test_scen.Probe.test_probe',
              'test': name + '.Probe.test_probe'}],
            found['items'])
        error = self.assertRaises(options.UsageError, suite.discover,
                                  [built, built])
        self.assertIn('two sources give the test %s.Broken.test_load'
                      % name, str(error))

    def test_a_name_that_does_not_import_is_one_clean_error(self):
        error = self.assertRaises(
            options.UsageError, suite.discover,
            [suite.Source('unittest', PROBE_PACKAGE + '.nothing')])
        self.assertIn('--tests %s.nothing: ModuleNotFoundError'
                      % PROBE_PACKAGE, str(error))

    def test_each_run_is_a_new_test_of_its_source(self):
        sources = [suite.Source('unittest', PROBE_PACKAGE)]
        name = '%s.test_scen.Probe.test_probe' % PROBE_PACKAGE
        (one,), (two,) = (list(testtools.iterate_tests(
            suite.load(name, sources))) for _ in range(2))
        self.assertEqual((name, name), (one.id(), two.id()))
        self.assertIsNot(one, two)
        # No source gives it: loaded by its name.
        (case,) = testtools.iterate_tests(suite.load(
            '%s._EmitsEvents.emit_a_run' % __name__, sources))
        self.assertIsInstance(case, _EmitsEvents)

    def test_run_test_runs_a_built_test(self):
        name = suite.test_module_name(self.folder)
        sources = [suite.Source('scenarios', self.folder, name)]
        # The broken file's test runs without a cloud: it fails on the
        # loader's message.
        result = suite.run_test({'item': 'x', 'number': 1,
                                 'test': name + '.Broken.test_load',
                                 'sources': sources})
        self.assertTrue(result['verdict'].startswith(
            'fail: AssertionError: '), result['verdict'])
        self.assertTrue(result['verdict'].endswith(
            '%s, field "hosts": missing' % os.path.join(
                PROBE_PACKAGE, 'scen', 'broken.yaml')), result['verdict'])
        probe = suite.run_test({
            'item': 'y', 'number': 1, 'test': name + '.Probe.test_probe',
            'sources': sources + [suite.Source('unittest', PROBE_PACKAGE)]})
        self.assertEqual('pass', probe['verdict'])

    def test_the_options_choose_the_sources(self):
        args = determinism_cli.parse_args([
            '--scenarios', os.path.relpath(self.folder), '--no-bugs',
            '--tests', PROBE_PACKAGE, '--tests', 'more'])
        self.assertEqual(([self.folder], True, [PROBE_PACKAGE, 'more']),
                         (args.scenarios, args.no_bugs, args.tests))
        self.assertEqual(
            [suite.Source('scenarios', self.folder,
                          '%s.test_scen' % PROBE_PACKAGE),
             suite.Source('unittest', PROBE_PACKAGE),
             suite.Source('unittest', 'more')],
            suite.sources(args.scenarios, not args.no_bugs, args.tests))
        defaults = determinism_cli.parse_args([])
        self.assertEqual((None, False, None), (
            defaults.scenarios, defaults.no_bugs, defaults.tests))

    def test_a_missing_folder_exits_2_before_anything_runs(self):
        err = io.StringIO()
        self.patch(determinism_cli.sys, 'stderr', err)
        missing = os.path.join(self.root, 'missing')
        self.assertEqual(2, determinism_cli.main(['--scenarios', missing],
                                                 out=io.StringIO()))
        self.assertEqual('harness determinism: --scenarios %s: no such '
                         'folder or file\n' % missing, err.getvalue())

    def test_a_scenario_folder_outside_the_code_is_in_its_identity(self):
        outside = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(outside, 'one.yaml')
        with open(path, 'w') as target:
            target.write(SCENARIO_TEXT % 'one')
        first = report_mod.code_identity(self.root, [outside])
        self.assertNotEqual(first, report_mod.code_identity(self.root))
        self.assertEqual(first, report_mod.code_identity(self.root, [path]))
        with open(path, 'w') as target:
            target.write(SCENARIO_TEXT % 'two')
        self.assertNotEqual(first['files'], report_mod.code_identity(
            self.root, [outside])['files'])


class TestArguments(testing.TestCase):

    def test_defaults(self):
        args = determinism_cli.parse_args([])
        self.assertEqual((50, 0, 2, None, None, 900),
                         (args.runs, args.busy, args.workers, args.select,
                          args.json, args.timeout))

    def test_bad_arguments_are_one_clean_error(self):
        cases = (
            (['--runs', '0'], '--runs must be at least 1'),
            (['--busy', '-1'], '--busy must be 0 or more'),
            (['--workers', '-2'], '--workers must be 0 or more'),
            (['--timeout', '0'], '--timeout must be at least 1 s'),
            (['--recycle', '-1'], '--recycle must be 0 or more'),
            (['--select', '(boot'], 'not a regular expression'),
            (['--runs', 'many'], "invalid int value: 'many'"),
            (['--json', '/no/such/dir/out.json'], 'no directory'),
            (['--dump', __file__], 'not a directory'),
            (['--frobnicate'], 'unrecognized arguments'))
        for argv, words in cases:
            error = self.assertRaises(options.UsageError,
                                      determinism_cli.parse_args, argv)
            self.assertIn(words, str(error))

    def test_main_exits_2_without_running(self):
        err = io.StringIO()
        self.patch(determinism_cli.sys, 'stderr', err)
        self.assertEqual(2, determinism_cli.main(['--runs', '0'],
                                                 out=io.StringIO()))
        self.assertEqual('harness determinism: --runs must be at least 1, '
                         'not 0\n', err.getvalue())


class TestCliVerb(testing.TestCase):
    """``harness determinism``: the module's options, through the CLI."""

    def setUp(self):
        super().setUp()
        self.stderr = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', self.stderr))

    def test_options_pass_through_to_the_module(self):
        seen = []
        self.patch(determinism_cli, 'main',
                   lambda argv, out=None: seen.append(argv) or 0)
        argv = ['--runs', '2', '--select', 'boot__', '--workers', '0']
        self.assertEqual(0, cli.main(['determinism'] + argv))
        self.assertEqual([argv], seen)

    def test_bad_arguments_are_one_line_and_exit_2(self):
        missing = os.path.join(self.useFixture(fixtures.TempDir()).path,
                               'missing.json')
        cases = (
            (['--runs', '0'], '--runs must be at least 1, not 0'),
            (['--runs', 'many'],
             "argument --runs: invalid int value: 'many'"),
            (['--frobnicate'], 'unrecognized arguments: --frobnicate'),
            (['boot__'], 'unrecognized arguments: boot__'),
            (['--select', '(boot'], "--select '(boot' is not a regular "
                                    "expression"),
            (['--resume', missing], '--resume %s: No such file or '
                                    'directory' % missing))
        for argv, words in cases:
            self.stderr.seek(0)
            self.stderr.truncate()
            out = io.StringIO()
            self.assertEqual(2, cli.main(['determinism'] + argv, out=out),
                             argv)
            lines = self.stderr.getvalue().splitlines()
            self.assertEqual(1, len(lines), lines)
            self.assertTrue(lines[0].startswith('harness determinism: '
                                                + words), lines)
            self.assertEqual('', out.getvalue())

    def test_help_lists_the_options(self):
        stdout = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', stdout))
        exc = self.assertRaises(SystemExit, cli.main,
                                ['determinism', '--help'])
        self.assertEqual(0, exc.code)
        self.assertIn('usage: harness determinism', stdout.getvalue())
        for option in ('--runs', '--busy', '--workers', '--select',
                       '--json', '--dump', '--resume', '--timeout',
                       '--hash-seeds'):
            self.assertIn(option, stdout.getvalue())

    def test_other_verbs_refuse_unknown_options_as_before(self):
        exc = self.assertRaises(SystemExit, cli.main,
                                ['bugs', '--frobnicate'])
        self.assertEqual(cli.EXIT_BAD_INPUT, exc.code)
        self.assertIn('harness: error: unrecognized arguments: '
                      '--frobnicate', self.stderr.getvalue())


class TestDump(testing.TestCase):

    def test_dump_writes_only_flaky_tests(self):
        directory = self.useFixture(fixtures.TempDir()).path
        runs = [_run('steady', 1), _run('flaky/x', 1, digest='a'),
                _run('flaky/x', 2, digest='b')]
        texts = {('steady', 'd1'): 's', ('flaky/x', 'a'): 'one',
                 ('flaky/x', 'b'): 'two', ('flaky/x', 'p1'): 'points'}
        paths = report_mod.dump(compare.summarise(runs, texts),
                                directory)
        self.assertEqual(['flaky_x.run1.a.txt', 'flaky_x.run2.b.txt',
                          'flaky_x.run1.p1.txt'],
                         [os.path.basename(p) for p in paths])
        with open(paths[1]) as f:
            self.assertEqual('two\n', f.read())

    def test_dump_writes_seed_dependent_tests_too(self):
        # Steady under each seed, another timeline under each: what the
        # report lists apart is there in full as well.
        directory = self.useFixture(fixtures.TempDir()).path
        runs = [_run('devices/x', 1, digest='a', hash_seed=0),
                _run('devices/x', 2, digest='b', hash_seed=1),
                _run('devices/x', 3, digest='a', hash_seed=0),
                _run('steady', 1, hash_seed=0), _run('steady', 2, hash_seed=1)]
        texts = {('devices/x', 'a'): 'nvme d8', ('devices/x', 'b'): 'nvme d9',
                 ('devices/x', 'p1'): 'points', ('steady', 'd1'): 's'}
        summaries = compare.summarise(runs, texts)
        self.assertEqual([False, False], [s.flaky for s in summaries])
        paths = report_mod.dump(summaries, directory)
        self.assertEqual(['devices_x.run1.a.txt', 'devices_x.run2.b.txt',
                          'devices_x.run1.p1.txt'],
                         [os.path.basename(p) for p in paths])


class TestHangs(testing.TestCase):

    def test_collect_hangs_reads_and_removes_the_records(self):
        directory = self.useFixture(fixtures.TempDir()).path
        record = {'item': 'boot__x', 'number': 3, 'timeout': 900,
                  'stacks': ['  File "a.py", line 1']}
        with open(os.path.join(directory, '123.json'), 'w') as f:
            json.dump(record, f)
        self.assertEqual([record], pool.collect_hangs(directory))
        self.assertEqual([], os.listdir(directory))


class TestBurners(testing.TestCase):

    def test_burners_stop_on_leaving(self):
        with pool.Burners(2) as burners:
            processes = list(burners.processes)
            self.assertEqual(2, len(processes))
            self.assertEqual([None, None], [p.poll() for p in processes])
        self.assertEqual([], burners.processes)
        for process in processes:
            self.assertIsNotNone(process.poll())
            self.assertRaises(ProcessLookupError, os.kill, process.pid, 0)

    def test_burners_stop_on_an_exception(self):
        captured = []
        try:
            with pool.Burners(1) as burners:
                captured.extend(burners.processes)
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        self.assertIsNotNone(captured[0].poll())


IDENTITY = {'files': 'f00d', 'record_format': 2, 'python': '3.11.7',
            'nova': '34.0.0', 'openstack-placement': '16.0.0'}


class _FakeRuns(object):
    """Stands in for ``run_once``: a result per job, its text by item."""

    def __init__(self, stop_after=None, texts=None):
        self.jobs = []
        self.stop_after = stop_after
        self.texts = texts or {}

    def __call__(self, job):
        if self.stop_after is not None and len(self.jobs) == self.stop_after:
            raise KeyboardInterrupt
        self.jobs.append((job['item'], job['number']))
        text = self.texts.get(job['item'], 'timeline of %s' % job['item'])
        return {'item': job['item'], 'number': job['number'],
                'verdict': 'pass', 'timeline': records.digest(text),
                'timeline_text': text, 'points': 'p1',
                'points_text': 'points', 'seconds': 1.0, 'worker': 1,
                'rss_mb': 100.0, 'scenarios': [[job['item'], None]]}


class TestResume(testing.TestCase):

    ITEMS = TestJobs.ITEMS
    SETTINGS = {'busy': 2, 'select': None, 'runs': 3}

    def _args(self, **changes):
        settings = dict(self.SETTINGS, **changes)
        return determinism_cli.parse_args(
            ['--busy', str(settings['busy'])]
            + (['--select', settings['select']] if settings['select']
               else []))

    def _interrupted_report(self, stop_after=3):
        """Path of a stopped check (2 tests x 3 runs), written as --json.

        It stopped (as on SIGINT) after ``stop_after`` runs.
        """
        report = check.check(3, workers=0, items=self.ITEMS,
                             run=_FakeRuns(stop_after=stop_after))
        self.assertTrue(report.interrupted)
        self.assertEqual(stop_after, len(report.runs))
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'report.json')
        with open(path, 'w') as target:
            json.dump(report_mod.to_json(report, self.SETTINGS, IDENTITY),
                      target)
        return path

    def test_resume_runs_only_what_is_left_and_reports_all(self):
        path = self._interrupted_report(stop_after=3)
        earlier = report_mod.load_report(path, self._args(), IDENTITY)
        runs = _FakeRuns()
        report = check.check(3, workers=0, items=self.ITEMS,
                             previous=earlier, run=runs)
        # Round-robin: the first 3 jobs were boot 1, bites 1, boot 2.
        self.assertEqual([('test_bites.T.test_x', 2), ('boot__one', 3),
                          ('test_bites.T.test_x', 3)], runs.jobs)
        self.assertEqual([(3, False), (3, False)],
                         [(s.runs, s.flaky) for s in report.summaries])
        # What the earlier runs ran came back with them.
        self.assertEqual([['boot__one'], ['test_bites.T.test_x']],
                         [s.scenarios for s in report.summaries])
        self.assertFalse(report.interrupted)
        self.assertGreaterEqual(report.wall, earlier.wall)

    def test_a_resumed_run_that_differs_shows_both_texts(self):
        path = self._interrupted_report(stop_after=3)
        earlier = report_mod.load_report(path, self._args(), IDENTITY)
        report = check.check(
            3, workers=0, items=self.ITEMS, previous=earlier,
            run=_FakeRuns(texts={'boot__one': 'timeline of another'}))
        boot = report.summaries[0]
        self.assertEqual(('boot__one', True), (boot.item, boot.flaky))
        lines = '\n'.join(boot.divergence())
        # The text of runs 1-2 came from the report resumed.
        self.assertIn('timeline of boot__one', lines)
        self.assertIn('timeline of another', lines)

    def test_reports_that_do_not_add_up_are_refused(self):
        path = self._interrupted_report()
        other_code = dict(IDENTITY, files='beef', nova='35.0.0')
        error = self.assertRaises(options.UsageError,
                                  report_mod.load_report, path,
                                  self._args(), other_code)
        self.assertEqual(
            '--resume %s: its runs ran other code (files, nova: f00d, '
            '34.0.0 there, beef, 35.0.0 here)' % path, str(error))
        error = self.assertRaises(options.UsageError,
                                  report_mod.load_report, path,
                                  self._args(busy=0), IDENTITY)
        self.assertEqual('--resume %s: it ran with --busy 2, this check '
                         'with --busy 0' % path, str(error))
        error = self.assertRaises(options.UsageError,
                                  report_mod.load_report, path,
                                  self._args(select='^boot'), IDENTITY)
        self.assertIn('it ran with --select None, this check with '
                      '--select ^boot', str(error))

    def test_a_report_of_other_tests_is_refused(self):
        # SETTINGS are those of a report made before the options: it ran
        # the checkout's scenarios, the bugs and nothing more.
        path = self._interrupted_report()
        folder = self.useFixture(fixtures.TempDir()).path
        cases = ((['--scenarios', folder], '--scenarios None, this check '
                  'with --scenarios %s' % folder),
                 (['--no-bugs'], '--no-bugs False, this check with '
                  '--no-bugs True'),
                 (['--tests', 'x'], '--tests None, this check with '
                  '--tests x'))
        for argv, words in cases:
            args = determinism_cli.parse_args(['--busy', '2'] + argv)
            error = self.assertRaises(options.UsageError,
                                      report_mod.load_report, path, args,
                                      IDENTITY)
            self.assertEqual('--resume %s: it ran with %s' % (path, words),
                             str(error))

    def test_what_is_not_a_report_is_one_clean_error(self):
        directory = self.useFixture(fixtures.TempDir()).path
        cases = (('[1, 2]', 'not a report of this tool (TypeError'),
                 ('{"runs": []}', "not a report of this tool (KeyError: "
                                  "'texts')"),
                 ('{"runs": [{"item": 1}]', 'not a report of this tool '
                                            '(JSONDecodeError'))
        for content, words in cases:
            path = os.path.join(directory, 'bad.json')
            with open(path, 'w') as target:
                target.write(content)
            error = self.assertRaises(options.UsageError,
                                      report_mod.load_report, path,
                                      self._args(), IDENTITY)
            self.assertIn('--resume %s: %s' % (path, words), str(error))
        missing = os.path.join(directory, 'missing.json')
        error = self.assertRaises(options.UsageError,
                                  report_mod.load_report, missing,
                                  self._args(), IDENTITY)
        self.assertEqual('--resume %s: No such file or directory' % missing,
                         str(error))

    def test_main_refuses_a_bad_report_before_running(self):
        err = io.StringIO()
        self.patch(determinism_cli.sys, 'stderr', err)
        missing = os.path.join(self.useFixture(fixtures.TempDir()).path,
                               'missing.json')
        self.assertEqual(2, determinism_cli.main(['--resume', missing],
                                                 out=io.StringIO()))
        self.assertIn('determinism: --resume %s: No such file' % missing,
                      err.getvalue())


class TestCodeIdentity(testing.TestCase):

    def test_a_file_under_the_code_changes_it_caches_do_not(self):
        root = self.useFixture(fixtures.TempDir()).path
        self.assertEqual(('harness', 'fixtures', 'tests'),
                         report_mod.CODE_DIRS)
        for top in report_mod.CODE_DIRS:
            os.makedirs(os.path.join(root, top, '__pycache__'))
            with open(os.path.join(root, top, 'a.py'), 'w') as target:
                target.write('x = 1\n')
        first = report_mod.code_identity(root)
        self.assertEqual(2, first['record_format'])
        with open(os.path.join(root, 'tests', '__pycache__', 'a.pyc'),
                  'w') as target:
            target.write('cache')
        os.makedirs(os.path.join(root, 'tests', '.hypothesis'))
        with open(os.path.join(root, 'tests', '.hypothesis', 'examples'),
                  'w') as target:
            target.write('a database of examples, not code')
        with open(os.path.join(root, 'outside.py'), 'w') as target:
            target.write('y = 2\n')
        self.assertEqual(first, report_mod.code_identity(root))
        # Host profiles: the data fixtures at the top level.
        os.makedirs(os.path.join(root, 'fixtures', 'hosts'))
        with open(os.path.join(root, 'fixtures', 'hosts',
                               'h.yaml'), 'w') as target:
            target.write('sockets: 1\n')
        second = report_mod.code_identity(root)
        self.assertNotEqual(first['files'], second['files'])
        self.assertEqual(dict(first, files=None), dict(second, files=None))
        with open(os.path.join(root, 'tests', 'a.py'), 'w') as target:
            target.write('x = 2\n')
        self.assertNotEqual(second['files'],
                            report_mod.code_identity(root)['files'])


# -- hash seeds ------------------------------------------------------------

class TestHashSeedArguments(testing.TestCase):

    def test_seeds_parse_to_ints_in_their_order(self):
        args = determinism_cli.parse_args(['--hash-seeds', '7, 0,4294967295',
                                           '--workers', '1'])
        self.assertEqual([7, 0, 4294967295], args.hash_seeds)
        self.assertIsNone(determinism_cli.parse_args([]).hash_seeds)

    def test_bad_seeds_are_one_clean_error_naming_the_value(self):
        cases = (
            ('0,x', "--hash-seeds '0,x': 'x' is not a hash seed (an integer "
                    "from 0 to 4294967295)"),
            ('-1', "--hash-seeds '-1': '-1' is not a hash seed"),
            ('4294967296', "--hash-seeds '4294967296': '4294967296' is not "
                           "a hash seed"),
            ('', "--hash-seeds '': '' is not a hash seed"),
            ('1,,2', "--hash-seeds '1,,2': '' is not a hash seed"),
            ('random', "--hash-seeds 'random': 'random' is not a hash "
                       "seed"),
            ('0,1,0', "--hash-seeds '0,1,0': seed 0 is given twice"))
        for value, message in cases:
            error = self.assertRaises(
                options.UsageError, determinism_cli.parse_args,
                ['--hash-seeds', value, '--workers', '1'])
            self.assertTrue(str(error).startswith(message),
                            (value, str(error)))

    def test_runs_in_this_process_cannot_take_a_seed(self):
        for seeds in ('0', '3,4'):
            error = self.assertRaises(
                options.UsageError, determinism_cli.parse_args,
                ['--hash-seeds', seeds, '--workers', '0'])
            self.assertEqual('--hash-seeds needs worker processes '
                             '(--workers 1 or more): a run in this process '
                             'keeps the hash seed it started with',
                             str(error))
        # Called from Python, before anything runs.
        self.assertRaises(options.UsageError, check.check, 1,
                          workers=0, items=TestJobs.ITEMS, hash_seeds=[0],
                          run=_FakeRuns())
        for seeds, words in (([], 'needs at least one seed'),
                             ([1, 1], 'a seed is given twice (1,1)'),
                             (['1'], "'1' is not a hash seed"),
                             ([2 ** 32], '4294967296 is not a hash seed')):
            error = self.assertRaises(options.UsageError,
                                      check.check, 1, workers=1,
                                      items=TestJobs.ITEMS,
                                      hash_seeds=seeds, run=_FakeRuns())
            self.assertIn(words, str(error))

    def test_main_exits_2_with_one_line(self):
        err = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        out = io.StringIO()
        self.assertEqual(2, cli.main(['determinism', '--hash-seeds', '1,a'],
                                     out=out))
        self.assertEqual("harness determinism: --hash-seeds '1,a': 'a' is "
                         "not a hash seed (an integer from 0 to "
                         "4294967295)\n", err.getvalue())
        self.assertEqual('', out.getvalue())


class TestSeedAssignment(testing.TestCase):

    def test_run_n_gets_seed_n_minus_1_mod_the_count(self):
        seeds = [7, 3, 5]
        self.assertEqual([7, 3, 5, 7, 3],
                         [pool.seed_for(n, seeds)
                          for n in range(1, 6)])
        self.assertIsNone(pool.seed_for(4, None))

    def test_jobs_carry_their_seed(self):
        jobs = check.jobs_for(TestJobs.ITEMS, 3, [7, 3])
        self.assertEqual(
            [('boot__one', 1, 7), ('test_bites.T.test_x', 1, 7),
             ('boot__one', 2, 3), ('test_bites.T.test_x', 2, 3),
             ('boot__one', 3, 7), ('test_bites.T.test_x', 3, 7)],
            [(job['item'], job['number'], job['hash_seed'])
             for job in jobs])
        self.assertEqual({None}, {job['hash_seed'] for job in
                                  check.jobs_for(TestJobs.ITEMS, 2)})

    def test_the_seed_a_process_has(self):
        self.assertEqual(7, pool.current_hash_seed(
            {'PYTHONHASHSEED': '7'}))
        self.assertEqual('random', pool.current_hash_seed(
            {'PYTHONHASHSEED': 'random'}))
        self.assertIsNone(pool.current_hash_seed({}))

    def test_the_environment_has_the_seed_meanwhile_and_after_as_before(self):
        self.useFixture(fixtures.EnvironmentVariable('PYTHONHASHSEED', '0'))
        with pool.hash_seed_environ(12):
            self.assertEqual('12', os.environ['PYTHONHASHSEED'])
        self.assertEqual('0', os.environ['PYTHONHASHSEED'])
        try:
            with pool.hash_seed_environ(13):
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        self.assertEqual('0', os.environ['PYTHONHASHSEED'])
        with pool.hash_seed_environ(None):
            self.assertEqual('0', os.environ['PYTHONHASHSEED'])
        self.useFixture(fixtures.EnvironmentVariable('PYTHONHASHSEED'))
        with pool.hash_seed_environ(14):
            self.assertEqual('14', os.environ['PYTHONHASHSEED'])
        self.assertNotIn('PYTHONHASHSEED', os.environ)


class TestSeedSummaries(testing.TestCase):
    """Verdicts must agree across seeds; timelines only within one."""

    def test_verdicts_that_differ_between_seeds_are_a_flake(self):
        runs = [_run('x', 1, hash_seed=0), _run('x', 2, 'fail: boom',
                                                hash_seed=1),
                _run('x', 3, hash_seed=0), _run('x', 4, 'fail: boom',
                                                hash_seed=1)]
        (summary,) = compare.summarise(runs)
        # Each seed alone is steady.
        self.assertEqual([1, 1], [len(runs.verdicts) for runs in
                                  summary.by_seed.values()])
        self.assertTrue(summary.flaky)
        self.assertFalse(summary.seed_dependent)
        self.assertEqual(['x: 2 verdicts:', '  2 x pass (seed 0)',
                          '  2 x fail: boom (seed 1)'],
                         summary.divergence())

    def test_timelines_that_differ_only_between_seeds_are_no_flake(self):
        # Seeds 0 and 2 give a, seed 1 gives b; each seed twice.
        runs = [_run('x', n, digest=d, hash_seed=seed) for n, d, seed in (
            (1, 'a', 0), (2, 'b', 1), (3, 'a', 2), (4, 'a', 0),
            (5, 'b', 1), (6, 'a', 2))]
        runs += [_run('steady', n, hash_seed=(n - 1) % 3)
                 for n in range(1, 7)]
        texts = {('x', 'a'): 'same\nnvme0 to vm1',
                 ('x', 'b'): 'same\nnvme1 to vm1'}
        summary, steady = compare.summarise(runs, texts)
        self.assertEqual(([0, 1, 2], [1, 4], [2, 5]),
                         (list(summary.by_seed), summary.by_seed[0].numbers,
                          summary.by_seed[1].numbers))
        self.assertFalse(summary.flaky)
        self.assertTrue(summary.seed_dependent)
        self.assertEqual([], summary.divergence())
        self.assertEqual(
            ['x: 2 timelines by hash seed: a (seeds 0, 2), b (seed 1); '
             'seed 0 (run 1) and seed 1 (run 2) first differ at',
             '  line 2:',
             '    a     1  same', '    a>    2  nvme0 to vm1',
             '    b     1  same', '    b>    2  nvme1 to vm1'],
            summary.seed_dependence())
        self.assertEqual((False, False, []),
                         (steady.flaky, steady.seed_dependent,
                          steady.seed_dependence()))
        self.assertEqual(
            ['',
             "seed-dependent timelines (Nova's choice between equals "
             "follows the hash seed): 1 tests",
             ''] + summary.seed_dependence(),
            compare.seed_dependence_section([summary, steady]))
        self.assertEqual(
            ['test    runs  seeds  verdicts  timelines  points  flaky  '
             'seed-dependent  s/run',
             'x          6      3         1          2       1     no   '
             '          yes   1.00',
             'steady     6      3         1          1       1     no   '
             '           no   1.00'],
            compare.table([summary, steady]))
        self.assertEqual('determinism: 12 runs, 0 flaky, 1 seed-dependent, '
                         'wall 3 s',
                         compare.summary_line([summary, steady], 3.2))

    def test_race_points_that_differ_only_between_seeds_are_no_flake(self):
        (summary,) = compare.summarise(
            [_run('x', 1, points='p', hash_seed=5),
             _run('x', 2, points='q', hash_seed=6)])
        self.assertFalse(summary.flaky)
        self.assertTrue(summary.seed_dependent)
        self.assertEqual('x: 2 race-point recordings by hash seed: p (seed '
                         '5), q (seed 6); seed 5 (run 1) and seed 6 (run 2) '
                         'first differ at', summary.seed_dependence()[0])

    def test_timelines_that_differ_under_one_seed_are_a_flake(self):
        runs = [_run('x', 1, digest='a', hash_seed=0),
                _run('x', 2, digest='c', hash_seed=1),
                _run('x', 3, digest='b', hash_seed=0),
                _run('x', 4, digest='c', hash_seed=1)]
        (summary,) = compare.summarise(runs)
        self.assertTrue(summary.flaky)
        self.assertFalse(summary.seed_dependent)
        self.assertEqual([], summary.seed_dependence())
        self.assertEqual(['x: 2 timelines under hash seed 0; runs 1 (a) and '
                          '3 (b) first differ at'], summary.divergence())
        self.assertEqual([], compare.seed_dependence_section([summary]))

    def test_without_seeds_the_table_and_line_are_as_before(self):
        # All runs under the seed their process had: one group.
        summaries = compare.summarise(
            [_run('x', 1, hash_seed=0), _run('x', 2, digest='e',
                                             hash_seed=0)])
        self.assertTrue(summaries[0].flaky)
        self.assertEqual('x: 2 timelines; runs 1 (d1) and 2 (e) first '
                         'differ at', summaries[0].divergence()[0])
        self.assertNotIn('seeds', compare.table(summaries)[0])
        self.assertEqual('determinism: 2 runs, 1 flaky, wall 1 s',
                         compare.summary_line(summaries, 1.0))


class _PoolHere(object):
    """Stands in for ``Pool`` (the class): each pool runs jobs here.

    ``seeds`` gets ``PYTHONHASHSEED`` as each pool starts, what the
    workers it spawned would get. A job in ``hang`` breaks its pool as a
    hung worker does, its hang record written first.
    """

    def __init__(self, hang=()):
        self.seeds = []
        self.hang = set(hang)

    def __call__(self, workers, recycle=0):
        return self

    def __enter__(self):
        self.seeds.append(os.environ.get('PYTHONHASHSEED'))
        return self

    def __exit__(self, *exc_info):
        return False

    def call(self, func, *args):
        return func(*args)

    def imap(self, func, jobs):
        for job in jobs:
            if (job['item'], job['number']) in self.hang:
                self.hang.discard((job['item'], job['number']))
                with open(os.path.join(job['hangs'], '1.json'), 'w') as f:
                    json.dump({'item': job['item'], 'number': job['number'],
                               'timeout': job['timeout'], 'stacks': []}, f)
                raise concurrent.futures.process.BrokenProcessPool('died')
            yield func(job)


class _RunsBySeed(object):
    """Stands in for ``run_once`` in a worker: its seed is the environment's.

    ``text(item, seed)`` is the run's timeline, ``verdict(item, seed)``
    its verdict; ``seed_said`` overrides the seed it reports.
    """

    def __init__(self, text=None, verdict=None, stop_after=None,
                 seed_said=None):
        self.text = text or (lambda item, seed: 'timeline of %s' % item)
        self.verdict = verdict or (lambda item, seed: 'pass')
        self.stop_after = stop_after
        self.seed_said = seed_said
        self.jobs = []

    def __call__(self, job):
        if self.stop_after is not None and len(self.jobs) == self.stop_after:
            raise KeyboardInterrupt
        seed = pool.current_hash_seed()
        self.jobs.append((job['item'], job['number'], seed))
        text = self.text(job['item'], seed)
        return {'item': job['item'], 'number': job['number'],
                'verdict': self.verdict(job['item'], seed),
                'timeline': records.digest(text), 'timeline_text': text,
                'points': 'p1', 'points_text': 'points', 'seconds': 1.0,
                'worker': 1, 'rss_mb': 100.0,
                'scenarios': [[job['item'], None]],
                'hash_seed': (seed if self.seed_said is None
                              else self.seed_said)}


def _boot_follows_the_seed(item, seed):
    # Of two equal devices, seed 5 picks one and seed 9 the other.
    if item == 'boot__one':
        return 'boot vm1\nnvme%d' % (seed % 2 if seed == 5 else 0)
    return 'timeline of %s' % item


class _SeedPoolCase(testing.TestCase):
    """Checks whose pools run here, each noting the seed it was made under."""

    ITEMS = TestJobs.ITEMS

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable('PYTHONHASHSEED', '0'))
        self.pool = _PoolHere()
        self.patch(pool, 'Pool', self.pool)


class TestCheckWithSeeds(_SeedPoolCase):
    """A pool per seed, one after the other, under that seed."""

    def _check(self, runs, **kwargs):
        report = check.check(4, workers=1, items=self.ITEMS,
                             hash_seeds=[5, 9], run=runs, **kwargs)
        if report.hang_dir:
            self.addCleanup(shutil.rmtree, report.hang_dir, True)
        return report

    def test_each_seed_runs_in_its_own_pool_under_it(self):
        runs = _RunsBySeed(text=_boot_follows_the_seed)
        report = self._check(runs)
        self.assertEqual(['5', '9'], self.pool.seeds)
        # Seed 5's runs (1 and 3) first, then seed 9's, each round-robin;
        # each ran with its seed in the environment.
        self.assertEqual(
            [('boot__one', 1, 5), ('test_bites.T.test_x', 1, 5),
             ('boot__one', 3, 5), ('test_bites.T.test_x', 3, 5),
             ('boot__one', 2, 9), ('test_bites.T.test_x', 2, 9),
             ('boot__one', 4, 9), ('test_bites.T.test_x', 4, 9)],
            runs.jobs)
        self.assertEqual('0', os.environ['PYTHONHASHSEED'])
        self.assertEqual('', report.error)
        self.assertEqual({1: 5, 2: 9, 3: 5, 4: 9},
                         {run.number: run.hash_seed for run in report.runs})
        boot, bites = report.summaries
        self.assertEqual((False, True), (boot.flaky, boot.seed_dependent))
        self.assertEqual((False, False), (bites.flaky, bites.seed_dependent))

    def test_the_json_has_the_seeds(self):
        report = self._check(_RunsBySeed(text=_boot_follows_the_seed))
        args = determinism_cli.parse_args(['--hash-seeds', '5,9',
                                           '--workers', '1'])
        data = json.loads(json.dumps(report_mod.to_json(
            report, vars(args), IDENTITY)))
        self.assertEqual([5, 9], data['settings']['hash_seeds'])
        self.assertEqual((0, 1), (data['flaky'], data['seed_dependent']))
        boot = data['items'][0]
        one = records.digest('boot vm1\nnvme1')
        zero = records.digest('boot vm1\nnvme0')
        self.assertEqual(
            {'5': {'runs': [1, 3], 'verdicts': {'pass': 2},
                   'timelines': {one: 2}, 'points': {'p1': 2}},
             '9': {'runs': [2, 4], 'verdicts': {'pass': 2},
                   'timelines': {zero: 2}, 'points': {'p1': 2}}},
            boot['by_seed'])
        self.assertTrue(boot['seed_dependent'])
        self.assertTrue(boot['seed_dependence'][0].startswith(
            'boot__one: 2 timelines by hash seed: %s (seed 5), %s (seed 9)'
            % (one, zero)), boot['seed_dependence'])
        self.assertEqual([], boot['divergence'])
        self.assertEqual({1: 5, 2: 9, 3: 5, 4: 9},
                         {run['number']: run['hash_seed']
                          for run in data['runs']
                          if run['item'] == 'boot__one'})
        # What the JSON says comes back on --resume.
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'report.json')
        with open(path, 'w') as target:
            json.dump(data, target)
        self.assertEqual(report.runs, report_mod.load_report(
            path, args, IDENTITY).runs)

    def test_a_worker_with_another_seed_is_an_error(self):
        report = self._check(_RunsBySeed(seed_said=0))
        self.assertEqual('boot__one run 1 was to run under hash seed 5, its '
                         'worker had 0', report.error)

    def test_a_hang_goes_on_in_a_fresh_pool_of_the_same_seed(self):
        self.pool.hang = {('boot__one', 3)}
        runs = _RunsBySeed()
        report = self._check(runs)
        self.assertEqual(['5', '5', '9'], self.pool.seeds)
        self.assertEqual([('test_bites.T.test_x', 3, 5)],
                         [job for job in runs.jobs[2:3]])
        (hung,) = [run for run in report.runs if run.timeline == 'hung']
        self.assertEqual(('boot__one', 3, 5),
                         (hung.item, hung.number, hung.hash_seed))
        self.assertEqual(8, len(report.runs))
        self.assertEqual('0', os.environ['PYTHONHASHSEED'])

    def test_an_interrupt_puts_the_seed_back(self):
        report = self._check(_RunsBySeed(stop_after=5))
        self.assertTrue(report.interrupted)
        self.assertEqual(['5', '9'], self.pool.seeds)
        self.assertEqual('0', os.environ['PYTHONHASHSEED'])

    def _main(self, runs, path):
        self.patch(suite, 'run_once', runs)
        self.patch(suite, 'discover',
                   lambda sources: {'items': self.ITEMS})
        self.patch(report_mod, 'code_identity', lambda scenarios=(): IDENTITY)
        out = io.StringIO()
        code = determinism_cli.main(['--runs', '4', '--workers', '1',
                                     '--hash-seeds', '5,9', '--quiet',
                                     '--json', path], out=out)
        return code, out.getvalue()

    def test_main_exits_0_on_timelines_that_follow_the_seed(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'report.json')
        code, text = self._main(_RunsBySeed(text=_boot_follows_the_seed),
                                path)
        self.assertEqual(0, code, text)
        self.assertIn("\nseed-dependent timelines (Nova's choice between "
                      "equals follows the hash seed): 1 tests\n\n"
                      "boot__one: 2 timelines by hash seed: ", text)
        self.assertIn('    b>    2  nvme0\n', text)
        self.assertIn('determinism: 8 runs, 0 flaky, 1 seed-dependent',
                      text)
        with open(path) as source:
            self.assertEqual(1, json.load(source)['seed_dependent'])

    def test_main_exits_1_on_verdicts_that_follow_the_seed(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'report.json')
        code, text = self._main(_RunsBySeed(verdict=lambda item, seed: (
            'fail: nvme1 taken' if seed == 9 and item == 'boot__one'
            else 'pass')), path)
        self.assertEqual(1, code, text)
        self.assertIn('boot__one: 2 verdicts:\n  2 x pass (seed 5)\n'
                      '  2 x fail: nvme1 taken (seed 9)\n', text)
        self.assertNotIn('seed-dependent timelines', text)


class TestResumeWithSeeds(_SeedPoolCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def _args(self, seeds=None):
        return determinism_cli.parse_args(
            ['--workers', '1'] + (['--hash-seeds', seeds] if seeds else []))

    def _report(self, settings, stop_after=3, hash_seeds=(5, 9)):
        report = check.check(4, workers=1, items=self.ITEMS,
                             hash_seeds=hash_seeds,
                             run=_RunsBySeed(stop_after=stop_after))
        path = os.path.join(self.directory, 'report.json')
        with open(path, 'w') as target:
            json.dump(report_mod.to_json(report, settings, IDENTITY),
                      target)
        return path

    def test_resumed_runs_keep_their_seeds(self):
        path = self._report(vars(self._args('5,9')))
        earlier = report_mod.load_report(path, self._args('5,9'), IDENTITY)
        self.assertEqual([5, 5, 5], [run.hash_seed for run in earlier.runs])
        runs = _RunsBySeed()
        report = check.check(4, workers=1, items=self.ITEMS,
                             hash_seeds=[5, 9], previous=earlier,
                             run=runs)
        self.assertEqual(
            [('test_bites.T.test_x', 3, 5), ('boot__one', 2, 9),
             ('test_bites.T.test_x', 2, 9), ('boot__one', 4, 9),
             ('test_bites.T.test_x', 4, 9)], runs.jobs)
        self.assertEqual(8, len(report.runs))
        self.assertEqual('', report.error)

    def test_a_report_of_other_seeds_is_refused(self):
        path = self._report(vars(self._args('5,9')))
        for seeds, theirs in (('5,8', '5,8'), ('9,5', '9,5'),
                              (None, 'None')):
            error = self.assertRaises(options.UsageError,
                                      report_mod.load_report, path,
                                      self._args(seeds), IDENTITY)
            self.assertEqual('--resume %s: it ran with --hash-seeds 5,9, '
                             'this check with --hash-seeds %s'
                             % (path, theirs), str(error))

    def test_a_report_without_seeds_loads_and_refuses_seeds(self):
        # As a report made before the option: no setting, no run field.
        path = self._report({'busy': 0, 'select': None}, hash_seeds=None)
        with open(path) as source:
            data = json.load(source)
        for run in data['runs']:
            del run['hash_seed']
        with open(path, 'w') as target:
            json.dump(data, target)
        earlier = report_mod.load_report(path, self._args(), IDENTITY)
        self.assertEqual([None, None, None],
                         [run.hash_seed for run in earlier.runs])
        error = self.assertRaises(options.UsageError,
                                  report_mod.load_report, path,
                                  self._args('0'), IDENTITY)
        self.assertEqual('--resume %s: it ran with --hash-seeds None, this '
                         'check with --hash-seeds 0' % path, str(error))
