"""A compute that dies (or restarts) at a race point: the loader's side.

``inject: {before | after: point, stop | restart: host | role}``
(``harness.core.steps.inject``, ``harness.cloud.dying``). The loader
tracks which computes are stopped, so a ``stop`` must name a host it can
tell; a later step then sees the compute stopped. No Nova service runs
here.
"""

from harness.core import scenario
from harness.core import snapshot
from harness.core.steps import inject
from harness import testing

from tests.unit import refusals

PATH = 'dying.yaml'
HEAD = """\
name: dying
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""


def _load(body, head=HEAD):
    return scenario.load_file(PATH, head + body)[1][0]


class TestDyingCompute(testing.TestCase):

    def refused(self, body, field, *fragments, head=HEAD):
        return refusals.refused(self, PATH, field, fragments, _load, body,
                                head)

    def test_a_stop_by_role_loads_and_stops_that_host(self):
        loaded = _load(
            "  - inject: {before: finish_resize, stop: dest}\n"
            "  - resize: {server: vm1, flavor: large}\n"
            "    error: did not reach its resting state\n"
            "  - advance_clock: 61\n"
            "  - start_compute: dst\n")
        step = loaded.steps[1]
        self.assertEqual({'when': 'before', 'point': 'finish_resize',
                          'stop': 'dest', 'host': 'dst', 'times': 1,
                          'server': None, 'at_host': None}, step.args)
        self.assertEqual('inject before finish_resize: stop dest',
                         step.label)
        # Tied to the step that passes the point, for its windows.
        self.assertEqual([step], loaded.steps[2].interjected)

    def test_the_source_is_the_server_s_known_host(self):
        loaded = _load(
            "  - inject: {before: resize_instance, stop: source}\n"
            "  - resize: {server: vm1, flavor: large}\n"
            "    error: did not reach its resting state\n"
            "  - start_compute: src\n")
        self.assertEqual('src', loaded.steps[1].args['host'])

    def test_a_later_step_sees_the_compute_stopped(self):
        self.refused(
            "  - inject: {before: finish_resize, stop: dst}\n"
            "  - resize: {server: vm1, flavor: large}\n"
            "    error: did not reach its resting state\n"
            "  - stop_compute: dst\n",
            'stop_compute.host', "compute 'dst' is already stopped")
        self.refused(
            "  - inject: {before: finish_resize, stop: dst}\n"
            "  - resize: {server: vm1, flavor: large}\n"
            "    error: did not reach its resting state\n"
            "  - fault: {host: dst, method: spawn}\n",
            'fault.host', 'is stopped')

    def test_a_restart_leaves_the_compute_running(self):
        loaded = _load(
            "  - inject: {before: pre_live_migration, restart: dest}\n"
            "  - live_migrate: {server: vm1}\n"
            "    error: did not reach its resting state\n"
            "  - stop_compute: dst\n")
        # A role is resolved where the point is passed.
        self.assertIsNone(loaded.steps[1].args['host'])
        self.assertEqual('inject before pre_live_migration: restart dest',
                         loaded.steps[1].label)

    def test_a_stopped_compute_cannot_die_again(self):
        self.refused(
            "  - stop_compute: dst\n"
            "  - inject: {before: finish_resize, stop: dst}\n"
            "  - resize: {server: vm1, flavor: large}\n",
            'inject.stop', "compute 'dst' is already stopped")

    def test_a_compute_dies_once(self):
        self.refused(
            "  - inject: {before: finish_resize, stop: dst, times: 2}\n"
            "  - resize: {server: vm1, flavor: large}\n",
            'inject.times', 'a compute dies once')

    def test_stop_restart_run_and_do_are_exclusive(self):
        for extra in ('restart: src', 'run: update_available_resource',
                      'do: {delete: vm1}'):
            self.refused(
                "  - inject: {before: finish_resize, stop: dst, %s}\n"
                "  - resize: {server: vm1, flavor: large}\n" % extra,
                'inject.restart' if extra.startswith('restart')
                else 'inject.stop', 'one of them')

    def test_an_unknown_host_is_refused(self):
        self.refused(
            "  - inject: {before: finish_resize, stop: nowhere}\n"
            "  - resize: {server: vm1, flavor: large}\n",
            'inject.stop', 'nowhere')

    def test_a_role_the_loader_cannot_tell_is_refused(self):
        three = HEAD.replace("  dst: {driver: fake}\n",
                             "  dst: {driver: fake}\n"
                             "  third: {driver: fake}\n")
        self.refused(
            "  - inject: {before: finish_resize, stop: dest}\n"
            "  - resize: {server: vm1, flavor: large}\n",
            'inject.stop', "cannot tell which compute 'dest'", head=three)
        self.refused(
            "  - boot: {server: vm2, flavor: small, host: src}\n"
            "  - inject: {before: finish_resize, stop: dest}\n"
            "  - resize: {server: vm1, flavor: large}\n",
            'inject.server', 'vm1, vm2')

    def test_the_point_must_be_passed_later(self):
        self.refused(
            "  - inject: {before: finish_resize, stop: dst}\n"
            "  - delete: vm1\n",
            'before', 'no later step passes')


def _snap(allocations):
    trackers = {host: snapshot.Tracker(host, host, 10, 0, 8192, 512, 1028,
                                       0, ())
                for host in ('src', 'dst')}
    return snapshot.Snapshot(
        providers={}, allocations=allocations, trackers=trackers)


class TestDiedWindows(testing.TestCase):

    def test_what_placement_gained_there_during_the_step(self):
        before = _snap({})
        after = _snap({'vm1': {'dst': {'VCPU': 1, 'MEMORY_MB': 512}}})
        windows = inject.died_windows('dst', before, after)
        self.assertEqual([('dst', 'below', {'VCPU': 1, 'MEMORY_MB': 512})],
                         [(w.host, w.side, w.held) for w in windows])
        # Nothing changed there: no window.
        self.assertEqual([], inject.died_windows('src', before, after))
