"""The race explorer: periodics at every race point of a move, shrunk.

Systematic, bounded exploration in the manner of CHESS: most real races
need one or two preemptions, so try every race point with one injection
(``depth=1``) or every pair (``depth=2``) rather than random timings.

1. Run the scenario once and record the race points each step passes.
2. For every point a move step passes (the step kinds that say ``moves``
   in the step registry: resize, migrate, live_migrate, confirm,
   revert, evacuate, rebuild, unshelve), replay the scenario with an
   injection there: each periodic task (``update_available_resource``
   always) on the source, on the destination, and on both in each order;
   for a kind whose server has no migration (rebuild, unshelve), on the
   server's own host (``explorer.orders``). Opt-in, ``restart``
   (``names.COMPUTE_TASKS``) restarts one of those computes at the point
   instead (``inject: {restart: role}``: the work it had there dies, it
   starts again at once with its guests; ``harness.cloud.dying``): the
   move step then usually fails short of its resting state, and what
   counts is what the checks say of the accounting Nova is left with.
   Opt-in too, ``delete_service`` deletes the compute service of one of
   them at the point (``inject: {do: {delete_service: role}, refused:
   true}``): the API must refuse it (409) while the move has the host (its
   instance or a migration in progress there), and nothing may change; a
   delete that goes through fails the replay
   (``interject.AnsweredOtherwise``), as does any change the checks see.
   A role no migration names at the point in the recorded run (none in
   flight yet) is not replayed: the injection could not run there
   (``race.noting_roles``); it counts as not applicable, as it would if
   replayed. At depth 2 this rules out a pair by its first injection
   only: the run is the recorded one up to the first point, not after
   (with ``prune``, the run of its first injection alone shows where
   the second fires: ``_second_unnamed``).
3. After every step of every replay, check the scenario's expectations and
   the invariant checks. The breaks a scenario declares (``known_open_bug``,
   ``known_finding``: ``harness.core.known_bugs``) are expected, as
   ``harness run`` expects them, at the replay's step that is the
   declared one (``_declared``); not failures.
4. Shrink each failure, as Hypothesis does, to the fewest steps and
   injections (then hosts, and smaller flavors) that still fail with the
   same signature: the first problem's check, its subject's role in the
   run and the failed step's kind (``harness.runners.signatures``,
   ``harness.runners.shrinking``); and write it out as a scenario file
   that ``harness run`` runs as it stands. Replays are deterministic
   (the cloud's clock and injections are), so a shrunk file fails every
   time.

Replays are independent, and share their first steps: up to the first
injection each is the scenario as recorded. So the explorer's process,
warm from the recorded run, runs the scenario once more and forks every
replay where its steps part from it, one child per core at a time
(``replay_branched``, ``harness.runners.branching``): a child is that
cloud exactly, checks' state and all, and runs only its own steps. A
replay whose injections all go before one step forks inside that step,
at the race point where the first of them fires, and skips the part of
the step before it too (proof of both:
tests/functional/test_explorer_branches.py). ``branch=False``
replays each from the start, in worker processes on all cores
(``harness.runners.workers``), each keeping one cloud for all its
replays (``reuse.CloudPool``: put back to its state before any step
between them). The explorer knows nothing about any particular bug:
what it finds, it finds from the points Nova passes and the checks that
fail.

At depth 1 the interleavings that run one host's periodic (or restart,
or request) go first, those that run both hosts' after (``one_host_first``):
a failure that both hosts' periodics at a point show, one of them alone
usually shows too, and those are half the plan. Of each kind, those
just after a save that changes what a host's periodic counts (an
instance's host, a migration's status: ``after_a_selecting_save``) go
first; each rank from a trunk run of its own (``depth_one_rank``).
Results come back in plan order: the order decides when an interleaving
runs, never whether or with what outcome.

An exploration is a plan (the recorded run, the interleavings), replays,
and a conclusion (grouping, shrinking): ``harness.runners.shards`` runs
shares of the replays on several machines (``--shard I/N``) and concludes
once over all of them (``--merge``).
"""

import contextlib
import dataclasses
import itertools
import os
import sys
import time

from harness.core import concurrency as concurrency_mod
from harness.core import errors
from harness.core import names
from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod
from harness.core import timeline as timeline_mod
from harness.runners import branching
from harness.runners import healed
from harness.runners import phases as phases_mod
from harness.runners import progress as progress_mod
from harness.runners import shrinking
from harness.runners import signatures
from harness.runners import workers as workers_mod

# The error a step fails with when its injection could not run there.
INAPPLICABLE = 'InjectionFailed'

PHASES = phases_mod.PHASES

ORDERS = (('source',), ('dest',), ('source', 'dest'), ('dest', 'source'))

# Why an interleaving was pruned (``Report.pruned``), in summary order.
# Cut short: its replay ran until its state was the trunk's (the scenario
# without injections) with none of its injections left, right after the
# step it injected into (the injection changed nothing) or later; its
# outcome is the trunk's. Not run: at depth 2, the state before its
# second injection's step, as its first injection alone left it, was
# the trunk's (its outcome is the second injection's alone) or another
# pair's that was run (its outcome is that pair's), or its first
# injection alone could not run there (not applicable), or the run of
# its first injection alone shows that its second could not run where
# it fires (not applicable: ``_second_unnamed``).
CHANGED_NOTHING = 'cut short: the injection changed nothing'
REJOINED = 'cut short: back in the trunk\'s state later'
FIRST_CHANGED_NOTHING = 'not run: the first injection changed nothing'
SAME_STATE = 'not run: a state already explored'
FIRST_INAPPLICABLE = 'not run: the first injection not applicable'
SECOND_INAPPLICABLE = 'not run: the second injection not applicable'
PRUNED = (CHANGED_NOTHING, REJOINED, FIRST_CHANGED_NOTHING, SAME_STATE,
          FIRST_INAPPLICABLE, SECOND_INAPPLICABLE)


def orders(roles):
    """The host orders tried at a point of a step whose kind has ``roles``.

    A move's source and destination each, and both in either order; the
    server's own host (``server_host``: a rebuild, an unshelve) alone.
    """
    found = list(ORDERS) if {'source', 'dest'} <= set(roles) else []
    return tuple(found + [(role,) for role in roles
                          if role not in ('source', 'dest')])


@dataclasses.dataclass(frozen=True)
class Point(object):
    """A race point passed during one step of the recorded run."""
    step: int          # index of the step (1-based) that passed it
    when: str
    point: str
    host: str
    server: str
    # The roles an injection here could run on (None: not noted).
    roles: tuple = dataclasses.field(default=None, compare=False)

    def __str__(self):
        return '%s %s on %s (step %d)' % (self.when, self.point,
                                          self.host or '-', self.step)


@dataclasses.dataclass(frozen=True)
class Injection(object):
    at: Point
    task: str
    hosts: tuple       # roles, in the order they run

    def steps(self):
        """Raw ``inject`` steps, one per host, to insert before the step."""
        steps = []
        for host in self.hosts:
            if self.task in names.HOST_INTERJECTIONS:
                # The API must refuse it while the move has the host.
                inject = {self.at.when: self.at.point,
                          'do': {self.task: host}, 'refused': True}
            elif self.task in names.COMPUTE_TASKS:
                inject = {self.at.when: self.at.point, self.task: host}
            else:
                inject = {self.at.when: self.at.point, 'run': self.task,
                          'on': host}
            if self.at.server:
                inject['server'] = self.at.server
            if self.at.host:
                inject['at_host'] = self.at.host
            steps.append({'inject': inject})
        return steps

    def __str__(self):
        return '%s on %s %s' % (self.task, ' then '.join(self.hosts),
                                self.at)


@dataclasses.dataclass
class Outcome(object):
    injections: tuple
    failed: bool
    step: int = None
    label: str = ''
    problems: tuple = ()
    shrunk_path: str = None
    shrunk_steps: int = None
    # The reproducer of the failure of the same kind shrunk before it.
    same_as: str = None
    # What the replay failed with (``signatures.Signature``), and how
    # many scenarios its shrinking replayed.
    signature: tuple = None
    shrink_replays: int = 0

    def __str__(self):
        where = ' + '.join(str(i) for i in self.injections) or 'no injection'
        if not self.failed:
            return 'ok: %s' % where
        return 'FAILED: %s\n  at step %d (%s):\n    %s' % (
            where, self.step, self.label,
            '\n    '.join(str(p) for p in self.problems))


@dataclasses.dataclass
class Report(object):
    scenario: str
    tried: int = 0
    failed: list = dataclasses.field(default_factory=list)
    shrunk: int = 0
    seconds: float = 0.0
    inapplicable: int = 0
    # Every replay's Outcome, in the order tried (for reports).
    outcomes: list = dataclasses.field(default_factory=list)
    # Seconds summed over the replays, by phase (``PHASES``), and how many
    # replays they cover.
    phases: dict = dataclasses.field(default_factory=dict)
    timed: int = 0
    # Replays forked inside the step their injections went before, at
    # the race point where the first fired (``replay_branched``).
    forked_in_step: int = 0
    # Replays forked from a run of their first injection alone
    # (``Explorer(nested=True)``).
    nested: int = 0
    # Scenarios replayed to shrink the failures.
    shrink_replays: int = 0
    # State caching (``Explorer(prune=True)``): replays run to their end,
    # and interleavings pruned, by reason (``PRUNED``); ``extra`` replays
    # run only to learn states (depth 2: injections alone, ``_alone``).
    run: int = 0
    pruned: dict = dataclasses.field(default_factory=dict)
    extra: int = 0
    # Interleavings whose replay broke only an expectation of a tracker's
    # lag that an injected periodic had caught up (``healed``): passed.
    healed: int = 0

    def add_phases(self, phases):
        for name, seconds in phases.items():
            self.phases[name] = self.phases.get(name, 0.0) + seconds
        self.timed += 1

    def per_replay(self):
        """Where a replay's time went, on average, as a line of text."""
        if not self.timed:
            return 'no replay timed'
        return 'per replay: %s (mean of %d)' % (', '.join(
            '%s %.2f s' % (name, self.phases.get(name, 0.0) / self.timed)
            for name in PHASES), self.timed)

    def summary(self):
        return ('%s: %d interleavings tried, %d failed, %d shrunk '
                '(%d not applicable), in %.1f s%s%s'
                % (self.scenario, self.tried, len(self.failed), self.shrunk,
                   self.inapplicable, self.seconds, self.pruning(),
                   self.healing()))

    def healing(self):
        """How many replays a healed lag did not fail, as a line."""
        if not self.healed:
            return ''
        return ('\n  %d passed once a tracker lag the scenario expects, '
                'caught up early by an injected periodic, was excused '
                '(harness.runners.healed)' % self.healed)

    def pruning(self):
        """What state caching saved, as the end of the summary line."""
        if not self.pruned and not self.run:
            return ''
        why = ', '.join('%d %s' % (self.pruned[reason], reason)
                        for reason in PRUNED if self.pruned.get(reason))
        return ('\n  %d replays run to the end%s, %d pruned%s'
                % (self.run, ' (%d of them single injections, for their '
                   'states)' % self.extra if self.extra else '',
                   sum(self.pruned.values()), ': ' + why if why else ''))


def comparable(report):
    """What two explorations of a scenario must agree on to be equal.

    Every interleaving's verdict (its failed step, the step's label and
    the failure's signature: ``signatures``), how many were not
    applicable, and each reproducer shrunk, as its file reads (but the
    directory it was written to). Not the
    problems' text: a pruned interleaving's are those of the replay
    whose outcome it takes, which may name other uuids.
    """
    shrunk = []
    for outcome in report.failed:
        if outcome.shrunk_path:
            with open(outcome.shrunk_path) as source:
                # Its replay line names it where it was written.
                shrunk.append(source.read().replace(
                    outcome.shrunk_path,
                    os.path.basename(outcome.shrunk_path)))
    return ([(tuple(str(i) for i in outcome.injections), outcome.failed,
              outcome.step, outcome.label, outcome.signature)
             for outcome in report.outcomes],
            report.inapplicable, shrunk)


@dataclasses.dataclass
class Plan(object):
    """What an exploration of ``scenario`` replays.

    ``baseline`` is the recorded run's result (``replay``); when it
    failed, nothing is replayed. ``candidates`` counts the interleavings
    (after ``limit``), ``runnable`` those replayed, in candidate order.
    """
    scenario: object
    baseline: dict
    candidates: int = 0
    runnable: list = dataclasses.field(default_factory=list)


class Explorer(object):
    """Explore one scenario; see the module docstring.

    :param tasks: periodic tasks to inject; ``update_available_resource``
        is always among them. ``restart`` (``names.COMPUTE_TASKS``)
        restarts a compute at each point too; ``delete_service`` deletes
        its service there, which the API must refuse.
    :param depth: injections per replay (1 or 2).
    :param reintroduce: a bug ID whose reintroduction fixture is active in
        every run (to show the explorer finds it).
    :param workers: processes for replays (default: the machine's cores).
    :param out_dir: where shrunk scenarios are written.
    :param limit: at most this many replays (None: all).
    :param invariants: check invariants after every step (default on).
    :param kept_cloud: replay on a cloud kept between replays, one per
        process (default); False stands a new cloud up for every replay.
    :param branch: run the scenario once per process and fork each replay
        from it where its steps part from the scenario's (default;
        ``replay_branched``), on a kept cloud; False replays each from
        the start.
    :param status: a stream to show the replays' progress on (done,
        failed, time left; ``harness.runners.progress``), if any.
    :param prune: state caching (off by default: see
        doc/source/user/explore.rst; branched replays only): a
        replay whose cloud is, at a step's end, as one already explored
        with the same steps left is not run further; its outcome is that
        one's (``PRUNED``, ``harness.cloud.digest``).
    :param nested: nested branching (off by default; depth 2, branched;
        with ``prune``, of the pairs it runs): the pairs whose first
        injection is the same are forked from a run of their first
        injection alone, where their second fires (``replay_branched``),
        not each from the scenario's run.
    :param replay_timeout: seconds a replay, forked or in a worker
        process, may run before it is taken for hung, its stacks kept in
        ``out_dir`` and the exploration ended (``branching.ChildHung``,
        ``workers.WorkerHung``; default ``branching.REPLAY_TIMEOUT``).
    """

    def __init__(self, tasks=(), depth=1, reintroduce=None, workers=None,
                 out_dir=None, limit=None, invariants=True, progress=None,
                 kept_cloud=True, status=None, branch=True, prune=False,
                 nested=False, replay_timeout=None):
        tasks = ['update_available_resource'] + [
            t for t in tasks if t != 'update_available_resource']
        for task in tasks:
            if task not in names.PERIODICS + names.COMPUTE_TASKS:
                raise errors.ScenarioError(
                    'unknown periodic task %r for --tasks; known: %s'
                    % (task, ', '.join(names.PERIODICS
                                       + names.COMPUTE_TASKS)))
        if depth not in (1, 2):
            raise errors.ScenarioError('--depth is 1 or 2, not %r' % depth)
        try:
            self.replay_timeout = branching.replay_timeout(replay_timeout)
        except ValueError as exc:
            raise errors.ScenarioError('--replay-timeout: %s' % exc)
        self.tasks = tuple(tasks)
        self.depth = depth
        self.reintroduce = reintroduce
        self.workers = workers or os.cpu_count() or 1
        self.out_dir = out_dir or os.path.join(os.getcwd(), 'explored')
        self.limit = limit
        self.invariants = invariants
        self.kept_cloud = kept_cloud
        self.branch = branch
        self.prune = prune
        self.nested = nested
        # Called with each replay's result as it is known, in this
        # process (``benchmarks/find_speed.py`` times the first failure).
        self.seen = None
        # When an interleaving runs at depth 1 (``_ranks``); find_speed
        # gives another order to compare.
        self.rank = depth_one_rank
        # What the pruned replays of the last replay_plan came to, by
        # interleaving (for conclude): {injections: reason}, and the
        # replays run to learn states.
        self._pruned = {}
        self._extra = 0
        self._pool = None   # explore's, while it runs
        self.say = progress or (lambda line: None)
        self.status = status

    # -- exploring ---------------------------------------------------------

    def explore(self, scenario):
        with self.kept():
            return self._explore(scenario)

    @contextlib.contextmanager
    def kept(self):
        """Replays in this process share one cloud while this is open."""
        from harness.cloud import reuse
        with reuse.CloudPool() as pool:
            self._pool = pool if self.kept_cloud else None
            try:
                yield self
            finally:
                self._pool = None

    def _explore(self, scenario):
        started = time.monotonic()
        plan = self.plan(scenario)
        results = self.replay_plan(plan, range(len(plan.runnable)))
        report = self.conclude(plan, results)
        report.seconds = time.monotonic() - started
        return report

    # The three parts of an exploration; ``harness.runners.shards`` runs
    # the first two in each shard and the last once, over their results.

    def plan(self, scenario):
        """Record the baseline run; the interleavings to replay (``Plan``)."""
        from harness.cloud import race
        with race.noting_roles():
            baseline = replay(self._job(scenario, ()), record=True,
                              pool=self._pool)
        plan = Plan(scenario, baseline)
        if baseline['failed']:
            return plan
        points = [Point(*p) for p in baseline['points']]
        candidates = list(self.candidates(points, {
            step.index: step.unit.roles for step in scenario.steps}))
        if self.limit is not None:
            candidates = candidates[:self.limit]
        self.say('%s: %d race points in move steps, %d interleavings'
                 % (scenario.name, len(points), len(candidates)))
        plan.candidates = len(candidates)
        plan.runnable = runnable(candidates)
        return plan

    def replay_plan(self, plan, indexes):
        """Replay the plan's runnable interleavings at ``indexes``.

        Their results (``replay``'s), in the order of ``indexes``,
        whatever order they ran in (``depth_one_rank``).
        """
        chosen = [plan.runnable[index] for index in indexes]
        if self.prune and self.branch and self.kept_cloud and hasattr(
                os, 'fork'):
            return self._replay_pruned(plan, chosen)
        return self._replay_jobs([
            self._nesting(plan.scenario, injections)
            for injections in chosen], self._ranks(chosen))

    def _ranks(self, chosen):
        """When each of the interleavings ``chosen`` runs (``_replay_jobs``).

        At depth 1, ``depth_one_rank``; at depth 2 in plan order: a pair
        nests with the others of its first injection (``_nests``), which
        ranks would split.
        """
        if self.depth != 1:
            return None
        return [self.rank(injections) for injections in chosen]

    def conclude(self, plan, results):
        """The report of a replayed plan: failures grouped, each shrunk.

        ``results`` are those of all the plan's runnable interleavings, in
        order; one failure of each kind is shrunk. ``seconds`` is left to
        the caller.
        """
        report = Report(plan.scenario.name)
        report.tried += 1
        if plan.baseline['failed']:
            outcome = self._outcome((), plan.baseline)
            report.failed.append(outcome)
            report.outcomes.append(outcome)
            self.say(str(outcome))
            return report
        report.inapplicable += plan.candidates - len(plan.runnable)
        report.run += self._extra
        report.extra = self._extra
        for injections, result in zip(plan.runnable, results):
            if result.get('pruned'):
                reason = result['pruned']
                report.pruned[reason] = report.pruned.get(reason, 0) + 1
            else:
                report.run += 1
            report.add_phases(result['phases'])
            if result.get('forked_at'):
                report.forked_in_step += 1
            if result.get('nested'):
                report.nested += 1
            if result['inapplicable']:
                report.inapplicable += 1
                continue
            report.tried += 1
            if result.get('healed') and not result['failed']:
                report.healed += 1
            outcome = self._outcome(injections, result)
            report.outcomes.append(outcome)
            if outcome.failed:
                report.failed.append(outcome)
        shrunk_kinds = {}
        for number, outcome in enumerate(report.failed, 1):
            # Grouped by record: the step and what its first problem is.
            kind = (outcome.label, outcome.problems[0].kind)
            if kind not in shrunk_kinds:
                # One reproducer per kind of failure: the others differ
                # only in the injection that led there.
                self._shrink(plan.scenario, outcome, number)
                report.shrunk += 1
                report.shrink_replays += outcome.shrink_replays
                shrunk_kinds[kind] = outcome
                self.say('%s\n  reproducer (%d steps): %s' % (
                    outcome, outcome.shrunk_steps, outcome.shrunk_path))
            else:
                outcome.same_as = shrunk_kinds[kind].shrunk_path
                self.say('%s\n  same failure as: %s' % (
                    outcome, outcome.same_as))
        return report

    def candidates(self, points, roles=None):
        """The injections to try at ``points``.

        ``roles`` maps a step's index to its kind's roles (source and
        destination when not given).
        """
        roles = roles or {}
        # A restart ends the work at the point: one host restarts there,
        # the other's would never be reached. A service delete: one host
        # each, as asked.
        singles = [Injection(point, task, hosts)
                   for point in points for task in self.tasks
                   for hosts in orders(roles.get(point.step,
                                                 ('source', 'dest')))
                   if task not in names.COMPUTE_TASKS or len(hosts) == 1]
        if self.depth == 1:
            return [(single,) for single in singles]
        return [(a, b) for a, b in itertools.combinations(singles, 2)
                if a.at != b.at]

    def _job(self, scenario, injections, reference=None, record=False):
        """A replay of ``scenario`` with ``injections``, as a job.

        With the trunk's digests (``reference``), its replay ends where
        its state is the trunk's with no injection left (``pruning``);
        with ``record`` it keeps its digests after every step from its
        first injection's on, and ends only once back in the trunk's.
        """
        steps = injected_steps(scenario, injections)
        job = self._plain_job(scenario, injections, steps)
        if reference is not None and injections:
            job['pruning'] = {
                'reference': reference, 'record': record,
                'boundaries': _boundaries(scenario, injections),
                'first': min(i.at.step for i in injections)}
        return job

    def _nesting(self, scenario, injections, reference=None):
        """``_job``; with ``nested``, a pair's carries its ``single``.

        The document (and ``steps_at``) of the replay of its first
        injection alone: the pair's is the single's with the second's
        inject steps put in, after the single's own or (both before one
        step) just before them (``replay_branched``, ``_nests``).
        """
        job = self._job(scenario, injections, reference)
        if (self.nested and len(injections) == 2
                and injections[0].at.step <= injections[1].at.step):
            single = self._job(scenario, injections[:1])
            job['single'] = {'document': single['document'],
                             'steps_at': single['steps_at']}
        return job

    def _plain_job(self, scenario, injections, steps):
        return {'document': scenario.document(steps),
                'where': scenario.path,
                'reintroduce': self.reintroduce,
                'invariants': self.invariants,
                # The steps every replay of this step's points runs alike.
                'prefix': min([i.at.step - 1 for i in injections]
                              or [len(steps)]),
                # The scenario they come from: the trunk they branch from.
                'base': scenario.document(injected_steps(scenario, ())),
                # Where its declared breaks happen (``_declared``).
                'steps_at': _steps_at(scenario, injections)}

    # -- state caching -----------------------------------------------------

    def _replay_pruned(self, plan, chosen):
        """``replay_plan`` of the interleavings ``chosen``, state cached.

        Every replay ends at the first step's end where its cloud's
        digest is the trunk's (``reference``) and none of its injections
        is left: its future is the trunk's, which passed. At depth 2 each
        pair's first injection is first replayed alone (``_alone``),
        recording its states after every step and the points it passes
        from its own step on, with the roles named there
        (``race.noting_roles``): a pair whose first injection alone left
        the state before its second one's step as the trunk's has the
        second's outcome alone, pairs that find the same state there
        with the same second injection have one outcome (one is run),
        and a pair whose second injection could not run where it fires
        in its first one's run is not applicable (``_second_unnamed``).
        """
        scenario = plan.scenario
        self._extra = 0
        if not chosen:
            return []
        reference = self._reference(scenario)
        results = [None] * len(chosen)
        alone = {}
        if self.depth == 2:
            alone = self._alone(scenario, chosen, reference)
        groups, copies, to_run = {}, {}, []
        for number, injections in enumerate(chosen):
            found = self._known(scenario, injections, alone, reference,
                                groups, number)
            if found is None:
                to_run.append(number)
            elif isinstance(found, int):
                copies[number] = found
            else:
                results[number] = found
        ran = self._replay_jobs([
            self._nesting(scenario, chosen[number], reference)
            for number in to_run],
            self._ranks([chosen[number] for number in to_run]))
        for number, result in zip(to_run, ran):
            results[number] = result
        for number, same in copies.items():
            results[number] = dict(_moved(
                scenario, results[same], chosen[same], chosen[number]),
                pruned=SAME_STATE, phases={})
        if self.seen is not None:
            for number, result in enumerate(results):
                if number not in to_run:
                    self.seen(result)
        return results

    def _alone(self, scenario, chosen, reference):
        """The depth-2 pairs' injections replayed alone, recording.

        ``{injection: result}``: every pair's first injection; a second
        only where its pair takes its outcome (its first alone left the
        state before the second's step as the trunk's:
        ``_first_changed_nothing``), replayed once the firsts are. A
        shard of the nightly holds a few first injections' pairs
        (``shards.Split``) but nearly every injection as a second:
        replaying all of them alone would cost each shard most of the
        scenario's singles again.
        """
        alone = {}
        self._record_alone(scenario, list(dict.fromkeys(
            pair[0] for pair in chosen)), reference, alone)
        self._record_alone(scenario, list(dict.fromkeys(
            pair[1] for pair in chosen if len(pair) == 2
            and pair[1] not in alone
            and _first_changed_nothing(scenario, pair, alone, reference))),
            reference, alone)
        return alone

    def _record_alone(self, scenario, singles, reference, alone):
        """Replay each of ``singles`` alone, recording, into ``alone``."""
        from harness.cloud import race
        if not singles:
            return
        with race.noting_roles():
            ran = self._replay_jobs([
                self._job(scenario, (single,), reference, record=True)
                for single in singles])
        alone.update(zip(singles, ran))
        self._extra += len(ran)

    def _known(self, scenario, pair, alone, reference, groups, number):
        """A depth-2 pair's result if known without running it.

        The result, or the number of the pair run whose result is its
        own (the same state before the same second injection), or None
        (to run; it may stand for others, ``groups``). Of two points of
        one step, only whether the second injection can run where it
        fires is known (``_second_unnamed``): no digest is taken inside
        a step.
        """
        if len(pair) != 2 or pair[0].at.step > pair[1].at.step:
            return None
        first, second = pair
        result = alone.get(first)
        if result is None:
            return None
        if result['inapplicable']:
            return dict(result, pruned=FIRST_INAPPLICABLE, phases={})
        if second in alone and _first_changed_nothing(scenario, pair, alone,
                                                      reference):
            return dict(_moved(scenario, alone[second], (second,), pair),
                        pruned=FIRST_CHANGED_NOTHING, phases={})
        if _second_unnamed(scenario, pair, result):
            # What its replay would end with (``_result``).
            return dict(_ended(phases={}), inapplicable=True,
                        pruned=SECOND_INAPPLICABLE)
        state = _state_before_second(scenario, pair, result, reference)
        if state is None:
            return None
        key = (second.at.step - 1, state, second)
        if key in groups:
            return groups[key]
        groups[key] = number
        return None

    def _reference(self, scenario):
        """The trunk's digests after each of its steps (index: steps run).

        From a run of its own in this process, warm as the trunks the
        replays fork from are (a first run in a process does more: it
        fills Nova's caches).
        """
        job = self._job(scenario, ())
        phases = phases_mod.Phases(len(job['document']['steps']), [])
        recorder = _Recorder(phases)
        _run_job(job, self._pool, phases=phases, observers=[recorder])
        return [None] + recorder.digests

    def _replay_jobs(self, jobs, ranks=None):
        """``_map`` ``jobs``, their progress on ``status`` if given.

        With ``ranks`` (one per job), the jobs of the lowest rank first,
        then the next (each rank a ``_map`` of its own: branched, a trunk
        run of its own); the results in job order all the same.
        """
        counter = None
        if self.status is not None and jobs:
            counter = progress_mod.Progress(len(jobs), self.status,
                                            'replays')
        ranks = ranks or [0] * len(jobs)
        results = [None] * len(jobs)
        for rank in sorted(set(ranks)):
            numbers = [number for number, its in enumerate(ranks)
                       if its == rank]
            for number, result in zip(numbers, self._map(
                    [jobs[number] for number in numbers],
                    counter and counter.advance)):
                results[number] = result
        if counter is not None:
            counter.finish()
        return results

    def _map(self, jobs, done=None):
        """Replay ``jobs``; ``done(failed=...)`` as each one ends."""
        done = done or (lambda failed: None)
        if self.branch and self.kept_cloud and branchable(jobs):
            # This process ran the plan's recorded run: warm, and its
            # cloud the jobs' shape. Its children take the cores.
            return replay_branched(jobs, pool=self._pool, done=done,
                                   concurrency=self.workers,
                                   seen=self.seen,
                                   replay_timeout=self.replay_timeout,
                                   dump_dir=self.out_dir)
        if self.workers <= 1 or len(jobs) <= 1:
            results = []
            for job in jobs:
                results.append(replay(job, pool=self._pool))
                if self.seen is not None:
                    self.seen(results[-1])
                done(failed=results[-1]['failed'])
            return results
        # This process keeps its cloud meanwhile, for the shrinking.
        return run_in_workers(jobs, min(self.workers, len(jobs)),
                              kept_cloud=self.kept_cloud, done=done,
                              replay_timeout=self.replay_timeout,
                              dump_dir=self.out_dir)

    def _outcome(self, injections, result):
        return Outcome(tuple(injections), result['failed'], result['step'],
                       result['label'], tuple(result['problems']),
                       signature=result.get('signature'))

    # -- shrinking ---------------------------------------------------------

    def _shrink(self, scenario, outcome, number):
        """Shrink ``outcome``'s failure to a reproducer file.

        ``harness.runners.shrinking``: branched as the replays are
        (``_map``), a round of removals forked from one run.
        """
        # The shrunk documents lose steps: a break they declare is
        # expected at any step of theirs (and of the reproducer), but the
        # one this failure is, if it is one (found at another step).
        scenario = scenario_mod.parse(
            _at_any_step(scenario.document(), outcome.problems[0]),
            scenario.path, scenario.path)
        shrinker = shrinking.Shrinker(
            scenario, lambda document: replay(
                self._document_job(scenario, document), pool=self._pool),
            self._replay_round(scenario)
            if self.branch and self._pool is not None else None)
        document = shrinker.shrink(
            injected_steps(scenario, outcome.injections),
            outcome.signature, outcome.step)
        name = '%s (explored %d)' % (scenario.name, number)
        shrunk = scenario_mod.parse(dict(document, name=name),
                                    scenario.path, scenario.path)
        os.makedirs(self.out_dir, exist_ok=True)
        slug = scenario.id.split('__', 1)[-1][:60]
        path = os.path.join(self.out_dir, '%s_explored_%d.yaml'
                            % (slug, number))
        with open(path, 'w') as out:
            out.write('# Found by harness explore: %s\n' % ' + '.join(
                str(i) for i in outcome.injections))
            out.write('# It failed: %s\n' % outcome.problems[0])
            out.write('# Replay: harness run %s%s\n' % (
                '--reintroduce %s ' % self.reintroduce
                if self.reintroduce else '', path))
            out.write(shrunk.dump())
        outcome.shrunk_path = path
        outcome.shrunk_steps = len(document['steps'])
        outcome.shrink_replays = shrinker.replays

    def _document_job(self, scenario, document):
        return {'document': document, 'where': scenario.path,
                'reintroduce': self.reintroduce,
                'invariants': self.invariants}

    def _replay_round(self, scenario):
        """Documents replayed as branches of one run of ``base``."""
        def replay_round(documents, base):
            jobs = [dict(self._document_job(scenario, document), base=base)
                    for document in documents]
            if not branchable(jobs):
                return None
            return replay_branched(jobs, pool=self._pool,
                                   concurrency=self.workers,
                                   replay_timeout=self.replay_timeout,
                                   dump_dir=self.out_dir)
        return replay_round


def injected_steps(scenario, injections):
    """The raw steps of ``scenario`` with ``injections`` put in."""
    steps = [dict(step.raw) for step in scenario.steps]
    # Insert from the last step back, so earlier indexes stay right.
    for injection in sorted(injections, key=lambda i: -i.at.step):
        position = injection.at.step - 1
        steps[position:position] = injection.steps()
    return steps


def one_host_first(injections):
    """An interleaving's rank in the order replays run (``_replay_jobs``).

    0 when each of its injections runs on one host, 1 when one runs on
    both (``ORDERS``, either way round): the singles first. An injection
    on both hosts runs each one's alone too, one after the other, so a
    failure it shows is usually one of those singles' as well, and with
    the singles half the plan it comes about twice as early; one that
    needs both comes half a plan later.
    """
    return int(any(len(injection.hosts) > 1 for injection in injections))


# The points just after a save of what an injected periodic selects its
# accounting by: the resource tracker's update_available_resource counts
# the instances whose host (and node) is its own
# (``InstanceList.get_by_host_and_node``) and the migrations to or from
# it not yet in a final status
# (``MigrationList.get_in_progress_and_error_by_host_and_node``). Right
# after ``instance.host`` or ``migration.status=<status>`` (``race``'s
# save points) what each host's periodic counts has just changed; at
# the other points it is what it was at the save before.
SELECTING_SAVES = ('instance.host', 'migration.status=')


def after_a_selecting_save(injections):
    """0 when each injection goes just after a ``SELECTING_SAVES`` save.

    1 otherwise: those go later (``depth_one_rank``).
    """
    return int(not all(
        injection.at.when == 'after'
        and injection.at.point.startswith(SELECTING_SAVES)
        for injection in injections))


def depth_one_rank(injections):
    """When an interleaving runs at depth 1 (``Explorer._ranks``).

    One host's injections first (``one_host_first``), and of each kind
    those just after a save that changes what a periodic counts first
    (``after_a_selecting_save``): four ranks, four trunk runs. Each of
    the five bugs ``benchmarks/find_speed.py`` finds is found by a single
    just after such a save.
    """
    return 2 * one_host_first(injections) + after_a_selecting_save(
        injections)


def runnable(candidates):
    """The candidates worth replaying, in order.

    An injection on a role no migration named at its point (none in
    flight yet, or no destination chosen) cannot run, and the replay
    would end as not applicable. Only the first injection's point (a
    pair's points are in the order the run passes them: ``candidates``)
    is where the recorded run was: the second may find another state.
    """
    return [c for c in candidates if _roles_named(c[:1])]


def _roles_named(injections):
    return all(injection.at.roles is None or host in injection.at.roles
               for injection in injections for host in injection.hosts)


def replay(job, record=False, pool=None):
    """Run one scenario document; return a plain (picklable) result.

    Runs in a worker process as well as in the explorer's own; on
    ``pool``'s cloud if given (a ``reuse.CloudPool``).
    """
    scenario, timeline, phases = _run_job(job, pool)
    return _result(scenario, timeline, phases, record)


def _run_job(job, pool, branches=None, phases=None, observers=()):
    """Run one job's scenario; ``branches`` its course, if forking."""
    from harness import bugs
    from harness.runners import runner
    scenario = _parse(job)
    fixtures = []
    if job['reintroduce']:
        fixtures.append(bugs.get(job['reintroduce']).reintroduce())
    checks = []
    if job['invariants']:
        from harness.core import invariants
        from harness.core import known_bugs
        # A known open bug's or finding's declared breaks are expected,
        # as ``harness run`` expects them: not failures, here or in any
        # replay (``_declared`` puts them at the replay's own steps).
        checks.append(known_bugs.KnownBreaks(invariants.Checker()))
    phases = phases or phases_mod.Phases(job.get('prefix', 0), checks)
    phases.checkers = checks
    timeline = runner.run(scenario, keep_going=True, fixtures=fixtures,
                          checks=checks, pool=pool,
                          observers=[phases] + list(observers),
                          course=branches)
    return scenario, timeline, phases


def _parse(job):
    return _declared(
        scenario_mod.parse(job['document'], job['where'], job['where']),
        job.get('steps_at'))


# The declarations of breaks Nova is known to make (``known_bugs``).
DECLARATIONS = ('known_open_bug', 'known_finding')


def _steps_at(scenario, injections):
    """Where each of ``scenario``'s steps is in its replay with ``injections``.

    ``[index of step 1, index of step 2, ...]`` (1-based), or None when
    that is where it is (no injection).
    """
    if not injections:
        return None
    labels = _labels(scenario, injections)
    return [labels.index(('step', step)) + 1
            for step in range(1, len(scenario.steps) + 1)]


def _declared(scenario, steps_at):
    """``scenario`` with its declared breaks at the steps of a replay.

    A break declared at the scenario's step ``s`` happens at step
    ``steps_at[s - 1]`` of a replay that put injections in before it
    (``_steps_at``); as declared with None.
    """
    if steps_at is None:
        return scenario
    for key in DECLARATIONS:
        declared = getattr(scenario, key, None)
        if declared is None:
            continue
        setattr(scenario, key, dataclasses.replace(declared, breaks=tuple(
            dataclasses.replace(one, step=one.step and steps_at[one.step - 1])
            for one in declared.breaks)))
    return scenario


def _at_any_step(document, failure):
    """``document`` with its declared breaks expected at any step.

    Those ``failure`` (a problem) is one of are no longer declared: it
    must still fail the document. A declaration left with no break goes.
    """
    document = dict(document)
    for key in DECLARATIONS:
        if key not in document:
            continue
        breaks = [
            {name: value for name, value in one.items() if name != 'step'}
            for one in document[key]['breaks']
            if not scenario_mod.Break(one['check'], one['subject']).matches(
                failure, None)]
        if breaks:
            document[key] = dict(document[key], breaks=breaks)
        else:
            del document[key]
    return document


def _ended(phases):
    """A result of a replay that passed (``_result``), its ``phases``."""
    return {'failed': False, 'step': None, 'label': '', 'problems': [],
            'points': [], 'inapplicable': False, 'phases': phases}


def _result(scenario, timeline, phases, record):
    result = _ended(phases.seconds())
    # A lag of a tracker that an injected periodic caught up early is not
    # a finding (``healed``): taken out before anything reads failures.
    result['healed'] = len(healed.excuse(scenario, timeline))
    for entry in timeline.failed:
        if any(problem.check == problems_mod.STEP_FAILED
               and problem.actual == INAPPLICABLE
               for problem in entry.problems):
            # The injection could not run there (no migration in flight to
            # name a source or destination): not a finding.
            result['inapplicable'] = True
            return result
    if timeline.failed:
        first = timeline.failed[0]
        result.update(failed=True, step=first.index, label=first.label,
                      problems=list(first.problems),
                      signature=signatures.of(scenario, timeline))
    if record:
        result['points'] = recorded_points(scenario, timeline)
        # What each step left, for comparing runs (timeline.comparable).
        result['timeline'] = [timeline_mod.comparable(entry)
                              for entry in timeline]
    return result


def _labels(scenario, injections):
    """What each step of ``scenario`` with ``injections`` is, in order.

    ``('step', s)``: the scenario's step ``s``; ``('inject', s, n)``: the
    ``n``-th inject step put in before it. The same labels name the same
    steps in two replays that put the same injections before ``s``.
    """
    before = {}
    for injection in injections:
        before[injection.at.step] = (before.get(injection.at.step, 0)
                                     + len(injection.steps()))
    labels = []
    for step in range(1, len(scenario.steps) + 1):
        labels.extend(('inject', step, n) for n in range(before.get(step, 0)))
        labels.append(('step', step))
    return labels


def _original_step(scenario, injections, index):
    """The scenario's step that a replay's step ``index`` is or arms for."""
    return _labels(scenario, injections)[index - 1][1]


def _moved(scenario, result, source, target):
    """``result`` of the replay with ``source`` as the one with ``target``.

    The same but for its failed step's index.
    Sound where the two have put the same injections in before every
    step from the failed one's on (``_labels``).
    """
    result = dict(result)
    if result.get('step') is not None:
        label = _labels(scenario, source)[result['step'] - 1]
        result['step'] = _labels(scenario, target).index(label) + 1
    return result


def _boundaries(scenario, injections):
    """``{steps run: (scenario steps run, injections left)}``.

    The points between steps of the replay with ``injections`` where its
    state may be compared with the trunk's: after each of the scenario's
    steps from the first injected into, but the last.
    """
    labels = _labels(scenario, injections)
    first = min(injection.at.step for injection in injections)
    found = {}
    for done in range(1, len(labels)):
        kind, step = labels[done - 1][:2]
        if kind == 'step' and step >= first:
            found[done] = (step, sum(1 for label in labels[done:]
                                     if label[0] == 'inject'))
    return found


def _state_before_second(scenario, pair, single, reference):
    """The digest of the state before the pair's second injection's step.

    As the replay of its first injection alone (``single``) left it; None
    if unknown: both in one step, no digest there, or a step failed by
    then.
    """
    first, second = pair
    if first.at.step >= second.at.step:
        return None
    before = second.at.step - 1
    if single['failed'] and _original_step(
            scenario, (first,), single['step']) <= before:
        return None
    return _state_at(single, before, reference)


def _first_changed_nothing(scenario, pair, alone, reference):
    """Whether the pair's first injection changed nothing by its second.

    Its replay alone (in ``alone``) left the state before the second's
    step as the trunk's (``reference``).
    """
    single = alone.get(pair[0])
    if single is None or single['inapplicable']:
        return False
    state = _state_before_second(scenario, pair, single, reference)
    return state is not None and state == reference[pair[1].at.step - 1]


def _state_at(result, step, reference):
    """The digest of a replay's state after the scenario's ``step``.

    From what it recorded, or the trunk's once it was back in it; None if
    unknown.
    """
    rejoined = result.get('rejoined')
    if rejoined is not None and step >= rejoined:
        return reference[step]
    return (result.get('digests') or {}).get(step)


def _check_state(checkers):
    """What the run's checks keep that decides their future verdicts.

    All they keep between steps but their timings and what they count.
    """
    return [('check %d' % number, {
        name: value for name, value in vars(checker).items()
        if name not in ('timings', 'calls', '_timeline')})
        for number, checker in enumerate(_unwrapped(checkers))]


def _unwrapped(checkers):
    """The checks, each ``KnownBreaks`` as the checker it wraps.

    What it saw (the declared breaks so far) takes no part: a replay
    back in the trunk's state has the trunk's future, breaks and all.
    """
    return [getattr(checker, 'checker', checker) for checker in checkers]


class _Recorder(object):
    """Observer: the cloud's digest after every step of a run."""

    def __init__(self, phases):
        self.phases = phases
        self.cloud = None
        self.digests = []

    def run_started(self, scenario, cloud):
        self.cloud = cloud

    def step_done(self, step, entry):
        from harness.cloud import digest
        self.digests.append(digest.of(
            self.cloud, _check_state(self.phases.checkers)))


class _Watch(object):
    """Observer: whether any step of the run failed so far."""

    failed = False

    def step_done(self, step, entry):
        if entry.problems:
            self.failed = True


def _stopper(jobs, phases, watch, recorded, passed):
    """``Branches``' ``stop``: end a replay whose future is known.

    Before each of its steps after the scenario's steps it injected into
    (``_boundaries``), if no step failed yet: its digest, kept (for
    ``record``), and if it is the trunk's there with no injection left,
    its result: that of the trunk, which passed (with the points it
    passed, for ``record``: ``_passages``).
    """
    def stop(number, done, cloud):
        if not isinstance(number, int):
            return None
        pruning = jobs[number].get('pruning')
        if not pruning or watch.failed:
            return None
        where = pruning['boundaries'].get(done)
        if where is None:
            return None
        step, left = where
        if left and not pruning['record']:
            return None
        from harness.cloud import digest
        state = digest.of(cloud, _check_state(phases.checkers))
        if pruning['record']:
            recorded.setdefault(number, {})[step] = state
        if left or state is None or state != pruning['reference'][step]:
            return None
        return dict(_ended(phases.seconds()), forked_at=None,
                    digests=recorded.get(number, {}), rejoined=step,
                    pruned=(CHANGED_NOTHING if step == pruning['first']
                            else REJOINED),
                    **_passages(jobs[number], passed))
    return stop


@dataclasses.dataclass(frozen=True)
class Passed(object):
    """The first passage of a step of a run through a point, as it read.

    ``step``: the run's step (1-based) that passed it; ``when``,
    ``point``, ``host``, ``server`` as ``race.Passage`` has them (which
    ``race.matches`` reads); ``roles``: those named there, when noted
    (``race.noting_roles``), else None.
    """
    step: int
    when: str
    point: str
    host: str
    server: str
    roles: tuple = None


class _Passing(object):
    """Observer: each step's first passage through each point (``Passed``).

    One per ``(step, when, point, host, server)``, in the order passed:
    the first of them that an injection's point matches is the first
    passage that fires it in that step. Those of a later write to Nova's
    records at the same point (another ``version``) come later and match
    what the first matches.
    """

    def __init__(self):
        self.first = []
        self._seen = set()

    def step_done(self, step, entry):
        for passage in entry.passages:
            key = (entry.index, passage.when, passage.point, passage.host,
                   passage.server)
            if key not in self._seen:
                self._seen.add(key)
                self.first.append(Passed(*key, roles=passage.roles))


def _fires(injection, passed):
    """Whether ``injection`` (if still armed) fires at ``passed``."""
    from harness.cloud import race
    at = injection.at
    # Its inject steps narrow it to the host and server only if named.
    return race.matches(passed, at.point, at.when, at.host or None,
                        at.server or None)


def _passages(job, passing):
    """What a run of ``job`` keeps of the points it passed (``Passed``).

    A run of one injection alone that records its states (depth 2's
    ``pruning`` with ``record``) keeps those of its steps from its
    injection's on, for ``_second_unnamed``; others nothing.
    """
    if not (job.get('pruning') or {}).get('record'):
        return {}
    return {'passages': tuple(passed for passed in passing.first
                              if passed.step > job['prefix'])}


def _second_unnamed(scenario, pair, single):
    """Whether the pair's second injection is known not to run where it fires.

    ``single``: the result of the replay of its first injection alone
    (its ``passages``). Up to the moment its second injection fires, the
    pair's replay is that one, step for step (replays are deterministic,
    and both arm the same injections before every step up to the
    second's). The second fires at the first passage in its step that it
    matches (``race.matches``): if the single passed none there, or
    noted no roles, or failed at or before that step, or its first
    injection could fire at that same passage too (if still armed), it
    is not known (False). Otherwise it is known not to run there if any
    of its hosts is a role no migration named at that passage
    (``_roles_named``): it fails its step with ``InjectionFailed``.
    """
    first, second = pair
    passages = single.get('passages')
    if not passages:
        return False
    own = _labels(scenario, (first,)).index(('step', second.at.step)) + 1
    if single['failed'] and single['step'] <= own:
        return False
    found = [passed for passed in passages
             if passed.step == own and _fires(second, passed)]
    if not found or found[0].roles is None or _fires(first, found[0]):
        return False
    found = found[0]
    return not _roles_named([dataclasses.replace(
        second, at=dataclasses.replace(second.at, roles=found.roles))])


def branchable(jobs):
    """Whether ``jobs`` can be replayed as branches of one trunk run.

    They can when each carries the scenario they were made from
    (``base``, the same for all, with the same bug put back and checks)
    and shares its first steps with it, and the system can fork.
    """
    if not jobs or not hasattr(os, 'fork'):
        return False
    first = jobs[0]
    return all(
        job.get('base') is not None and job['base'] == first['base']
        and job['reintroduce'] == first['reintroduce']
        and job['invariants'] == first['invariants']
        and job['where'] == first['where']
        and branching.shared_steps(job['base'], job['document']) is not None
        for job in jobs)


def replay_branched(jobs, pool=None, done=None, record=False,
                    concurrency=1, at_points=None, wait_limit=None,
                    seen=None, nested=True, replay_timeout=None,
                    dump_dir=None):
    """``replay`` each of ``jobs`` (``branchable``), as branches of one run.

    The trunk is the jobs' scenario as recorded (``base``); each job
    forks from it before the first step where its own steps differ
    (``harness.runners.branching``), or, with ``at_points``, a job whose
    own steps there only inject (``_injected_at``) forks inside that
    step, at the race point where its first injection fires: the part
    of the step before it is the trunk's. A job that could not be forked
    there (``Branches.unforked``) is replayed as a branch of another run
    of the trunk, forked before the step (``at_points`` defaults to
    whether the process runs Nova under eventlet: under native threading
    every job forks before its step); one that found no free core in
    time there (``Branches.postponed``), of another run that forks it
    where it fires. Results in job order, as
    ``replay``'s, each saying where it was forked (``forked_at``: the
    passage, None before a step); ``done(failed=...)`` as each job ends.
    The trunk's own time (its reset and steps, shared by all) is counted
    in the first job's phases. ``concurrency``: children running at
    once; ``wait_limit``, ``replay_timeout`` (its ``timeout``) and
    ``dump_dir``: see ``branching.Branches``; ``seen(result)``
    as each job's result comes in, in this process. Run it in a
    process that has run the scenario before (the explorer's plan did):
    what Nova and the libraries do once per process on first use (SQL
    compiled, modules imported, caches filled) would otherwise be done
    again in every child, after its fork.

    Nested (``nested``, and jobs that carry a ``single``: the document
    and ``steps_at`` of the replay of their first injection alone): two
    or more jobs whose documents are their ``single``'s with inject
    steps put in are forked from a run of that single instead, itself a
    child of the trunk (``Branches.nest``, ``_nests``): the steps from
    the first injection to the second run once for all of them. Those
    whose inject steps go before the single's own step are handed to
    the single's run inside that step if it forks there (with
    ``at_points``; ``Branches``' ``at_points`` entries that name it),
    else forked by the trunk. The single's own result is not one of the
    results; its time is counted in its first job's phases.
    """
    done = done or (lambda failed: None)
    if at_points is None:
        # Under native threading a fork inside a step would leave the
        # child only the forking thread (harness.cloud.forking).
        at_points = (concurrency_mod.running_mode()
                     != concurrency_mod.THREADING)
    trunk = dict(jobs[0], document=jobs[0]['base'], steps_at=None)
    trunk_steps = len(trunk['document']['steps'])
    phases = phases_mod.Phases(trunk_steps, [])
    trunk_scenario = _parse(trunk) if at_points else None
    parts, in_steps = {}, {}

    def plan(number, job, base, base_scenario, parts, in_steps,
             nest=None, under=None):
        """Fork ``job`` (``number``) from a run of ``base``.

        Where: before a step, or inside it (``at_points``); the step,
        and whether inside. ``under``: ``(nested trunk's key, how many
        of the job's own inject steps are its second injection's)``: a
        job forked inside the step that nested trunk's first injection
        is put before, and by it if it forks there (``Branches``).
        """
        at = branching.shared_steps(base, job['document'])
        scenario = _parse(job)
        injections = (_injected_at(base_scenario, scenario, at)
                      if at_points else None)

        def start(forked_at, scenario=scenario, at=at):
            phases.branched(at, forked_at)
            if nest is not None:
                branches.nest(*nest)
            return scenario
        if injections:
            entry = (number, start, injections)
            if under is not None:
                entry += ((under[0], injections[:under[1]]),)
            in_steps.setdefault(at, []).append(entry)
        else:
            parts.setdefault(at, []).append((number, start))
        return at, bool(injections)

    nests = _nests(jobs, same_step=at_points) if nested else []
    in_nests = {number for _single, later, same in nests
                for number in later + same}
    for number, job in enumerate(jobs):
        if number not in in_nests:
            plan(number, job, job['base'], trunk_scenario, parts, in_steps)
    for index, (single, later, same) in enumerate(nests):
        # The single's run is its jobs' trunk: a child of this one.
        single_job = dict(jobs[(later + same)[0]],
                          document=single['document'],
                          steps_at=single['steps_at'])
        single_scenario = _parse(single_job)
        own_parts, own_in_steps = {}, {}
        for number in later:
            plan(number, jobs[number], single['document'], single_scenario,
                 own_parts, own_in_steps)
        key = ('nested', index)
        at, inside = plan(key, single_job, single_job['base'],
                          trunk_scenario, parts, in_steps,
                          nest=(own_parts, own_in_steps))
        for number in same:
            # In the single's step: forked by its run inside the step if
            # it forks there, after it, else by this one.
            second = (len(jobs[number]['document']['steps'])
                      - len(single['document']['steps']))
            plan(number, jobs[number], jobs[number]['base'], trunk_scenario,
                 parts, in_steps, under=(key, second) if inside else None)

    watch, recorded, passing = _Watch(), {}, _Passing()

    def result_of(number, scenario, timeline):
        if not isinstance(number, int):
            # A nested trunk (a single): only its own time counts, not
            # its waits for its children (they count their own).
            own = phases.seconds()
            own['steps'] = max(0.0, own['steps'] - branches.waited_in_steps)
            own['other'] = max(0.0, own['other'] - (
                branches.waited - branches.waited_in_steps))
            return {'phases': own}
        return dict(_result(scenario, timeline, phases, record),
                    forked_at=branches.forked_at,
                    nested=branches.nested_in is not None,
                    digests=recorded.get(number, {}),
                    **_passages(jobs[number], passing))

    def ended(number, result):
        if not isinstance(number, int):
            return
        if seen is not None:
            seen(result)
        done(failed=result['failed'])

    def describe(number):
        # By what it changes: the job numbers are this call's own.
        if isinstance(number, int):
            return 'the replay that %s' % _changes(jobs[number])
        single = nests[number[1]][0]
        return ('the run that %s (the trunk of its pairs)'
                % _changes(dict(trunk, document=single['document'])))

    branches = branching.Branches(
        parts, result_of, ended,
        concurrency=concurrency, at_points=in_steps, wait_limit=wait_limit,
        stop=_stopper(jobs, phases, watch, recorded, passing),
        describe=describe,
        timeout=replay_timeout, dump_dir=dump_dir)
    try:
        # A child ends inside the run (Branches.ended: child_done, or
        # child_failed on an error); nothing after this runs in one.
        _run_job(trunk, pool, branches, phases,
                 observers=[watch, passing])
        branches.finish()
    finally:
        branches.close()
    shared = phases.seconds()
    # The trunk's time but its children's (they count their own): its
    # waits for them inside a step were timed as that step's.
    shared['prefix'] = max(0.0, shared['prefix'] - branches.waited_in_steps)
    shared['other'] = max(0.0, shared['other'] - (
        branches.waited - branches.waited_in_steps))
    results = [branches.results.get(number) for number in range(len(jobs))]
    for index, (_single, later, same) in enumerate(nests):
        own = branches.results.get(('nested', index))
        taken = [number for number in later + same if results[number]]
        if own is not None and taken:
            for name, seconds in own['phases'].items():
                results[taken[0]]['phases'][name] += seconds
    # A nested trunk not forked: its jobs run as the others not forked.
    unforked = [number for number in branches.unforked
                if isinstance(number, int)]
    postponed = [number for number in branches.postponed
                 if isinstance(number, int)]
    for index, (_single, later, _same) in enumerate(nests):
        # Those of the same step as the single's are in the lists.
        if ('nested', index) in branches.unforked:
            unforked.extend(later)
        if ('nested', index) in branches.postponed:
            postponed.extend(later)
    # Another trunk run for those not forked: before their step, or (a
    # free core too late) where they fire; each run forks at least the
    # first of each step.
    for again, where in ((unforked, False), (postponed, True)):
        again = sorted(set(again))
        if not again:
            continue
        for number, result in zip(again, replay_branched(
                [jobs[number] for number in again], pool=pool, done=done,
                record=record, concurrency=concurrency, at_points=where,
                wait_limit=wait_limit, seen=seen, nested=False,
                replay_timeout=replay_timeout, dump_dir=dump_dir)):
            results[number] = result
    for name in ('reset', 'prefix', 'other'):
        results[0]['phases'][name] += shared[name]
    return results


def _changes(job):
    """What ``job``'s document changes in its ``base``, as text.

    The steps it puts in (its injections), and those of the base it
    drops (a shrinking trial), by their numbers in the base.
    """
    base = job['base']['steps']
    at, put_in, dropped = 0, [], []
    for step in job['document']['steps']:
        if step in base[at:]:
            found = base.index(step, at)
            dropped.extend(range(at + 1, found + 1))
            at = found + 1
        else:
            put_in.append(_step_text(step))
    dropped.extend(range(at + 1, len(base) + 1))
    said = []
    if put_in:
        said.append('puts in ' + '; '.join(put_in))
    if dropped:
        said.append('drops step%s %s' % ('s' if len(dropped) > 1 else '',
                                         ', '.join(map(str, dropped))))
    return ' and '.join(said) or 'changes nothing'


def _step_text(step):
    """A raw step as the scenario file says it, on one line."""
    def text(value):
        if isinstance(value, dict):
            return '{%s}' % items(value)
        return str(value)

    def items(mapping):
        return ', '.join('%s: %s' % (key, text(value))
                         for key, value in mapping.items())
    return items(step) if isinstance(step, dict) else str(step)


def _nests(jobs, same_step=True):
    """The jobs to fork from runs of their first injection alone.

    ``[(single, later, same), ...]``: for each ``single`` (a job's, see
    ``replay_branched``) two or more jobs carry, the numbers of those
    whose documents are the single's with inject steps put in: after
    its own (``later``: their second injection goes in a later step),
    or, with ``same_step``, just before its own (``same``: in its step).
    One job alone gains nothing: the single's run would be its own
    from its first injection to its second.
    """
    found = []
    for number, job in enumerate(jobs):
        single = job.get('single')
        where = single and _nested_where(job, single['document'])
        if where is None or (where == 'same' and not same_step):
            continue
        for other, later, same in found:
            if other == single:
                (later if where == 'later' else same).append(number)
                break
        else:
            found.append((single, [number] if where == 'later' else [],
                          [number] if where == 'same' else []))
    return [(single, later, same) for single, later, same in found
            if len(later) + len(same) > 1]


def _nested_where(job, single):
    """Where ``job``'s document puts inject steps in ``single``'s.

    ``'later'`` after the single's own, ``'same'`` just before them
    (both before one step), None if it is not the single's with inject
    steps put in there.
    """
    base = job['base']
    parted = branching.shared_steps(base, single)
    if parted is None:
        return None
    # The single's own steps: the trunk's, with its inject steps.
    own = parted + len(single['steps']) - len(base['steps'])
    at = branching.shared_steps(single, job['document'])
    if at is None:
        return None
    if at > own:
        return 'later'
    steps = job['document']['steps']
    extra = len(steps) - len(single['steps'])
    if (at == parted and extra > 0
            and steps[parted + extra:] == single['steps'][parted:]
            and all(list(step) == ['inject']
                    for step in steps[parted:parted + extra])):
        return 'same'
    return None


def _injected_at(trunk, scenario, at):
    """What ``scenario`` injects before the trunk's step ``at + 1``, if only.

    Its steps after the trunk's first ``at`` only arm injections
    (``inject``), then are the trunk's rest, the first of them alike in
    what it runs: the injections as ``(point, when, host, server)``
    (``race.matches``). None otherwise.
    """
    arming = len(scenario.steps) - len(trunk.steps)
    if at is None or arming <= 0 or at >= len(trunk.steps):
        return None
    own = scenario.steps[at:at + arming]
    rest = scenario.steps[at + arming:]
    if any(step.kind != 'inject' for step in own) or (
            [step.raw for step in rest]
            != [step.raw for step in trunk.steps[at:]]):
        return None
    first, trunks = rest[0], trunk.steps[at]
    if (first.args, first.error) != (trunks.args, trunks.error):
        return None
    return [(step.args['point'], step.args['when'], step.args.get('at_host'),
             step.args.get('server')) for step in own]


def run_in_workers(jobs, workers, kept_cloud=True, done=None,
                   replay_timeout=None, dump_dir=None):
    """``replay`` each job in ``workers`` processes (``workers.py``).

    A job still running after ``replay_timeout`` seconds ends it with
    ``workers.WorkerHung``, naming the job by what it changes, as a
    forked replay is named (``replay_branched``), its stacks in
    ``dump_dir``.
    """
    def describe(number):
        if jobs[number].get('base') is None:
            return 'replay %d of %d' % (number + 1, len(jobs))
        return 'the replay that %s' % _changes(jobs[number])
    return workers_mod.run_in_workers(__name__, jobs, workers, kept_cloud,
                                      done, timeout=replay_timeout,
                                      dump_dir=dump_dir, describe=describe)


def recorded_points(scenario, timeline):
    """The distinct points the move steps passed, one per Nova state.

    Two points of a step passed at the same ``version`` (no write to
    Nova's records or Placement between them) would show an injected
    periodic the same state; the first stands for both.
    """
    moving = {step.index for step in scenario.steps if step.unit.moves}
    points, seen = [], set()
    for entry in timeline:
        if entry.index not in moving:
            continue
        for passage in entry.passages:
            key = (entry.index, passage.version)
            if key not in seen:
                seen.add(key)
                points.append((entry.index, passage.when, passage.point,
                               passage.host, passage.server, passage.roles))
    return points


if __name__ == '__main__':  # a worker process of run_in_workers
    workers_mod.serve(replay, *sys.argv[1:])
