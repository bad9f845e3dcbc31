"""The windows of a server's lifecycle faults, against hand-built snapshots.

A build or unshelve whose chosen compute died before taking it
(``inject.ClaimWindow``), and a delete that lands in the middle of a move
(``delete.interjected_windows``): each allowed exactly where Nova leaves
the state, and flagged one step beside it. Flavors and hosts as in
``test_invariants`` (fake-driver-sized nodes, 512 MB reserved).
"""

import types

from harness.core import invariants
from harness.core.steps import inject
from harness import testing
from tests.unit import test_invariants as helpers

SMALL = helpers.SMALL
LARGE = helpers.LARGE
build = helpers.build


def step(kind, args, interjected=()):
    """A loaded step as the checker sees it (``scenario.Step``)."""
    return types.SimpleNamespace(kind=kind, args=args, interjected=[
        types.SimpleNamespace(kind=k, args=a) for k, a in interjected])


def stopped_in_boot(host='h1'):
    """A boot with ``inject: {stop: host}`` attached (check_points)."""
    return step('boot', {'server': 'vm1', 'flavor': 'small'}, [
        ('inject', {'when': 'before', 'point': 'build_and_run_instance',
                    'stop': host, 'host': host, 'times': 1})])


def waiting(host='h1', status='BUILD', task_state=None, held=None,
            hosts=('h1', 'h2')):
    """vm1 on no host, the scheduler's claim on ``host`` (or ``held``)."""
    snap = build(held or {'vm1': {host: SMALL}},
                 servers=[('vm1', status, None)], hosts=hosts)
    snap.servers['vm1'].task_state = task_state
    return snap


class TestClaimWindow(testing.TestCase):

    def claims(self, after, stopped=('h1',), before=None,
               the_step=None):
        return invariants.claim_windows(
            {}, before or build({}, hosts=('h1', 'h2')), after,
            set(stopped), the_step or stopped_in_boot())

    def test_without_window_a_hostless_claim_is_flagged(self):
        self.assertEqual(
            ['allocations_where_server_is: consumer vm1 holds '
             'DISK_GB=1 MEMORY_MB=512 VCPU=1 on h1, which is not its host '
             'None'],
            [problem.text for problem in
             invariants.allocations_where_server_is(waiting())])

    def test_build_waits_on_the_dead_host(self):
        snap = waiting()
        claims = self.claims(snap)
        self.assertEqual(['vm1'], sorted(claims))
        self.assertEqual(
            [], invariants.allocations_where_server_is(snap, claims))

    def test_unshelve_waits_on_the_dead_host(self):
        snap = waiting(status='SHELVED_OFFLOADED', task_state='unshelving')
        claims = self.claims(snap)
        self.assertEqual(
            [], invariants.allocations_where_server_is(snap, claims))

    def test_only_in_the_dead_host_tree(self):
        # The claim on h1 is allowed, a part on h2 is not.
        snap = waiting(held={'vm1': {'h1': SMALL, 'h2': SMALL}})
        self.assertEqual({}, self.claims(snap))
        claims = {'vm1': inject.ClaimWindow('vm1', 'h1', 'why')}
        problems = invariants.allocations_where_server_is(snap, claims)
        self.assertEqual(1, len(problems))
        self.assertIn('on h2, which is not its host None or h1',
                      problems[0].text)

    def test_not_on_another_host_than_the_one_that_died(self):
        snap = waiting(host='h2')
        self.assertEqual({}, self.claims(snap))

    def test_not_when_the_compute_runs(self):
        # Nothing opens for a death the host came back from, and an open
        # window closes when the host starts again.
        self.assertEqual({}, self.claims(waiting(), stopped=()))
        opened = {'vm1': inject.ClaimWindow('vm1', 'h1', 'why')}
        self.assertEqual({}, invariants.claim_windows(
            opened, waiting(), waiting(), set(),
            step('start_compute', {'host': 'h1'})))

    def test_not_for_a_server_in_error(self):
        # Nova's start-up put it in ERROR: a failed build holds nothing.
        opened = {'vm1': inject.ClaimWindow('vm1', 'h1', 'why')}
        snap = waiting(status='ERROR')
        claims = invariants.claim_windows(
            opened, waiting(), snap, {'h1'},
            step('advance_clock', {'seconds': 61}))
        self.assertEqual({}, claims)
        self.assertEqual(
            1, len(invariants.allocations_where_server_is(snap, claims)))

    def test_not_for_a_claim_held_before_the_step(self):
        self.assertEqual({}, self.claims(waiting(), before=waiting()))

    def test_stays_open_across_steps_while_it_holds(self):
        opened = {'vm1': inject.ClaimWindow('vm1', 'h1', 'why')}
        claims = invariants.claim_windows(
            opened, waiting(), waiting(), {'h1'},
            step('advance_clock', {'seconds': 61}))
        self.assertEqual(['vm1'], sorted(claims))

    def test_a_server_that_reached_its_host_needs_none(self):
        opened = {'vm1': inject.ClaimWindow('vm1', 'h1', 'why')}
        snap = build({'vm1': {'h1': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'h1')], hosts=('h1', 'h2'))
        self.assertEqual({}, invariants.claim_windows(
            opened, waiting(), snap, set(),
            step('start_compute', {'host': 'h1'})))


class TestDeleteMidMoveWindows(testing.TestCase):
    """vm1 (small on src) deleted while resizing to large on dst."""

    HOSTS = ('src', 'dst', 'third')

    def before(self):
        return build({'vm1': {'src': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'src')], hosts=self.HOSTS)

    def after(self, grown):
        """Nothing in Placement; the trackers ``grown`` still count."""
        trackers = {}
        for host, flavor in grown.items():
            trackers[host] = {
                'vcpus_used': flavor['VCPU'],
                'memory_mb_used': flavor['MEMORY_MB'] + helpers.RESERVED_MB,
                'local_gb_used': flavor['DISK_GB']}
        return build({}, hosts=self.HOSTS, trackers=trackers)

    def problems(self, grown, moving):
        resize = step('resize', {'server': 'vm1', 'flavor': 'large'}, [
            ('inject', {'when': 'before', 'point': 'finish_resize',
                        'do': ('delete', 'vm1'),
                        'flavors': {'small': SMALL, 'large': LARGE},
                        'move_flavor': 'large', 'moving': moving})])
        after = self.after(grown)
        windows = invariants.tracker_windows({}, self.before(), after,
                                             step=resize)
        return invariants.tracker_agrees(after, windows=windows)

    def test_source_and_destination_lag(self):
        # Nova's delete path releases only tracked instances: the source
        # counts its outbound migration, the destination its claim.
        self.assertEqual([], self.problems(
            {'src': SMALL, 'dst': LARGE}, moving=['dst', 'src']))

    def test_an_unrelated_host_that_grew_is_flagged(self):
        problems = self.problems(
            {'src': SMALL, 'dst': LARGE, 'third': SMALL},
            moving=['dst', 'src'])
        self.assertEqual({'host third, vcpus', 'host third, memory_mb',
                          'host third, local_gb'},
                         {problem.subject for problem in problems})

    def test_a_server_not_seen_moving_opens_nothing(self):
        # Without the point's note (the point was passed for another
        # server) and no move in flight before, vm1 was a tracked
        # instance, which Nova's delete releases: no tracker may lag.
        problems = self.problems({'src': SMALL, 'dst': LARGE}, moving=[])
        self.assertEqual({'host %s, %s' % (host, key)
                          for host in ('src', 'dst')
                          for key in ('vcpus', 'memory_mb', 'local_gb')},
                         {problem.subject for problem in problems})

    def test_a_move_in_flight_before_names_its_hosts(self):
        # Deleted in VERIFY_RESIZE (the API confirms first): the
        # migration before the step names both hosts.
        before = helpers.verify_resize(hosts=self.HOSTS)
        after = self.after({'dst': LARGE, 'third': SMALL})
        delete = step('confirm', {'server': 'vm1'}, [
            ('inject', {'when': 'after', 'point': 'confirm_resize',
                        'do': ('delete', 'vm1'), 'flavors': {},
                        'move_flavor': None, 'moving': []})])
        windows = invariants.tracker_windows({}, before, after, step=delete)
        self.assertEqual({'host third, vcpus', 'host third, memory_mb',
                          'host third, local_gb'},
                         {problem.subject for problem in
                          invariants.tracker_agrees(after, windows=windows)})

    def test_at_most_the_flavors(self):
        # The destination may count the new flavor, not more.
        twice = {rc: 2 * n for rc, n in LARGE.items()}
        problems = self.problems({'src': SMALL, 'dst': twice},
                                 moving=['dst', 'src'])
        self.assertEqual({'host dst, vcpus', 'host dst, memory_mb',
                          'host dst, local_gb'},
                         {problem.subject for problem in problems})


class TestKeptAllocationsWindow(testing.TestCase):
    """A local delete whose DELETE of the allocations Placement refused.

    vm1 deleted on h1 while h1's compute is down, its allocations left
    against h1 (the API could not reach Placement): excused while h1 is
    down, only in h1's tree, only if a fault refused that very request.
    """

    def deleted(self, held=None):
        return build(held or {'vm1': {'h1': SMALL}}, servers=[],
                     hosts=('h1', 'h2'))

    def before(self):
        return build({'vm1': {'h1': SMALL}},
                     servers=[('vm1', 'ACTIVE', 'h1')], hosts=('h1', 'h2'))

    def claims(self, after, refused=(), stopped=('h1',), cut_off=True):
        args = {'server': 'vm1'}
        if cut_off:
            args['placement_cut_off'] = True
        return invariants.claim_windows(
            {}, self.before(), after, set(stopped), step('delete', args),
            lambda request: request in refused)

    def request(self):
        return 'DELETE /allocations/%s' % self.before().servers['vm1'].uuid

    def test_without_window_the_kept_allocations_are_leaks(self):
        snap = self.deleted()
        self.assertEqual(
            ['allocations_where_server_is', 'nothing_leaks', 'nothing_leaks'],
            [problem.check for problem in
             invariants.allocations_where_server_is(snap)
             + invariants.nothing_leaks(snap)])

    def test_excused_where_placement_refused_the_delete(self):
        snap = self.deleted()
        claims = self.claims(snap, refused=(self.request(),))
        self.assertEqual(['vm1'], sorted(claims))
        self.assertEqual(
            [], invariants.allocations_where_server_is(snap, claims))
        self.assertEqual([], invariants.nothing_leaks(snap, windows=claims))

    def test_not_when_no_fault_refused_the_request(self):
        # A local delete that never sent it (LP#1679750 put back), or a
        # fault that refused another server's.
        snap = self.deleted()
        self.assertEqual({}, self.claims(snap))
        self.assertEqual({}, self.claims(
            snap, refused=('DELETE /allocations/another',)))

    def test_not_without_a_fault_armed_before_the_delete(self):
        self.assertEqual({}, self.claims(
            self.deleted(), refused=(self.request(),), cut_off=False))

    def test_not_when_the_compute_runs(self):
        self.assertEqual({}, self.claims(
            self.deleted(), refused=(self.request(),), stopped=()))

    def test_only_in_the_host_tree(self):
        snap = self.deleted(held={'vm1': {'h1': SMALL, 'h2': SMALL}})
        self.assertEqual({}, self.claims(snap, refused=(self.request(),)))

    def test_only_what_the_deleted_server_holds(self):
        # Another consumer's leak on h1 is reported still, and the
        # provider's usage beyond vm1's.
        snap = self.deleted(held={'vm1': {'h1': SMALL},
                                  'ghost': {'h1': SMALL}})
        claims = self.claims(snap, refused=(self.request(),))
        self.assertEqual(['vm1'], sorted(claims))
        problems = invariants.nothing_leaks(snap, windows=claims)
        self.assertEqual(
            ['ghost', 'provider h1'],
            [problem.subject for problem in problems])
