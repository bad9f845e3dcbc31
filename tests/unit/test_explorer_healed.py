"""A tracker lag an injected periodic caught up early is excused, only that.

``harness.runners.healed``: in an explored replay, a ``tracker`` or
``pinned_cpus`` expectation's problem on host H is taken out when a
periodic injected in the replay ran on H since the scenario's own last
periodic there and H's tracker counts exactly what Placement holds. The
scenario is the fake-host live migration of
``tests/functional/scenarios/live_migrate.yaml``, which expects the
destination to count nothing until its own periodic (the ``live-migrated
here`` lag); the snapshots are built by hand (``test_invariants.build``)
from its ``small`` flavor.
"""

import types

from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod
from harness.core import timeline as timeline_mod
from harness.runners import healed
from harness import testing
from tests.unit import test_invariants as helpers

TASK = 'update_available_resource'
SCENARIO = ('name: live migrate\n'
            'hosts: {src: {driver: fake}, dst: {driver: fake}}\n'
            'flavors: {small: {vcpus: 1, ram: 512, disk: 1}}\n'
            'steps:\n'
            '  - boot: {server: vm1, flavor: small, host: src}\n'
            '  - inject: {before: post_live_migration_at_destination,\n'
            '             run: update_available_resource, on: dest}\n'
            '  - live_migrate: vm1\n'
            '    expect: {tracker: {}}\n'
            '  - run_periodic: update_available_resource\n'
            '    expect: {tracker: {}}\n')
BOOT, INJECT, LIVE_MIGRATE, PERIODIC = 1, 2, 3, 4


def _scenario():
    return scenario_mod.load_file('s.yaml', SCENARIO)[1][0]


def _moved(**trackers):
    """vm1 on dst after the live migration; Placement holds it there.

    By default both trackers count what Placement holds (dst: small).
    """
    return helpers.build({'vm1': {'dst': helpers.SMALL}},
                         servers=[('vm1', 'ACTIVE', 'dst')],
                         migrations=[('vm1', 'completed', 'src', 'dst',
                                      'live-migration')],
                         trackers=trackers)


def _counts_nothing():
    return {'vcpus_used': 0, 'memory_mb_used': helpers.RESERVED_MB,
            'local_gb_used': 0}


def _lag(host='dst', check='tracker'):
    """The problem of ``tracker: {}`` where the tracker counts small."""
    return problems_mod.Problem(check, host, 0, 1, 'tracker of %s' % host)


def _timeline(snap, problems, runs_on=('dst',), at=LIVE_MIGRATE,
              later=None):
    """The replay's timeline: ``problems`` at step ``at``.

    The injected periodic ran on ``runs_on`` during the live migration;
    ``later``: the problems of the scenario's own periodic after it.
    """
    timeline = timeline_mod.Timeline(concurrency='threading')
    timeline.add(0, 'start', snap)
    for index in (BOOT, INJECT, LIVE_MIGRATE, PERIODIC):
        entry = timeline.add(index, 'step %d' % index, snap)
        entry.passages = []
        if index == LIVE_MIGRATE:
            entry.passages = [types.SimpleNamespace(
                runs=[(TASK, host) for host in runs_on])]
        if index == at:
            entry.problems = list(problems)
        if index == PERIODIC and later:
            entry.problems = list(later)
    return timeline


class TestExcuse(testing.TestCase):

    def test_a_lag_the_injected_periodic_healed_is_excused(self):
        timeline = _timeline(_moved(), [_lag()])
        self.assertEqual([_lag()], healed.excuse(_scenario(), timeline))
        self.assertEqual([], timeline.failed)

    def test_pinned_cpus_of_a_cell_name_their_host(self):
        problem = _lag('dst cell 0', 'pinned_cpus')
        timeline = _timeline(_moved(), [problem])
        self.assertEqual([problem], healed.excuse(_scenario(), timeline))

    def test_a_tracker_that_disagrees_with_placement_is_not(self):
        # dst counts nothing while Placement holds vm1 there: wrong by
        # Placement's measure, whatever the expectation said.
        timeline = _timeline(_moved(dst=_counts_nothing()), [_lag()])
        self.assertEqual([], healed.excuse(_scenario(), timeline))
        self.assertEqual([_lag()], timeline.failed[0].problems)

    def test_no_periodic_injected_on_that_host_is_not(self):
        timeline = _timeline(_moved(), [_lag()], runs_on=('src',))
        self.assertEqual([], healed.excuse(_scenario(), timeline))
        timeline = _timeline(_moved(), [_lag()], runs_on=())
        self.assertEqual([], healed.excuse(_scenario(), timeline))

    def test_after_the_scenarios_own_periodic_it_is_not(self):
        # The run_periodic step reconciled dst: its expectation is the
        # scenario's word on a reconciled tracker.
        timeline = _timeline(_moved(), [], later=[_lag()])
        self.assertEqual([], healed.excuse(_scenario(), timeline))
        self.assertEqual(PERIODIC, timeline.failed[0].index)

    def test_other_checks_are_never_excused(self):
        others = [problems_mod.Problem('allocations', 'vm1', {}, {}),
                  problems_mod.Problem('tracker_agrees', 'host dst, vcpus'),
                  problems_mod.Problem('usages', 'dst', {}, {})]
        timeline = _timeline(_moved(), others + [_lag()])
        self.assertEqual([_lag()], healed.excuse(_scenario(), timeline))
        self.assertEqual(others, timeline.failed[0].problems)

    def test_a_lag_of_another_host_is_not(self):
        # The periodic ran on dst; src's expectation is src's.
        timeline = _timeline(_moved(), [_lag('src')])
        self.assertEqual([], healed.excuse(_scenario(), timeline))
