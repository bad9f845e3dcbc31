"""Network faults and requests in the middle of a move: the loader's side.

And the one process-wide condition they showed to matter: Nova's eventlet
patching must come before Nova is imported, whichever harness module a
test process imports first (see ``harness/cloud/__init__.py``).
"""

import json
import os
import subprocess
import sys
import textwrap

from harness.core import errors
from harness.core import invariants
from harness.core import scenario
from harness import testing
from tests.unit import test_invariants

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Imports one module in a fresh interpreter, then reports what kind of
# thread-local oslo.db keeps a context's transaction in and oslo.context
# its request store in: made before eventlet's patching they are one per
# OS thread, shared by every greenthread.
_PROBE = textwrap.dedent('''
    import importlib
    import json
    import sys

    importlib.import_module(sys.argv[1])
    from oslo_context import context
    from oslo_db.sqlalchemy import enginefacade
    print(json.dumps({
        "transaction": [c.__module__ for c in
                        enginefacade._TransactionContextTLocal.__mro__],
        "request_store": type(context._request_store).__module__,
    }))
''')


def _probe(module):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [REPO] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep)
                  if p])
    result = subprocess.run([sys.executable, '-c', _PROBE, module],
                            capture_output=True, text=True, cwd=REPO,
                            env=env, timeout=300)
    if result.returncode:
        raise AssertionError('importing %s failed:\n%s'
                             % (module, result.stderr))
    return json.loads(result.stdout.strip().splitlines()[-1])


class TestEventletPatchedFirst(testing.TestCase):

    def test_the_pool_imported_first_leaves_greenthread_locals(self):
        # reuse.py imports nova.context (and with it oslo.db) before
        # nova_env patches: unless the package patches first, a build's
        # port allocation joined another greenthread's transaction and
        # was lost (an empty network info cache, so no port binding in a
        # later live migration: network faults never fired in the suite).
        found = _probe('harness.cloud.reuse')
        self.assertIn('eventlet.corolocal', found['transaction'])
        self.assertEqual('eventlet.corolocal', found['request_store'])


PATH = 'mid_move.yaml'
HEAD = """\
name: mid move
hosts:
  src: {driver: fake}
  dst: {driver: fake}
  other: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""


def _load(body):
    return scenario.load_file(PATH, HEAD + body)[1][0]


class TestDeleteTiedToItsStep(testing.TestCase):
    """The loader ties an interjected delete to the step it lands in."""

    def test_a_delete_in_a_resize_is_tied_with_the_new_flavor(self):
        loaded = _load("  - inject: {before: finish_resize, "
                       "do: {delete: vm1}}\n"
                       "  - resize: {server: vm1, flavor: large}\n"
                       "    error: is gone\n")
        inject, resize = loaded.steps[1:]
        self.assertEqual([inject], resize.interjected)
        self.assertEqual('large', inject.args['move_flavor'])
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 2},
                         inject.args['flavors']['large'])

    def test_a_delete_in_a_migration_moves_no_flavor(self):
        loaded = _load("  - inject: {before: finish_resize, "
                       "do: {delete: vm1}}\n"
                       "  - migrate: {server: vm1, host: dst}\n"
                       "    error: is gone\n")
        self.assertEqual([loaded.steps[1]], loaded.steps[2].interjected)
        self.assertIsNone(loaded.steps[1].args['move_flavor'])

    def test_a_periodic_or_an_abort_is_tied_to_nothing(self):
        loaded = _load("  - inject: {before: finish_resize, "
                       "run: update_available_resource, on: dest}\n"
                       "  - inject: {before: pre_live_migration, "
                       "do: {abort_live_migration: vm1}}\n"
                       "  - resize: {server: vm1, flavor: large}\n"
                       "  - confirm: vm1\n"
                       "  - live_migrate: {server: vm1, host: src}\n"
                       "    error: did not reach\n")
        for step in loaded.steps:
            self.assertFalse(hasattr(step, 'interjected'), step.label)

    def test_a_delete_of_a_server_never_booted_is_still_refused(self):
        exc = self.assertRaises(
            errors.ScenarioError, _load,
            "  - inject: {before: finish_resize, do: {delete: vm9}}\n"
            "  - resize: {server: vm1, flavor: large}\n")
        self.assertIn('field "inject.do.delete"', str(exc))
        self.assertIn("no server 'vm9' is booted", str(exc))


def _resize_deleted_before_finish(third_host_grew=False):
    """vm1 (small on src) deleted while resizing to large on dst.

    Placement holds nothing after; the source's tracker still counts
    small, the destination's large (the claim of prep_resize).
    """
    before = test_invariants.build(
        {'vm1': {'src': test_invariants.SMALL}},
        servers=[('vm1', 'ACTIVE', 'src')], hosts=('src', 'dst', 'other'))
    trackers = {
        'src': {'vcpus_used': 1, 'memory_mb_used': 1024, 'local_gb_used': 1},
        'dst': {'vcpus_used': 2, 'memory_mb_used': 1536, 'local_gb_used': 2}}
    if third_host_grew:
        trackers['other'] = {'vcpus_used': 1}
    after = test_invariants.build({}, hosts=('src', 'dst', 'other'),
                                  trackers=trackers)
    return before, after


class TestInterjectedDeleteWindows(testing.TestCase):

    def _step(self, body="  - inject: {before: finish_resize, "
                         "do: {delete: vm1}}\n"
                         "  - resize: {server: vm1, flavor: large}\n"
                         "    error: is gone\n", moving=('dst', 'src')):
        step = _load(body).steps[2]
        # What the inject notes where the delete lands (``moving``): the
        # compute passing finish_resize, the migration's source and dest.
        for inject in step.interjected:
            inject.args['moving'] = sorted(moving)
        return step

    def test_both_trackers_may_count_the_guest_until_their_periodic(self):
        before, after = _resize_deleted_before_finish()
        windows = invariants.tracker_windows({}, before, after,
                                             step=self._step())
        self.assertEqual({'vcpus': 1, 'memory_mb': 512, 'local_gb': 1},
                         windows['src']['above'])
        self.assertEqual({'vcpus': 2, 'memory_mb': 1024, 'local_gb': 2},
                         windows['dst']['above'])
        self.assertEqual(['dst', 'src'], sorted(windows))
        self.assertEqual([], invariants.tracker_agrees(after,
                                                       windows=windows))
        self.assertEqual({}, invariants.tracker_windows(
            windows, after, after, reconciled={'src', 'dst'}))

    def test_the_bound_is_the_move_s_flavor(self):
        before, after = _resize_deleted_before_finish()
        # The destination counting more than the new flavor is a problem.
        after.trackers['dst'].vcpus_used = 3
        windows = invariants.tracker_windows({}, before, after,
                                             step=self._step())
        problems = invariants.tracker_agrees(after, windows=windows)
        self.assertEqual(['host dst, vcpus'],
                         [p.subject for p in problems])

    def test_without_the_delete_tied_the_step_opens_nothing(self):
        before, after = _resize_deleted_before_finish()
        step = self._step()
        del step.interjected
        self.assertEqual({}, invariants.tracker_windows({}, before, after,
                                                        step=step))

    def test_a_server_still_there_opens_nothing(self):
        before, _ = _resize_deleted_before_finish()
        self.assertEqual({}, invariants.tracker_windows(
            {}, before, before, step=self._step()))

    def test_a_migration_s_bound_is_what_the_guest_held(self):
        before, after = _resize_deleted_before_finish()
        step = self._step("  - inject: {before: finish_resize, "
                          "do: {delete: vm1}}\n"
                          "  - migrate: {server: vm1, host: dst}\n"
                          "    error: is gone\n")
        windows = invariants.tracker_windows({}, before, after, step=step)
        self.assertEqual({'vcpus': 1, 'memory_mb': 512, 'local_gb': 1},
                         windows['dst']['above'])

    def test_only_the_move_s_hosts(self):
        # A tracker that grew on a host the move never touched is no
        # part of this delete: no window, and its growth is a problem.
        before, after = _resize_deleted_before_finish(third_host_grew=True)
        windows = invariants.tracker_windows({}, before, after,
                                             step=self._step())
        self.assertEqual(['dst', 'src'], sorted(windows))
        self.assertEqual(['host other, vcpus'], [
            p.subject for p in invariants.tracker_agrees(
                after, windows=windows)])

    def test_a_server_not_moving_opens_nothing(self):
        # Nothing noted at the point and no move in flight before: a
        # tracked instance, which the delete path releases.
        before, after = _resize_deleted_before_finish()
        self.assertEqual({}, invariants.tracker_windows(
            {}, before, after, step=self._step(moving=())))
