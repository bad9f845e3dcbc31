"""``inject: {do: {delete_service: host | role}, refused: bool}``.

A compute service deleted at a race point (``harness.core.steps.inject``,
``harness.cloud.interject``): what the loader takes, what it refuses
(each refusal names the field), and what it counts deleted. No Nova
service runs here.
"""

from harness.core import names
from harness.core import scenario
from harness.core import steps
from harness import testing

from tests.unit import refusals

PATH = 'service_delete_points.yaml'
HEAD = """\
name: a service deleted at a point
hosts:
  src: {driver: fake}
  dst: {driver: fake}
  spare: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""
MOVE = "  - migrate: {server: vm1, host: dst}\n"


def _load(body):
    return scenario.load_file(PATH, HEAD + body)[1][0]


class TestServiceDeleteAtAPoint(testing.TestCase):

    def refused(self, body, field, *fragments):
        return refusals.refused(self, PATH, field, fragments, _load,
                                body)

    # -- what the loader takes ---------------------------------------------

    def test_a_role_whose_delete_is_refused(self):
        loaded = _load(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: dest}, refused: true}\n"
            + MOVE)
        step = loaded.steps[1]
        self.assertEqual(('delete_service', 'dest'), step.args['do'])
        self.assertIs(True, step.args['refused'])
        self.assertEqual(
            'inject before finish_resize: delete_service dest (refused)',
            step.label)
        # A refused delete is no server's delete: no window, not tied to
        # the move it lands in.
        self.assertFalse(hasattr(loaded.steps[2], 'interjected'))
        self.assertNotIn('flavors', step.args)

    def test_a_stopped_hosts_delete_goes_through_and_counts(self):
        loaded = _load(
            "  - stop_compute: spare\n"
            "  - inject: {before: resize_instance,\n"
            "             do: {delete_service: spare}, refused: false}\n"
            + MOVE)
        self.assertEqual('inject before resize_instance: delete_service '
                         'spare (deleted)', loaded.steps[2].label)
        self.assertIs(False, loaded.steps[2].args['refused'])

    def test_a_named_running_host_may_be_refused(self):
        loaded = _load(
            "  - inject: {after: prep_resize,\n"
            "             do: {delete_service: src}, refused: true}\n"
            + MOVE)
        self.assertEqual(('delete_service', 'src'), loaded.steps[1].args['do'])

    def test_the_request_passes_no_point_of_its_own(self):
        # Nova's API deletes within the request: no cast, no RPC.
        self.assertEqual('delete_service',
                         names.INTERJECTIONS['delete_service'])
        self.assertEqual(frozenset(), steps.get('delete_service').points)

    # -- what it refuses -----------------------------------------------------

    def test_refused_must_be_said(self):
        self.refused(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: dest}}\n" + MOVE,
            'inject.refused', 'say whether the API refuses')

    def test_refused_is_a_bool(self):
        self.refused(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: dest}, refused: 'yes'}\n"
            + MOVE,
            'inject.refused', "true or false, not 'yes'")

    def test_refused_only_for_a_hosts_request(self):
        for inject in ("{before: finish_resize, do: {delete: vm1}, "
                       "refused: true}",
                       "{before: finish_resize, run: "
                       "update_available_resource, on: dest, refused: true}",
                       "{before: finish_resize, restart: dest, "
                       "refused: true}"):
            self.refused("  - inject: %s\n" % inject + MOVE,
                         'inject.refused', 'only a request for a host')

    def test_unknown_host(self):
        self.refused(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: nowhere}, refused: true}\n"
            + MOVE,
            'inject.do.delete_service', 'nowhere')

    def test_a_role_whose_delete_goes_through(self):
        self.refused(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: dest}, refused: false}\n"
            + MOVE,
            'inject.do.delete_service', 'name the host')

    def test_a_running_hosts_delete_that_goes_through(self):
        self.refused(
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: spare}, refused: false}\n"
            + MOVE,
            'inject.do.delete_service', "compute 'spare' is running")

    def test_a_delete_that_goes_through_is_sent_once(self):
        self.refused(
            "  - stop_compute: spare\n"
            "  - inject: {before: finish_resize, times: 2,\n"
            "             do: {delete_service: spare}, refused: false}\n"
            + MOVE,
            'inject.times', 'deleted once')

    def test_a_deleted_service_is_not_deleted_again(self):
        self.refused(
            "  - stop_compute: spare\n"
            "  - inject: {before: resize_instance,\n"
            "             do: {delete_service: spare}, refused: false}\n"
            "  - inject: {before: finish_resize,\n"
            "             do: {delete_service: spare}, refused: true}\n"
            + MOVE,
            'inject.do.delete_service', "'spare' was deleted")

    def test_the_loader_counts_it_deleted_for_later_steps(self):
        self.refused(
            "  - stop_compute: spare\n"
            "  - inject: {before: resize_instance,\n"
            "             do: {delete_service: spare}, refused: false}\n"
            + MOVE
            + "  - delete_service: spare\n",
            'delete_service.host', 'was deleted')

    def test_a_point_no_later_step_passes(self):
        self.refused(
            "  - inject: {before: live_migration,\n"
            "             do: {delete_service: dest}, refused: true}\n"
            + MOVE,
            'before', 'no later step passes')
