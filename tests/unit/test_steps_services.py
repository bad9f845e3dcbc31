"""Compute service steps in scenario files: what the loader takes and refuses.

``disable_compute``, ``enable_compute``, ``force_down``, ``force_up`` and
``delete_service`` (``harness.core.steps.services``) are checked against
the service state the steps so far leave, before any service starts. No
Nova service runs here.
"""

from harness.core import scenario
from harness.core import steps
from harness import testing

from tests.unit import refusals

PATH = 'services.yaml'
HEAD = """\
name: compute services
hosts:
  h1: {driver: fake}
  h2: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
"""


def _load(body):
    return scenario.load_file(PATH, HEAD + body)[1][0]


class TestServiceSteps(testing.TestCase):

    def refused(self, body, field, *fragments):
        return refusals.refused(self, PATH, field, fragments, _load,
                                body)

    # -- what the loader takes ---------------------------------------------

    def test_a_full_cycle_loads(self):
        loaded = _load(
            "  - disable_compute: {host: h1, reason: maintenance}\n"
            "  - enable_compute: h1\n"
            "  - force_down: {host: h2}\n"
            "  - force_up: h2\n"
            "  - stop_compute: h2\n"
            "  - delete_service: h2\n")
        self.assertEqual(
            ['disable compute h1', 'enable compute h1', 'force down h2',
             'force up h2', 'stop compute h2', 'delete service h2'],
            [step.label for step in loaded.steps])
        self.assertEqual({'host': 'h1', 'reason': 'maintenance'},
                         loaded.steps[0].args)
        self.assertEqual({'host': 'h2'}, loaded.steps[2].args)

    def test_a_refused_delete_may_be_expected_and_leaves_the_service(self):
        loaded = _load(
            "  - boot: {server: vm1, flavor: small, host: h1}\n"
            "  - stop_compute: h1\n"
            "  - delete_service: h1\n"
            "    error: hosting instances\n"
            "  - start_compute: h1\n"
            "  - delete: vm1\n"
            "  - stop_compute: h1\n"
            "  - delete_service: h1\n")
        self.assertEqual('hosting instances', loaded.steps[2].error)

    def test_disabling_a_stopped_compute_seen_down_is_taken(self):
        _load("  - stop_compute: h1\n"
              "  - force_down: h1\n"
              "  - disable_compute: h1\n"
              "  - force_up: h1\n"
              "  - start_compute: h1\n"
              "  - enable_compute: h1\n")
        _load("  - stop_compute: h1\n"
              "  - advance_clock: 61\n"
              "  - disable_compute: h1\n")

    def test_they_are_operations_with_no_moves(self):
        # Operations only so that a step may say error:; the explorer
        # injects at the points of ``moves`` kinds only.
        for name in ('disable_compute', 'enable_compute', 'force_down',
                     'force_up', 'delete_service'):
            unit = steps.get(name)
            self.assertTrue(unit.operation, name)
            self.assertFalse(unit.moves, name)
        self.assertEqual({'set_host_enabled'},
                         set(steps.get('disable_compute').points))
        self.assertEqual(frozenset(), steps.get('delete_service').points)

    # -- refusals -------------------------------------------------------------

    def test_unknown_host(self):
        self.refused("  - disable_compute: h3\n", 'disable_compute.host',
                     'unknown host', 'h1, h2')

    def test_unknown_field(self):
        self.refused("  - force_down: {host: h1, reason: x}\n",
                     'force_down.reason', 'unknown field')

    def test_reason_must_be_text(self):
        self.refused("  - disable_compute: {host: h1, reason: [x]}\n",
                     'disable_compute.reason', 'expected a name')

    def test_disabling_a_disabled_compute(self):
        self.refused("  - disable_compute: h1\n"
                     "  - disable_compute: h1\n",
                     'disable_compute.host', 'already disabled')

    def test_enabling_an_enabled_compute(self):
        self.refused("  - enable_compute: h1\n", 'enable_compute.host',
                     'enabled already')

    def test_forcing_down_twice(self):
        self.refused("  - force_down: h1\n"
                     "  - force_down: h1\n",
                     'force_down.host', 'already forced down')

    def test_forcing_up_a_compute_not_forced_down(self):
        self.refused("  - force_up: h1\n", 'force_up.host',
                     'not forced down')

    def test_deleting_a_service_twice(self):
        self.refused("  - stop_compute: h1\n"
                     "  - delete_service: h1\n"
                     "  - delete_service: h1\n",
                     'delete_service.host', 'was deleted')

    def test_deleting_the_service_of_a_running_compute(self):
        self.refused("  - delete_service: h1\n", 'delete_service.host',
                     'is running; stop it first')

    def test_anything_on_a_deleted_service(self):
        for kind in ('disable_compute', 'enable_compute', 'force_down',
                     'force_up'):
            self.refused("  - stop_compute: h1\n"
                         "  - delete_service: h1\n"
                         "  - %s: h1\n" % kind,
                         '%s.host' % kind, 'was deleted')

    def test_disabling_a_stopped_compute_nova_sees_up(self):
        # The API would call set_host_enabled on it and wait for the RPC
        # timeout.
        for kind in ('disable_compute', 'enable_compute'):
            before = ("  - disable_compute: h1\n"
                      if kind == 'enable_compute' else '')
            self.refused(before + "  - stop_compute: h1\n"
                         "  - %s: h1\n" % kind,
                         '%s.host' % kind, 'still sees it up',
                         'RPC timeout')

    def test_an_expected_failure_changes_no_state(self):
        # The refused disable leaves h1 enabled: enabling it is refused.
        self.refused("  - disable_compute: h1\n"
                     "    error: whatever\n"
                     "  - enable_compute: h1\n",
                     'enable_compute.host', 'enabled already')
