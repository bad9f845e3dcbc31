"""A branched replay is the replay from the start, step for step.

The explorer runs a scenario once per worker and forks each replay
where its steps part from the scenario's (``explorer.replay_branched``).
The proof: for replays injecting at points of the resize and of the
confirm of a pinned resize between two profiled (libvirt) hosts, with
LP#1944759 put back so that some of them fail, each branched replay's
result is the one a replay from the start gives: the same verdict, the
same first failing step and problems, the same race points passed, and
the same timeline (``timeline.comparable``: every provider, usage,
allocation, tracker, server and migration after every step).

A replay that only injects before a step forks inside it, where its
injection fires: the same proof covers those, those postponed to another
trunk run for want of a free core, and those left to a trunk run that
forks them before the step, where no fork could be taken. Under native
threading no fork is taken inside a step (``forking.safe_here``): every
replay forks before its step, and the same proof holds for those.

Nested (``Explorer(nested=True)``): depth-2 pairs that share their
first injection, at the resize, and put their second at the confirm
(or, under eventlet, later in the resize) fork from a run of their
first injection alone, itself forked from the trunk (inside the
resize, where it fires, under eventlet), at the point where their
second fires; the same proof holds for those, and for those left to a
trunk run that forks them before their step, where no fork could be
taken.

Shrinking branches too (``shrinking.Shrinker``): a round replays every
removal of a block of steps at once, forked from one run of the steps,
and keeps the first that fails alike in the order a one-by-one search
tries them. The proof: a failing replay with two injections, one of
them harmless, shrinks to the same steps branched as one removal at a
time from the start.
"""

import os
import re
import signal

import fixtures
from nova.tests.functional import integrated_helpers

from harness.cloud import mode
from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.runners import branching
from harness.runners import explorer
# Nova (in the process's mode, harness.cloud.mode, imported above) is
# loaded with this module, not inside the test (harness.leaks fails that).
from harness.runners import runner  # noqa: F401
from harness import testing
from harness.testing import hang_guard

SCENARIO = os.path.join(os.path.dirname(__file__), 'explore',
                        'pinned_resize_confirm.yaml')
PRE_MIGRATING = 'migration.status=pre-migrating'
# LP#1944759's window: the source has saved the instance on the
# destination (the last write before the destination's finish_resize
# starts). The explorer injects at the first point passed in a state,
# and this is the first passed in the state finish_resize starts in.
WINDOW = ('after', 'instance.host')
LIVE_MIGRATE = os.path.join(os.path.dirname(__file__), 'scenarios',
                            'live_migrate.yaml')
LIVE_MIGRATE_NFV = 'live migrate a two-node pinned guest between NFV hosts'
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')


class TestBranchedReplays(testing.TestCase):

    def test_branched_replays_are_the_replays_from_the_start(self):
        scenario = scenario_mod.load(SCENARIO)[0]
        explore = explorer.Explorer(reintroduce='1944759', workers=1)
        with explore.kept():
            plan = explore.plan(scenario)
            by_step = {}
            for injections in plan.runnable:
                by_step.setdefault(injections[0].at.step, []).append(
                    injections)
            # Steps 2 and 3: the resize and the confirm. Three replays
            # each. The resize's at one point, the bug's (WINDOW), in
            # three host orders (the source's first: the bug's window);
            # the confirm's the first three.
            self.assertEqual([2, 3], sorted(by_step)[:2])
            at_finish = [
                injections for injections in by_step[2]
                if (injections[0].at.when, injections[0].at.point)
                == WINDOW]
            in_window = [injections for injections in at_finish
                         if injections[0].hosts == ('source',)]
            self.assertEqual(1, len(in_window), by_step[2])
            resizing = in_window + [injections for injections in at_finish
                                    if injections not in in_window][:2]
            chosen = resizing + by_step[3][:3]
            jobs = [explore._job(scenario, injections)
                    for injections in chosen]
            self.assertTrue(explorer.branchable(jobs))
            # Two children at a time, as on two cores. Each replay here
            # only injects before one step: it forks inside that step, at
            # its point, and the trunk goes on with the step. The
            # resize's three come to their point together: two fork, and
            # the third, with no wait for a core allowed in the step
            # (wait_limit), is postponed to another trunk run, which
            # forks it at its point too. In the confirm, a call of
            # eventlet's thread pool is made to seem in flight at every
            # point (no fork can be taken there): its replays are left to
            # another trunk run, forked before the step.
            confirming = {point[2] for point in plan.baseline['points']
                          if point[0] == 3}
            _busy_where(self, lambda branches, passage:
                        passage.point in confirming)
            branched = _branched_as_from_start(
                self, chosen, jobs, explore._pool, concurrency=2,
                wait_limit=0.0)
        for injections, ours in zip(chosen, branched):
            where = ' + '.join(str(i) for i in injections)
            # A timeline of every step: the injection, the resize, the
            # confirm and the delete ran in the branch.
            self.assertEqual(
                1 + len(scenario.steps) + sum(len(i.steps())
                                              for i in injections),
                len(ours['timeline']), where)
        prefixes = [result['phases']['prefix'] > 0.0
                    for result in branched]
        if mode.THREADING:
            # Under native threading no fork is taken inside a step (the
            # child would have only the forking thread): each forked
            # before its step, from one trunk, whose shared steps' time
            # only the first replay carries.
            self.assertEqual([None] * 6,
                             [result['forked_at'] for result in branched])
            self.assertEqual([True] + [False] * 5, prefixes)
            return
        # The resize's forked where their injections fired; the
        # confirm's before the step, from the second trunk.
        self.assertEqual(
            ['%s %s on %s (%s)' % (i[0].at.when, i[0].at.point,
                                   i[0].at.host, i[0].at.server)
             for i in chosen[:3]] + [None] * 3,
            [result['forked_at'] for result in branched])
        # Branched for real: only the first replay of each of the three
        # trunks carries the shared steps' time (its boot); the others ran
        # none of them.
        self.assertEqual([True, False, True, True, False, False], prefixes)

    def test_a_branch_of_the_trunks_first_steps_only(self):
        # A shrinking trial that drops the last step: forked before it,
        # the child has no step of its own to run.
        scenario = scenario_mod.load(SCENARIO)[0]
        steps = explorer.injected_steps(scenario, ())
        job = {'document': scenario.document(steps[:-1]),
               'base': scenario.document(steps), 'where': scenario.path,
               'reintroduce': None, 'invariants': True}
        explore = explorer.Explorer(workers=1)
        with explore.kept():
            from_start = explorer.replay(job, record=True,
                                         pool=explore._pool)
            branched = explorer.replay_branched([job], pool=explore._pool,
                                                record=True)[0]
        # Boot, resize, confirm: the delete dropped.
        self.assertEqual(1 + len(steps) - 1, len(branched['timeline']))
        for key in ('failed', 'step', 'points', 'timeline'):
            self.assertEqual(from_start[key], branched[key], key)

    def test_a_child_that_fails_inside_the_step_fails_the_trunk(self):
        # Seen while the trunk waits for it inside the resize (one child
        # at a time), its failure must not land in Nova's code there (a
        # cast's handler would log it and go on): the trunk's run fails
        # with it once the step is over.
        scenario = scenario_mod.load(SCENARIO)[0]
        explore = explorer.Explorer(workers=1)
        with explore.kept():
            plan = explore.plan(scenario)
            jobs = [explore._job(scenario, injections)
                    for injections in plan.runnable
                    if injections[0].at.step == 2][:2]

            def branched(phases, prefix, forked_at):
                raise RuntimeError('the child fails')

            self.useFixture(fixtures.MonkeyPatch(
                'harness.runners.phases.Phases.branched', branched))
            self.assertRaisesRegex(
                errors.HarnessError, 'ended with status 70',
                explorer.replay_branched, jobs, pool=explore._pool)


class TestNestedBranches(testing.TestCase):

    def test_a_dead_pair_of_a_nested_trunk_ends_the_exploration(self):
        # Two nested trunks (a single's run each, two pairs forked from
        # it), side by side on two cores. The first forked's first pair
        # hangs (as a deadlocked child did); the other's first pair dies
        # once that one hangs. The trunk must not wait for the hung one
        # (the oldest): the exploration fails at once with the dead
        # pair's error, and no process it forked is left running.
        scenario = scenario_mod.load(SCENARIO)[0]
        # Here: the kept cloud's temporary directory goes with it.
        tmp = self.useFixture(fixtures.TempDir()).path
        forked = os.path.join(tmp, 'forked')
        hanging = os.path.join(tmp, 'hanging')
        os.mkfifo(hanging)
        explore = explorer.Explorer(workers=2, depth=2, nested=True)
        with explore.kept():
            plan = explore.plan(scenario)
            firsts, chosen, jobs = two_nests(self, explore, scenario,
                                             plan)
            hung, dying = ('nested', 0), ('nested', 1)
            under = []
            real_nest = branching.Branches.nest
            real_branched = explorer.phases_mod.Phases.branched

            def nest(branches, parts, at_points=None):
                # In a nested trunk: its key, for the children it forks.
                under.append(branches._key)
                return real_nest(branches, parts, at_points)

            def branched(phases, prefix, forked_at):
                with open(forked, 'a') as note:
                    note.write('%d\n' % os.getpid())
                if under == [hung]:
                    # Until the test's time limit (and its grace) is
                    # past: a run without the fix fails on that limit.
                    signal.signal(signal.SIGALRM, signal.SIG_DFL)
                    signal.alarm(hang_guard.limit() + hang_guard.GRACE
                                 if hang_guard.limit() else 0)
                    with open(hanging, 'w') as rendezvous:
                        rendezvous.write('%d\n' % os.getpid())
                    signal.pause()
                if under == [dying]:
                    # Once the other hangs (a FIFO's open waits for it).
                    with open(hanging) as rendezvous:
                        rendezvous.read()
                    raise RuntimeError('a pair of a nested trunk fails')
                return real_branched(phases, prefix, forked_at)

            self.useFixture(fixtures.MonkeyPatch(
                'harness.runners.branching.Branches.nest', nest))
            self.useFixture(fixtures.MonkeyPatch(
                'harness.runners.phases.Phases.branched', branched))
            error = self.assertRaises(
                branching.ChildFailed, explorer.replay_branched, jobs,
                pool=explore._pool, concurrency=2)
        # One of the dying trunk's pairs (the first it forked), and that
        # trunk, each named by what it injects.
        single = 'the run that puts in %s (the trunk of its pairs)' % (
            '; '.join(explorer._step_text(step)
                      for step in firsts[1].steps()))
        pairs = ['the replay that puts in %s' % '; '.join(
            explorer._step_text(step) for injection in pair
            for step in injection.steps()) for pair in chosen[2:]]
        self.assertEqual(70, error.status)
        self.assertIn(error.replay, pairs)
        self.assertEqual(((single, 70),), error.forked_by)
        self.assertIn('ended with status 70: %s; it was forked by %s, '
                      'which then ended with status 70; their errors are '
                      'above' % (error.replay, single), str(error))
        with open(forked) as note:
            pids = [int(line) for line in note.read().split()]
        # Both trunks and a pair of each (the hung one included).
        self.assertGreaterEqual(len(pids), 4)

        def none_running():
            self.assertEqual([], [pid for pid in pids if _running(pid)])
        integrated_helpers.InstanceHelperMixin._wait_for_assert(
            self, none_running)

    def test_nested_replays_are_the_replays_from_the_start(self):
        scenario = scenario_mod.load(SCENARIO)[0]
        explore = explorer.Explorer(reintroduce='1944759', workers=2,
                                    depth=2, nested=True)
        with explore.kept():
            plan = explore.plan(scenario)
            # The bug's window first (its pairs fail), and another resize
            # point; each with three confirm points, the second's all
            # but the first's first.
            later, firsts = _resize_then_confirm(plan)
            chosen = [pair for number, first in enumerate(firsts)
                      for pair in [pair for pair in later
                                   if pair[0] == first][::4][
                                       number:number + 3]]
            # And each with a resize point its run passes after its own
            # (from the start, the second fires after the first there).
            first_passed = _first_passed(plan)
            for first in firsts:
                chosen.extend([
                    pair for pair in plan.runnable if pair[0] == first
                    and pair[1].at.step == 2
                    and first_passed(pair[1].at) > first_passed(first.at)
                ][:1])
            jobs = [explore._nesting(scenario, pair) for pair in chosen]
            self.assertEqual(8, len(jobs))
            self.assertEqual(2, len(explorer._nests(jobs)))
            # Under eventlet, no fork can be taken at the first pair's
            # confirm point (a call of eventlet's thread pool seems in
            # flight there): it is left to another trunk run.
            busy_at = (chosen[0][1].at.point, chosen[0][1].at.when)
            self.assertNotIn(busy_at, [
                (pair[1].at.point, pair[1].at.when) for pair in chosen[1:]])
            # In the single's run (a child, not one of a nested trunk).
            _busy_where(self, lambda branches, passage: (
                branches.in_child and branches.nested_in is None
                and (passage.point, passage.when) == busy_at))
            seen = []
            branched = _branched_as_from_start(
                self, chosen, jobs, explore._pool, concurrency=2,
                seen=seen.append)
        # Each replayed once.
        self.assertEqual(8, len(seen))
        nested = [result['nested'] for result in branched]
        if mode.THREADING:
            # Every fork before a step: each resize-then-confirm pair from
            # its single's run; those within the resize from the trunk's.
            self.assertEqual([True] * 6 + [False] * 2, nested)
            self.assertEqual([None] * 8,
                             [result['forked_at'] for result in branched])
            return
        # The first left to another trunk run, forked before the
        # confirm; the others from their single's run, at their second
        # point, in the confirm or in the resize.
        self.assertEqual([False] + [True] * 7, nested)
        self.assertEqual(
            [None] + ['%s %s on' % (pair[1].at.when, pair[1].at.point)
                      for pair in chosen[1:]],
            [result['forked_at'] and ' '.join(
                result['forked_at'].split()[:3]) for result in branched])

    def test_a_nested_trunk_postpones_what_it_has_no_time_for(self):
        # A nested trunk forks its pairs one at a time, waiting for each
        # to end: inside a step those waits are wall time against the
        # RPC calls in flight there (the chain of casts made calls), and
        # a pair forked after rpc_response_timeout (60 s) of them saw
        # its calls time out at once: the resize's API request returned
        # mid-way, the test went on while the destination's
        # finish_resize still ran, and the pair hung on Nova's cell
        # fixture lock (2026-12-07, a nested trunk that had forked 24
        # pairs in 59.6 s of one step). A nested trunk now postpones,
        # as a trunk does, the step's pairs it would fork after
        # ``wait_limit``; with none allowed here, the confirm's first
        # pair of each single forks from that single's run and the
        # second goes to another trunk run, each still the replay from
        # the start (the bug's window's pairs fail, the others pass).
        scenario = scenario_mod.load(SCENARIO)[0]
        explore = explorer.Explorer(reintroduce='1944759', workers=2,
                                    depth=2, nested=True)
        with explore.kept():
            plan = explore.plan(scenario)
            later, firsts = _resize_then_confirm(plan)
            chosen = [pair for first in firsts
                      for pair in [pair for pair in later
                                   if pair[0] == first][:2]]
            jobs = [explore._nesting(scenario, pair) for pair in chosen]
            self.assertEqual(2, len(explorer._nests(jobs)))
            branched = _branched_as_from_start(
                self, chosen, jobs, explore._pool, concurrency=2,
                wait_limit=0.0)
        nested = [result['nested'] for result in branched]
        if mode.THREADING:
            # Every fork before a step, where no in-flight work waits:
            # all four from their single's run, before the confirm.
            self.assertEqual([True] * 4, nested)
            self.assertEqual([None] * 4,
                             [result['forked_at'] for result in branched])
            return
        self.assertEqual([True, False] * 2, nested)
        # The first of each where its confirm point fires; the postponed
        # from another trunk run, before the resize (a pair injects in
        # two steps: it forks where its steps part from the trunk's).
        self.assertEqual(
            ['%s %s' % (chosen[0][1].at.when, chosen[0][1].at.point),
             None] * 2,
            [result['forked_at'] and ' '.join(
                result['forked_at'].split()[:2]) for result in branched])


class TestForkedWhileMoving(testing.TestCase):

    def test_a_fork_during_a_live_migration_lets_no_other_work_run(self):
        # A restart of the source once the conductor's task is over, on
        # libvirt hosts: the source's live migration goes on in its own
        # green thread meanwhile. Forked there, the child must not let
        # that thread take a turn the run from the start does not give
        # it: it once did (ending the parent's thread pool passed through
        # eventlet's hub), the migration was running by the restart, and
        # the restarted compute aborted it (Nova's failure message then
        # lists a live_migration_abort action the other run has not).
        scenario = [s for s in scenario_mod.load(LIVE_MIGRATE)
                    if s.name == LIVE_MIGRATE_NFV][0]
        # The restart goes just before the source's live migration, in
        # either mode a point of the explorer's (the first it passes in
        # its state; before 2412204, under eventlet, the point after the
        # conductor's task stood for it). Under native threading a
        # replay forks before its step anyway, and the branched replay
        # must still be the replay from the start.
        point, when = ('live_migration', 'before')
        explore = explorer.Explorer(tasks=['restart'], workers=2)
        with explore.kept():
            plan = explore.plan(scenario)
            restart = [i for i in plan.runnable
                       if i[0].task == 'restart' and i[0].hosts == ('source',)
                       and i[0].at.point == point and i[0].at.when == when]
            self.assertEqual(1, len(restart), plan.runnable)
            job = explore._job(scenario, restart[0])
            from_start = explorer.replay(job, record=True,
                                         pool=explore._pool)
            branched = explorer.replay_branched(
                [job], pool=explore._pool, record=True, concurrency=2)[0]
        # Inside the step under eventlet; before it under native
        # threading (forking.safe_here).
        if mode.THREADING:
            self.assertIsNone(branched['forked_at'])
        else:
            self.assertIsNotNone(branched['forked_at'])
        # A restart of the source in mid-migration fails the run.
        self.assertTrue(from_start['failed'])
        for key in ('failed', 'step', 'label', 'points', 'timeline'):
            self.assertEqual(from_start[key], branched[key], key)
        self.assertEqual(_texts(from_start), _texts(branched))


def _resize_then_confirm(plan):
    """The pairs of a resize point then a confirm point, and two firsts.

    ``(pairs, firsts)``: the firsts are the source's periodic in the
    bug's window (``WINDOW``) and the fifth other resize point's.
    """
    later = [pair for pair in plan.runnable
             if (pair[0].at.step, pair[1].at.step) == (2, 3)]
    firsts = list(dict.fromkeys(pair[0] for pair in later))
    window = [first for first in firsts
              if (first.at.when, first.at.point) == WINDOW
              and first.hosts == ('source',)]
    return later, window + [first for first in firsts
                            if first not in window][4:5]


def _first_passed(plan):
    """``at`` -> where the scenario's run first passes it (an index)."""
    passed = [tuple(point[:5]) for point in plan.baseline['points']]
    return lambda at: passed.index((at.step, at.when, at.point, at.host,
                                    at.server))


def two_nests(case, explore, scenario, plan):
    """Two nests of two resize-then-confirm pairs: firsts, pairs, jobs.

    Those the nested proof sees nested in either mode, in the order the
    run passes their firsts: the first nest is forked first, and is
    ``('nested', 0)`` (the order of the jobs).
    """
    later, firsts = _resize_then_confirm(plan)
    first_passed = _first_passed(plan)
    firsts = sorted(firsts, key=lambda first: first_passed(first.at))
    chosen = [pair for first in firsts
              for pair in [pair for pair in later if pair[0] == first][1:3]]
    jobs = [explore._nesting(scenario, pair) for pair in chosen]
    case.assertEqual(2, len(explorer._nests(jobs)))
    return firsts, chosen, jobs


def _busy_where(case, busy):
    """A call of eventlet's thread pool seems in flight where ``busy``.

    ``busy(branches, passage)``: no fork can be taken at such a passage
    (``forking.safe_here``).
    """
    real_at_passage = branching.Branches.at_passage

    def at_passage(branches, passage, cloud):
        flight = int(bool(busy(branches, passage)))
        cloud.activity.native_calls += flight
        try:
            return real_at_passage(branches, passage, cloud)
        finally:
            cloud.activity.native_calls -= flight

    case.useFixture(fixtures.MonkeyPatch(
        'harness.runners.branching.Branches.at_passage', at_passage))


def _branched_as_from_start(case, chosen, jobs, pool, **options):
    """``jobs`` replayed branched (``options``), as from the start.

    Each branched replay's result is the replay's from the start; some
    fail, some pass: LP#1944759 put back, a periodic on the source
    before the destination's finish_resize loses the pinned CPUs.
    """
    branched = explorer.replay_branched(jobs, pool=pool, record=True,
                                        **options)
    from_start = [explorer.replay(job, record=True, pool=pool)
                  for job in jobs]
    case.assertIn(True, [result['failed'] for result in from_start])
    case.assertIn(False, [result['failed'] for result in from_start])
    for injections, ours, theirs in zip(chosen, branched, from_start):
        where = ' + '.join(str(i) for i in injections)
        for key in ('failed', 'step', 'label', 'inapplicable', 'points',
                    'timeline'):
            case.assertEqual(theirs.get(key), ours.get(key),
                             '%s: %s differs' % (where, key))
        case.assertEqual(
            [(p.check, p.subject, p.expected, p.actual)
             for p in theirs['problems']],
            [(p.check, p.subject, p.expected, p.actual)
             for p in ours['problems']], where)
    return branched


def _running(pid):
    """Whether process ``pid`` runs (a zombie has ended)."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            # After the command's parentheses: the state.
            return stat.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


def _texts(result):
    """A result's problems in full, but the UUIDs Nova draws anew."""
    return [UUID.sub('<uuid>', problem.text) for problem in
            result['problems']]


class TestBranchedShrinking(testing.TestCase):

    def test_branched_shrinking_drops_what_one_by_one_drops(self):
        scenario = scenario_mod.load(SCENARIO)[0]
        shrunk = {}
        for branch in (True, False):
            explore = explorer.Explorer(
                reintroduce='1944759', workers=2, branch=branch,
                out_dir=self.useFixture(fixtures.TempDir()).path)
            with explore.kept():
                plan = explore.plan(scenario)
                resize = [injections[0] for injections in plan.runnable
                          if injections[0].at.step == 2]
                # The bug's window (as above), and the destination's
                # periodic before the migration starts: harmless.
                window = [i for i in resize
                          if (i.at.when, i.at.point) == WINDOW
                          and i.hosts == ('source',)][0]
                harmless = [i for i in resize
                            if i.at.point == PRE_MIGRATING
                            and i.at.when == 'before'
                            and i.hosts == ('dest',)][0]
                self.assertFalse(explorer.replay(
                    explore._job(scenario, (harmless,)),
                    pool=explore._pool)['failed'])
                injections = (harmless, window)
                result = explorer.replay(
                    explore._job(scenario, injections), pool=explore._pool)
                # It fails in the resize: boot, two injects, resize.
                self.assertEqual((True, 4), (result['failed'],
                                             result['step']))
                outcome = explore._outcome(injections, result)
                explore._shrink(scenario, outcome, 1)
            shrunk[branch] = [step.raw for step in scenario_mod.load(
                outcome.shrunk_path)[0].steps]
        # The harmless injection dropped, the rest kept, either way.
        self.assertEqual(['boot', 'inject', 'resize'],
                         [list(step)[0] for step in shrunk[True]])
        self.assertEqual(WINDOW[1], shrunk[True][1]['inject'][WINDOW[0]])
        self.assertEqual(shrunk[False], shrunk[True])
