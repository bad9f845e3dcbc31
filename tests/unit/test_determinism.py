"""tools/determinism.py: normalising, comparing and reporting runs.

Everything here is pure (no Nova): verdicts and their normalisation, the
text whose digest is compared, where two runs first diverge, the table and
the summary line, and the clean errors for bad arguments.
"""

import collections
import io
import json
import os

import fixtures
import testtools

from harness.core import snapshot as snapshot_mod
from harness import testing
from harness.core import timeline as timeline_mod
from tools import determinism


def _run(item, number, verdict='pass', digest='d1', seconds=1.0,
         points='p1'):
    return determinism.Run(item, number, verdict, digest, points, seconds)


def _snapshot(pinned=(), vm1_host='src', generation=3):
    provider = snapshot_mod.Provider(
        name='src', uuid='6a1c0c54-34b5-4b8e-9d0e-2f3c4d5e6f70',
        generation=generation, parent=None, root='src',
        inventories={'VCPU': {'total': 8}}, usages={'VCPU': 1})
    cell = snapshot_mod.Cell(id=0, cpus=(0, 1, 2, 3), pcpus=(2, 3),
                             cpu_usage=0, memory_mb=4096, memory_usage=0,
                             pinned_cpus=tuple(pinned), pages={})
    tracker = snapshot_mod.Tracker(host='src', node='src', vcpus=8,
                                   vcpus_used=1, memory_mb=4096,
                                   memory_mb_used=512, local_gb=10,
                                   local_gb_used=1, cells=(cell,))
    server = snapshot_mod.Server(name='vm1', uuid='u', status='ACTIVE',
                                 host=vm1_host, task_state=None)
    return snapshot_mod.Snapshot(
        {'src': provider}, {'vm1': {'src': {'VCPU': 1}}}, {'src': tracker},
        {'vm1': server}, {})


class _Passage(object):
    def __init__(self, text, version):
        self.text, self.version = text, version

    def __str__(self):
        return self.text


def _timeline(**kwargs):
    passages = kwargs.pop('passages', [_Passage('before boot on src', 3)])
    timeline = timeline_mod.Timeline()
    timeline.add(0, 'start', _snapshot())
    entry = timeline.add(1, 'boot vm1', _snapshot(**kwargs))
    entry.passages = passages
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
            determinism.normalise(text))

    def test_what_is_not_volatile_stays(self):
        text = ('step 3 (resize vm1 to pin2b): pinned CPUs on src: '
                'expected 2, got 0; migration(vm1)@src PCPU=2 @41')
        self.assertEqual(text, determinism.normalise(text))

    def test_verdict(self):
        self.assertEqual('pass', determinism.verdict('pass'))
        self.assertEqual(
            'fail: AssertionError: <uuid> held',
            determinism.verdict(
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
                         determinism.exception_message(text))

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
                         determinism.exception_message(text))


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
        result = determinism._Result()
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
                         determinism._Result().verdict())


class TestTexts(testing.TestCase):

    def test_same_runs_same_digests(self):
        for text in (determinism.timeline_text, determinism.points_text):
            one = text([_timeline(pinned=(2,))])
            two = text([_timeline(pinned=(2,))])
            self.assertEqual(one, two)
            self.assertEqual(determinism.digest(one),
                             determinism.digest(two))

    def test_rendered_timeline_comes_first_as_it_is(self):
        timeline = _timeline(pinned=(2,))
        text = determinism.timeline_text([timeline])
        self.assertTrue(text.startswith('== timeline 1\n' + timeline.render()))

    def test_what_the_render_leaves_out_still_counts(self):
        base = determinism.timeline_text([_timeline()])
        for other in (_timeline(generation=4), _timeline(vm1_host='dst')):
            self.assertNotEqual(
                determinism.digest(base),
                determinism.digest(determinism.timeline_text([other])))

    def test_points_with_their_write_count(self):
        base = determinism.points_text([_timeline()])
        self.assertIn('-- step 1: boot vm1\nbefore boot on src @3', base)
        for other in (_timeline(passages=[_Passage('before boot on src',
                                                   4)]),
                      _timeline(passages=[_Passage('before boot on -', 3)])):
            self.assertNotEqual(
                determinism.digest(base),
                determinism.digest(determinism.points_text([other])))
        # Points are not part of the timeline's digest.
        self.assertEqual(
            determinism.timeline_text([_timeline()]),
            determinism.timeline_text([_timeline(passages=[])]))

    def test_problems_and_recordings_count(self):
        timeline = _timeline()
        timeline.entries[-1].problems = ['usages_add_up: off by one']
        self.assertIn('problem usages_add_up: off by one',
                      determinism.timeline_text([timeline]))
        self.assertIn('== race recording 1: 1 points\n'
                      'after prep_resize on dst @9',
                      determinism.points_text(
                          [], [[_Passage('after prep_resize on dst', 9)]]))

    def test_no_uuid_in_the_text(self):
        text = determinism.timeline_text([_timeline()])
        self.assertNotIn('6a1c0c54', text)


class TestDivergence(testing.TestCase):

    def test_identical_texts(self):
        self.assertIsNone(determinism.first_divergence('a\nb', 'a\nb'))

    def test_first_differing_line_with_context(self):
        left = '\n'.join('line %d' % n for n in range(1, 11))
        right = left.replace('line 6', 'line six').replace('line 9', 'x')
        number, lines = determinism.first_divergence(left, right, 1)
        self.assertEqual(6, number)
        self.assertEqual(['a     5  line 5', 'a>    6  line 6',
                          'a     7  line 7', 'b     5  line 5',
                          'b>    6  line six', 'b     7  line 7'], lines)

    def test_one_text_ends_first(self):
        number, lines = determinism.first_divergence('a\nb', 'a\nb\nc', 1)
        self.assertEqual(3, number)
        self.assertIn('a>    3  (ends)', lines)
        self.assertIn('b>    3  c', lines)


class TestSummaries(testing.TestCase):

    def test_steady_and_flaky(self):
        runs = [_run('steady', 1), _run('steady', 2),
                _run('verdicts', 1), _run('verdicts', 2, 'fail: boom'),
                _run('timelines', 1, digest='a', seconds=1.0),
                _run('timelines', 2, digest='b', seconds=3.0)]
        steady, verdicts, timelines = determinism.summarise(runs)
        self.assertFalse(steady.flaky)
        self.assertTrue(verdicts.flaky)
        self.assertTrue(timelines.flaky)
        self.assertEqual(collections.Counter({'pass': 1, 'fail: boom': 1}),
                         verdicts.verdicts)
        self.assertEqual(2, len(timelines.timelines))
        self.assertEqual(2.0, timelines.mean_seconds)

    def test_race_points_alone_make_it_flaky(self):
        (summary,) = determinism.summarise(
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
        (summary,) = determinism.summarise(runs, texts)
        lines = summary.divergence()
        self.assertEqual('x: 2 timelines; runs 1 (a) and 3 (b) first '
                         'differ at', lines[0])
        self.assertIn('    a>    2  before boot on src @12', lines)
        self.assertIn('    b>    2  before boot on - @12', lines)

    def test_divergence_lists_verdicts(self):
        runs = [_run('x', 1), _run('x', 2, 'fail: boom\nmore')]
        (summary,) = determinism.summarise(runs)
        self.assertEqual(['x: 2 verdicts:', '  1 x pass',
                          '  1 x fail: boom | more'], summary.divergence())

    def test_table_and_summary_line(self):
        summaries = determinism.summarise(
            [_run('a_long_scenario', 1, seconds=2.0),
             _run('a_long_scenario', 2, seconds=4.0),
             _run('b', 1, digest='x'), _run('b', 2, digest='y')])
        self.assertEqual(
            ['scenario         runs  verdicts  timelines  points  flaky  '
             's/run',
             'a_long_scenario     2         1          1       1     no   '
             '3.00',
             'b                   2         1          2       1    yes   '
             '1.00'],
            determinism.table(summaries))
        self.assertEqual('determinism: 4 runs, 1 flaky, wall 12 s',
                         determinism.summary_line(summaries, 12.4))


class TestJobs(testing.TestCase):

    ITEMS = [{'id': 'boot__one', 'test': 'tests.f.Boot.test_1_boot__one'},
             {'id': 'test_bites.T.test_x', 'test': 'tests.r.test_bites.T.'
                                                   'test_x'}]

    def test_select_by_id_or_test_id(self):
        self.assertEqual(self.ITEMS[:1],
                         determinism.select(self.ITEMS, '^boot'))
        self.assertEqual(self.ITEMS[1:],
                         determinism.select(self.ITEMS, r'r\.test_bites'))
        self.assertEqual(self.ITEMS, determinism.select(self.ITEMS, None))

    def test_round_robin(self):
        jobs = determinism.jobs_for(self.ITEMS, 2)
        self.assertEqual([('boot__one', 1), ('test_bites.T.test_x', 1),
                          ('boot__one', 2), ('test_bites.T.test_x', 2)],
                         [(job['item'], job['number']) for job in jobs])


class TestArguments(testing.TestCase):

    def test_defaults(self):
        args = determinism.parse_args([])
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
            error = self.assertRaises(determinism.UsageError,
                                      determinism.parse_args, argv)
            self.assertIn(words, str(error))

    def test_main_exits_2_without_running(self):
        err = io.StringIO()
        self.patch(determinism.sys, 'stderr', err)
        self.assertEqual(2, determinism.main(['--runs', '0'],
                                             out=io.StringIO()))
        self.assertIn('determinism: --runs must be at least 1',
                      err.getvalue())


class TestDump(testing.TestCase):

    def test_dump_writes_only_flaky_tests(self):
        directory = self.useFixture(fixtures.TempDir()).path
        runs = [_run('steady', 1), _run('flaky/x', 1, digest='a'),
                _run('flaky/x', 2, digest='b')]
        texts = {('steady', 'd1'): 's', ('flaky/x', 'a'): 'one',
                 ('flaky/x', 'b'): 'two', ('flaky/x', 'p1'): 'points'}
        paths = determinism.dump(determinism.summarise(runs, texts),
                                 directory)
        self.assertEqual(['flaky_x.run1.a.txt', 'flaky_x.run2.b.txt',
                          'flaky_x.run1.p1.txt'],
                         [os.path.basename(p) for p in paths])
        with open(paths[1]) as f:
            self.assertEqual('two\n', f.read())


class TestHangs(testing.TestCase):

    def test_collect_hangs_reads_and_removes_the_records(self):
        directory = self.useFixture(fixtures.TempDir()).path
        record = {'item': 'boot__x', 'number': 3, 'timeout': 900,
                  'stacks': ['  File "a.py", line 1']}
        with open(os.path.join(directory, '123.json'), 'w') as f:
            json.dump(record, f)
        self.assertEqual([record], determinism._collect_hangs(directory))
        self.assertEqual([], os.listdir(directory))


class TestBurners(testing.TestCase):

    def test_burners_stop_on_leaving(self):
        with determinism.Burners(2) as burners:
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
            with determinism.Burners(1) as burners:
                captured.extend(burners.processes)
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        self.assertIsNotNone(captured[0].poll())


class _FakeScenario(object):
    id = 'fake__a_scenario'
    path = 'fake.yaml'
    steps = ()


FAKE_SCENARIO = _FakeScenario()


class _RunsScenarios(testtools.TestCase):
    """Test bodies to read, never run (no method name starts with test)."""

    def check_only_the_scenario(self):
        self.run_scenario(FAKE_SCENARIO)

    def check_the_scenario_with_more(self):
        # A bug put back: a test of its own, but it runs the scenario.
        self.run_scenario(FAKE_SCENARIO, fixtures=['bug'])

    def check_something_else(self):
        self.assertTrue(FAKE_SCENARIO)


class TestWhichScenariosRun(testing.TestCase):

    def test_a_scenario_only_test_is_listed_by_its_scenario(self):
        case = _RunsScenarios('check_only_the_scenario')
        self.assertIs(FAKE_SCENARIO, determinism.scenario_of(case))
        self.assertEqual([FAKE_SCENARIO],
                         determinism.scenarios_run_by(case))

    def test_a_test_that_adds_to_it_still_runs_it(self):
        case = _RunsScenarios('check_the_scenario_with_more')
        self.assertIsNone(determinism.scenario_of(case))
        self.assertEqual([FAKE_SCENARIO],
                         determinism.scenarios_run_by(case))

    def test_a_test_that_runs_none(self):
        case = _RunsScenarios('check_something_else')
        self.assertIsNone(determinism.scenario_of(case))
        self.assertEqual([], determinism.scenarios_run_by(case))


IDENTITY = {'files': 'f00d', 'text_format': 1, 'python': '3.11.7',
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
                'verdict': 'pass', 'timeline': determinism.digest(text),
                'timeline_text': text, 'points': 'p1',
                'points_text': 'points', 'seconds': 1.0, 'worker': 1,
                'rss_mb': 100.0}


class TestResume(testing.TestCase):

    ITEMS = TestJobs.ITEMS
    SETTINGS = {'busy': 2, 'select': None, 'runs': 3}

    def _args(self, **changes):
        settings = dict(self.SETTINGS, **changes)
        return determinism.parse_args(
            ['--busy', str(settings['busy'])]
            + (['--select', settings['select']] if settings['select']
               else []))

    def _interrupted_report(self, stop_after=3):
        """Path of a stopped check (2 tests x 3 runs), written as --json.

        It stopped (as on SIGINT) after ``stop_after`` runs.
        """
        report = determinism.check(3, workers=0, items=self.ITEMS,
                                   run=_FakeRuns(stop_after=stop_after))
        self.assertTrue(report.interrupted)
        self.assertEqual(stop_after, len(report.runs))
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'report.json')
        with open(path, 'w') as target:
            json.dump(determinism.to_json(report, self.SETTINGS, IDENTITY),
                      target)
        return path

    def test_resume_runs_only_what_is_left_and_reports_all(self):
        path = self._interrupted_report(stop_after=3)
        earlier = determinism.load_report(path, self._args(), IDENTITY)
        runs = _FakeRuns()
        report = determinism.check(3, workers=0, items=self.ITEMS,
                                   previous=earlier, run=runs)
        # Round-robin: the first 3 jobs were boot 1, bites 1, boot 2.
        self.assertEqual([('test_bites.T.test_x', 2), ('boot__one', 3),
                          ('test_bites.T.test_x', 3)], runs.jobs)
        self.assertEqual([(3, False), (3, False)],
                         [(s.runs, s.flaky) for s in report.summaries])
        self.assertFalse(report.interrupted)
        self.assertGreaterEqual(report.wall, earlier.wall)

    def test_a_resumed_run_that_differs_shows_both_texts(self):
        path = self._interrupted_report(stop_after=3)
        earlier = determinism.load_report(path, self._args(), IDENTITY)
        report = determinism.check(
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
        error = self.assertRaises(determinism.UsageError,
                                  determinism.load_report, path,
                                  self._args(), other_code)
        self.assertEqual(
            '--resume %s: its runs ran other code (files, nova: f00d, '
            '34.0.0 there, beef, 35.0.0 here)' % path, str(error))
        error = self.assertRaises(determinism.UsageError,
                                  determinism.load_report, path,
                                  self._args(busy=0), IDENTITY)
        self.assertEqual('--resume %s: it ran with --busy 2, this check '
                         'with --busy 0' % path, str(error))
        error = self.assertRaises(determinism.UsageError,
                                  determinism.load_report, path,
                                  self._args(select='^boot'), IDENTITY)
        self.assertIn('it ran with --select None, this check with '
                      '--select ^boot', str(error))

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
            error = self.assertRaises(determinism.UsageError,
                                      determinism.load_report, path,
                                      self._args(), IDENTITY)
            self.assertIn('--resume %s: %s' % (path, words), str(error))
        missing = os.path.join(directory, 'missing.json')
        error = self.assertRaises(determinism.UsageError,
                                  determinism.load_report, missing,
                                  self._args(), IDENTITY)
        self.assertEqual('--resume %s: No such file or directory' % missing,
                         str(error))

    def test_main_refuses_a_bad_report_before_running(self):
        err = io.StringIO()
        self.patch(determinism.sys, 'stderr', err)
        missing = os.path.join(self.useFixture(fixtures.TempDir()).path,
                               'missing.json')
        self.assertEqual(2, determinism.main(['--resume', missing],
                                             out=io.StringIO()))
        self.assertIn('determinism: --resume %s: No such file' % missing,
                      err.getvalue())


class TestCodeIdentity(testing.TestCase):

    def test_a_file_under_the_code_changes_it_caches_do_not(self):
        root = self.useFixture(fixtures.TempDir()).path
        for top in determinism.CODE_DIRS:
            os.makedirs(os.path.join(root, top, '__pycache__'))
            with open(os.path.join(root, top, 'a.py'), 'w') as target:
                target.write('x = 1\n')
        first = determinism.code_identity(root)
        self.assertEqual(1, first['text_format'])
        with open(os.path.join(root, 'tests', '__pycache__', 'a.pyc'),
                  'w') as target:
            target.write('cache')
        os.makedirs(os.path.join(root, 'tests', '.hypothesis'))
        with open(os.path.join(root, 'tests', '.hypothesis', 'examples'),
                  'w') as target:
            target.write('a database of examples, not code')
        with open(os.path.join(root, 'outside.py'), 'w') as target:
            target.write('y = 2\n')
        self.assertEqual(first, determinism.code_identity(root))
        with open(os.path.join(root, 'fixtures', 'a.py'), 'w') as target:
            target.write('x = 2\n')
        second = determinism.code_identity(root)
        self.assertNotEqual(first['files'], second['files'])
        self.assertEqual(dict(first, files=None), dict(second, files=None))
