"""Evacuate, rebuild and a compute start with its guests gone: the loader.

``evacuate`` (``harness.core.steps.evacuate``) is checked against where the
scenario put the server and which computes Nova sees down by then;
``rebuild`` against the scenario's images; ``start_compute`` takes
``guests: kept | gone``. No Nova service runs here.
"""

from harness.core import errors
from harness.core import scenario
from harness.core import snapshot as snapshot_mod
from harness.core.steps import evacuate
from harness import testing

PATH = 'evacuate.yaml'
HEAD = """\
name: evacuate and rebuild
hosts:
  src: {driver: fake}
  dst: {driver: fake}
  other: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
images:
  numa2: {properties: {hw_numa_nodes: 2}}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""
DOWN = "  - stop_compute: src\n  - advance_clock: 61\n"


def _load(body):
    return scenario.load_file(PATH, HEAD + body)[1][0]


class TestEvacuateLoader(testing.TestCase):

    def refused(self, body, field, *fragments):
        exc = self.assertRaises(errors.ScenarioError, _load, body)
        message = str(exc)
        self.assertIn(PATH, message)
        self.assertIn('field "%s"' % field, message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn('Traceback', message)
        return message

    def test_from_a_compute_seen_down_loads_and_leaves_it_shutoff(self):
        loaded = _load(DOWN + "  - evacuate: {server: vm1, host: dst}\n"
                              "  - evacuate: vm1\n"
                              "    error: not in state\n")
        step = loaded.steps[3]
        self.assertEqual(('evacuate', 'evacuate vm1 to dst'),
                         (step.kind, step.label))
        self.assertEqual({'status': 'SHUTOFF', 'migration': 'done'},
                         step.unit.resting)
        self.assertEqual('evacuate vm1', loaded.steps[4].label)
        # Left SHUTOFF: what needs an active server is refused.
        self.refused(DOWN + "  - evacuate: {server: vm1, host: dst}\n"
                            "  - live_migrate: vm1\n",
                     'live_migrate.server', 'it is stopped (SHUTOFF)')

    def test_refused_while_the_source_compute_runs(self):
        self.refused("  - evacuate: {server: vm1, host: dst}\n",
                     'evacuate.server', 'its host src is not seen down')

    def test_refused_before_service_down_time_has_passed(self):
        self.refused("  - stop_compute: src\n  - advance_clock: 60\n"
                     "  - evacuate: vm1\n",
                     'evacuate.server', 'its host src is not seen down',
                     'service_down_time 60s')
        # The scenario's own service_down_time counts.
        exc = self.assertRaises(errors.ScenarioError, scenario.load_file,
                                PATH, HEAD.replace(
                                    'flavors:', 'config: {DEFAULT: '
                                    '{service_down_time: 120}}\nflavors:')
                                + DOWN + "  - evacuate: vm1\n")
        self.assertIn('service_down_time 120s', str(exc))

    def test_refused_when_another_compute_is_down_but_not_its_own(self):
        self.refused("  - stop_compute: dst\n  - advance_clock: 61\n"
                     "  - evacuate: {server: vm1, host: other}\n",
                     'evacuate.server', 'its host src is not seen down')

    def test_a_server_placed_by_the_scheduler_needs_some_compute_down(self):
        body = ("  - boot: {server: vm2, flavor: small}\n"
                "  - evacuate: vm2\n")
        self.refused(body, 'evacuate.server', 'no compute is seen down')
        # Where vm2 is only Nova knows: with a compute down it is taken.
        _load("  - boot: {server: vm2, flavor: small}\n" + DOWN
              + "  - evacuate: vm2\n")

    def test_after_a_move_through_the_scheduler_the_host_is_unknown(self):
        self.assertIsNone(evacuate.known_host(_load(
            "  - migrate: vm1\n  - confirm: vm1\n"), 'vm1'))
        self.assertEqual('src', evacuate.known_host(_load(''), 'vm1'))
        self.assertEqual('dst', evacuate.known_host(_load(
            DOWN + "  - evacuate: {server: vm1, host: dst}\n"), 'vm1'))
        self.assertIsNone(evacuate.known_host(_load(
            DOWN + "  - evacuate: vm1\n"), 'vm1'))

    def test_refused_to_its_own_host_or_to_a_down_one(self):
        # Back to src after an evacuation to dst, with src down again.
        self.refused(DOWN + "  - evacuate: {server: vm1, host: dst}\n"
                     "  - start_compute: src\n"
                     "  - stop_compute: dst\n  - advance_clock: 61\n"
                     "  - evacuate: {server: vm1, host: dst}\n",
                     'evacuate.host', 'to its own host dst')
        self.refused(DOWN + "  - stop_compute: dst\n"
                     "  - evacuate: {server: vm1, host: dst}\n",
                     'evacuate.host', 'its compute is down')

    def test_refused_for_a_server_nova_does_not_evacuate(self):
        self.refused("  - evacuate: vm9\n", 'evacuate.server',
                     "no server 'vm9' to evacuate")
        self.refused("  - migrate: vm1\n" + DOWN + "  - evacuate: vm1\n",
                     'evacuate.server', 'it is waiting for confirm')
        self.refused(DOWN + "  - evacuate: {server: vm1, host: nowhere}\n",
                     'evacuate.host', "unknown host 'nowhere'")
        # force needs a host (test_steps_forced has its other checks).
        self.refused(DOWN + "  - evacuate: {server: vm1, force: true}\n",
                     'evacuate.force', 'forcing needs a host')
        self.refused(DOWN + "  - evacuate: {server: vm1, forced: true}\n",
                     'evacuate.forced', 'expected one of: server, host, '
                     'force, microversion')

    def test_an_expected_failure_skips_the_host_checks(self):
        # Nova's own refusal (400, compute still in use) is the test.
        loaded = _load("  - evacuate: {server: vm1, host: dst}\n"
                       "    error: Compute service of src is still in use\n"
                       "  - migrate: vm1\n")
        self.assertEqual('Compute service of src is still in use',
                         loaded.steps[1].error)

    def test_its_window_is_on_the_source_until_it_starts(self):
        snap = snapshot_mod.Snapshot
        before = snap({}, {'vm1': {'src': {'VCPU': 1, 'MEMORY_MB': 512}}},
                      {})
        migration = snapshot_mod.Migration(
            'migration(vm1)', 'vm1', 'u1', 'done', 'src', 'dst',
            'evacuation')
        after = snap({}, {}, {}, migrations={'migration(vm1)': migration})
        windows = evacuate.KIND.windows({'server': 'vm1'}, before, after,
                                        {'src'})
        self.assertEqual([('src', 'above', {'VCPU': 1, 'MEMORY_MB': 512})],
                         [(w.host, w.side, w.held) for w in windows])
        # Opened once: the next step sees the same evacuation.
        self.assertEqual([], evacuate.KIND.windows(
            {'server': 'vm1'}, after, after, {'src'}))
        # A start of the source reconciles it (its start-up periodic).
        start = _load(DOWN + "  - start_compute: src\n").steps[3]
        self.assertEqual({'src'}, start.unit.reconciles(start.args, set()))


class TestStartComputeGuests(testing.TestCase):

    def test_kept_is_the_default_and_gone_is_taken(self):
        loaded = _load("  - stop_compute: src\n"
                       "  - start_compute: {host: src, guests: gone}\n"
                       "  - stop_compute: src\n"
                       "  - start_compute: {host: src, guests: kept}\n"
                       "  - stop_compute: src\n"
                       "  - start_compute: src\n")
        self.assertEqual(
            [{'host': 'src', 'guests': 'gone'},
             {'host': 'src', 'guests': 'kept'}, {'host': 'src'}],
            [loaded.steps[i].args for i in (2, 4, 6)])
        self.assertEqual('start compute src (guests gone)',
                         loaded.steps[2].label)
        self.assertEqual('start compute src', loaded.steps[6].label)

    def test_restarts_with_or_without_the_hypervisor(self):
        calls = []

        class Cloud(object):
            def restart_compute(self, host, keep_hypervisor_state=True):
                calls.append((host, keep_hypervisor_state))

        loaded = _load("  - stop_compute: src\n"
                       "  - start_compute: {host: src, guests: gone}\n"
                       "  - stop_compute: src\n"
                       "  - start_compute: src\n")
        for step in (loaded.steps[2], loaded.steps[4]):
            step.unit.run(Cloud(), step.args)
        self.assertEqual([('src', False), ('src', True)], calls)

    def test_bad_guests_refused(self):
        exc = self.assertRaises(errors.ScenarioError, _load,
                                "  - stop_compute: src\n"
                                "  - start_compute: {host: src, "
                                "guests: lost}\n")
        self.assertIn('field "start_compute.guests"', str(exc))
        self.assertIn('kept, gone', str(exc))
        # Only a start can lose guests.
        exc = self.assertRaises(errors.ScenarioError, _load,
                                "  - stop_compute: {host: src, "
                                "guests: gone}\n")
        self.assertIn('stop_compute', str(exc))
        self.assertIn('guests', str(exc))


class TestRebuildLoader(testing.TestCase):

    def test_same_or_named_image_loads(self):
        loaded = _load("  - rebuild: vm1\n"
                       "  - rebuild: {server: vm1, image: numa2}\n"
                       "    error: NUMA topology cannot be changed\n")
        self.assertEqual(['rebuild vm1', 'rebuild vm1 from numa2'],
                         [step.label for step in loaded.steps[1:]])
        self.assertEqual({'status': 'ACTIVE'}, loaded.steps[1].unit.resting)

    def test_a_stopped_server_may_be_rebuilt_as_nova_allows(self):
        # Evacuated at 2.95, it is SHUTOFF.
        loaded = _load(DOWN + "  - evacuate: {server: vm1, host: dst}\n"
                              "  - rebuild: vm1\n"
                              "    error: progress\n")
        self.assertEqual('rebuild vm1', loaded.steps[4].label)

    def test_refusals(self):
        for body, field, fragment in (
                ("  - rebuild: {server: vm1, image: nope}\n",
                 'rebuild.image', "unknown image 'nope'; known: numa2"),
                ("  - rebuild: vm9\n", 'rebuild.server',
                 "no server 'vm9' to rebuild"),
                ("  - migrate: vm1\n  - rebuild: vm1\n", 'rebuild.server',
                 'waiting for confirm'),
                ("  - rebuild: {server: vm1, flavor: small}\n",
                 'rebuild.flavor', 'expected one of: server, image')):
            exc = self.assertRaises(errors.ScenarioError, _load, body)
            self.assertIn('field "%s"' % field, str(exc))
            self.assertIn(fragment, str(exc))
