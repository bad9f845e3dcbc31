"""``inject: {before | after: point, check: {...}}``: the loader.

The expectations are a step's ``expect:`` keys, checked at the point; the
injection does nothing else there. No Nova service runs here.
"""

from tests.unit import refusals

PATH = 'points.yaml'
HEAD = """\
name: checks at a point
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""
MOVE = "  - live_migrate: {server: vm1, host: dst}\n"


class TestCheckAtPoint(refusals.StepLoaderCase):

    PATH = PATH
    HEAD = HEAD

    def load(self, body):
        # A later step passes the injections' points.
        return super().load(body + MOVE)

    def test_parsed_as_a_steps_expectations(self):
        step = self.load('  - inject:\n'
                         '      before: live_migration\n'
                         '      check: {allocations: {vm1: {dst: small}}}\n'
                         ).steps[1]
        # The flavor resolved to its resources, as under expect:.
        self.assertEqual({'allocations': {'vm1': {'dst': {
            'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}},
            step.args['check'])
        self.assertEqual('inject before live_migration: check allocations',
                         step.label)

    def test_an_unknown_key(self):
        self.refused('  - inject: {before: live_migration, check: '
                     '{allocation: {}}}\n', 'inject.check.allocation',
                     'unknown field')

    def test_a_bad_value_names_its_field(self):
        self.refused('  - inject: {before: live_migration, check: '
                     '{allocations: {vm1: {dst: huge}}}}\n',
                     'inject.check.allocations.vm1.dst', 'huge')

    def test_nothing_to_check(self):
        self.refused('  - inject: {before: live_migration, check: {}}\n',
                     'inject.check', 'at least one')

    def test_checks_and_nothing_else(self):
        self.refused('  - inject: {before: live_migration, run: '
                     'update_available_resource, on: source, check: '
                     '{usages: {}}}\n', 'inject.run', 'nothing else')

    def test_a_point_no_later_step_passes(self):
        # As for any injection (check_points).
        self.refused('  - inject: {before: finish_resize, check: '
                     '{usages: {}}}\n', 'before',
                     "no later step passes race point 'finish_resize'")
