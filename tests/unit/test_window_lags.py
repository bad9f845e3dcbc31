"""Every window says why Nova lags there and which Nova code catches up.

Walks every step kind's declarations (``StepKind.lags``, the lag of
``inject.ClaimWindow``) and checks that a report naming a window says its
lag. Hand-built snapshots as in ``test_invariants``.
"""

import dataclasses
import os
import re

from harness.core.checks.invariant import capacity_probe
from harness.core import invariants
from harness.core import snapshot
from harness.core import steps
from harness.core.steps import base
from harness.core.steps import inject
from harness import testing
from tests.unit import test_capacity
from tests.unit import test_invariants

# A Nova method (Class.method or a function) and the file of Nova's tree
# it lives in: what a catch-up has to name.
NOVA_CODE = re.compile(r'[A-Za-z_]+\.[a-z_]+.*nova/[a-z_/]+\.py')


class TestEveryWindowDeclaresItsLag(testing.TestCase):

    def kinds(self):
        return sorted(steps.registry().values(), key=lambda k: k.name)

    def test_a_kind_that_opens_windows_declares_their_lags(self):
        opening = [kind for kind in self.kinds()
                   if type(kind).windows is not base.StepKind.windows]
        # delete, evacuate, inject and live_migrate open windows today; a
        # new kind that opens one is walked too.
        self.assertGreaterEqual(len(opening), 4)
        for kind in opening:
            self.assertTrue(kind.lags, '%s opens windows but declares no '
                            'lags' % kind.name)

    def test_every_lag_has_a_reason_and_names_nova_code(self):
        lags = [lag for kind in self.kinds() for lag in kind.lags]
        lags.append(inject.ClaimWindow.lag)
        for lag in lags:
            self.assertIsInstance(lag, base.Lag)
            self.assertTrue(lag.reason.strip(), lag.name)
            self.assertRegex(lag.catch_up, NOVA_CODE, lag.name)
        names = {lag.name for lag in set(lags)}
        self.assertEqual(len(set(lags)), len(names))

    def test_the_reference_lists_every_lag(self):
        # doc/source/reference/checks.rst, "Windows and their lags".
        path = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                            'source', 'reference', 'checks.rst')
        with open(path) as doc:
            text = doc.read()
        lags = [lag for kind in self.kinds() for lag in kind.lags]
        for lag in set(lags) | {inject.ClaimWindow.lag}:
            self.assertIn('``%s``' % lag.name, text)

    def test_a_lag_without_reason_or_catch_up_is_refused(self):
        self.assertRaises(ValueError, base.Lag, 'x', '', 'Y.z (nova/y.py)')
        self.assertRaises(ValueError, base.Lag, 'x', 'lags', '')

    def test_a_window_without_a_lag_is_refused(self):
        self.assertRaises(TypeError, base.Window, 'h1', 'above', {}, 'why',
                          None)


class TestReportsSayTheLag(testing.TestCase):

    def test_a_tolerance_names_the_lag_and_its_catch_up(self):
        build = test_invariants.build
        small = test_invariants.SMALL
        moved = build({'vm1': {'dst': small}},
                      servers=[('vm1', 'ACTIVE', 'dst')],
                      migrations=[('vm1', 'confirmed', 'src', 'dst',
                                   'resize')])
        # dst counts twice the guest after its delete: beyond the window.
        stale = dict(vcpus_used=2, memory_mb_used=1536, local_gb_used=2)
        deleted = build({}, migrations=[('vm1', 'confirmed', 'src', 'dst',
                                         'resize')],
                        trackers={'dst': stale})
        windows = invariants.tracker_windows({}, moved, deleted)
        self.assertEqual([base.DELETED_AFTER_MOVE.describe()],
                         windows['dst']['lags'])
        problems = invariants.tracker_agrees(deleted, windows=windows)
        self.assertTrue(problems)
        for problem in problems:
            self.assertIn('window deleted after a move (Nova lags: the '
                          'delete path updates', str(problem))
            self.assertIn('caught up by ResourceTracker.update_available_'
                          'resource', str(problem))


class TestUserVisibleWindow(testing.TestCase):
    """What the probe finds while a window is open is a class of its own."""

    def probe(self, windows):
        # One CPU pinned in the tracker, none used in Placement: a request
        # for all 12 of Placement's free PCPUs is refused by the tracker.
        tracker, provider = test_capacity.empty_host('dev-1s-8c-smt2')
        cell = dataclasses.replace(tracker.cells[0], pinned_cpus=(2,))
        tracker = dataclasses.replace(tracker, cells=(cell,))
        snap = snapshot.Snapshot({'h1': provider}, {}, {'h1': tracker})

        def refuse_pinned(host, node, request):
            return None if request.kind == 'dedicated' else {0: ()}

        [problem] = capacity_probe.capacity_probe(snap, {'h1'},
                                                  refuse_pinned, windows)
        return str(problem)

    def test_a_refusal_in_a_window_names_the_window_and_its_lag(self):
        text = self.probe({'h1': {
            'why': 'vm1 (moved before) deleted',
            'lags': [base.DELETED_AFTER_MOVE.describe()]}})
        self.assertTrue(text.startswith(
            'capacity_probe: user-visible window: host h1 refuses 12 '
            'dedicated CPUs'), text)
        self.assertIn('hidden by the window: vm1 (moved before) deleted; '
                      'window deleted after a move (Nova lags:', text)
        self.assertIn('caught up by ResourceTracker.update_available_'
                      'resource', text)

    def test_a_refusal_out_of_any_window_is_not_that_class(self):
        text = self.probe({})
        self.assertTrue(text.startswith('capacity_probe: host h1 refuses'),
                        text)
        self.assertNotIn(capacity_probe.USER_VISIBLE, text)
