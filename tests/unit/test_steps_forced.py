"""``force`` and ``microversion`` on live_migrate and evacuate: the loader.

Nova's API takes ``force`` (skip the scheduler, a host given) on live
migration from 2.30 and on evacuation from 2.29, until 2.67 (2.68 removed
it); before 2.95 an evacuated ACTIVE server stays ACTIVE. No Nova service
runs here.
"""

from tests.unit import refusals

PATH = 'forced.yaml'
HEAD = """\
name: forced moves
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""
DOWN = "  - stop_compute: src\n  - advance_clock: 61\n"


class TestForced(refusals.StepLoaderCase):

    PATH = PATH
    HEAD = HEAD

    def test_force_sends_the_newest_version_that_has_it(self):
        step = self.load('  - live_migrate: {server: vm1, host: dst, '
                         'force: true}\n').steps[1]
        self.assertEqual(('2.67', 'live migrate vm1 to dst (forced)'),
                         (step.args['microversion'], step.label))

    def test_no_force_no_version_the_newest(self):
        step = self.load(
            '  - live_migrate: {server: vm1, host: dst}\n').steps[1]
        self.assertNotIn('microversion', step.args)

    def test_force_needs_a_host(self):
        self.refused('  - live_migrate: {server: vm1, force: true}\n',
                     'live_migrate.force',
                     "Can't force to a non-provided destination")

    def test_force_is_gone_from_2_68(self):
        self.refused('  - live_migrate: {server: vm1, host: dst, force: '
                     'true, microversion: "2.68"}\n',
                     'live_migrate.microversion',
                     'from 2.30 to 2.67', 'not at 2.68')

    def test_force_came_with_2_30_for_live_migration(self):
        self.refused('  - live_migrate: {server: vm1, host: dst, force: '
                     'true, microversion: "2.29"}\n',
                     'live_migrate.microversion',
                     'from 2.30 to 2.67')

    def test_a_version_the_request_body_is_not_valid_at(self):
        # The harness sends block_migration: auto, valid from 2.25.
        self.refused('  - live_migrate: {server: vm1, microversion: "2.24"}'
                     '\n', 'live_migrate.microversion', 'outside',
                     '2.25 to 2.104')

    def test_not_a_version(self):
        for raw in ('2.x', '3.1', '2.67.1', 2.67):
            self.refused('  - live_migrate: {server: vm1, microversion: '
                         '%r}\n' % raw, 'live_migrate.microversion', '"2.N"')

    def test_force_is_true_or_false(self):
        self.refused('  - live_migrate: {server: vm1, host: dst, force: '
                     'yes please}\n', 'live_migrate.force', 'true or false')

    def test_evacuate_before_2_95_leaves_the_server_active(self):
        loaded = self.load(DOWN + '  - evacuate: {server: vm1, host: dst, '
                                  'force: true}\n'
                                  '  - live_migrate: {server: vm1, host: src}'
                                  '\n    error: is down\n')
        self.assertEqual('2.67', loaded.steps[3].args['microversion'])
        # At the newest it is SHUTOFF: a live migration is refused.
        self.refused(DOWN + '  - evacuate: {server: vm1, host: dst}\n'
                            '  - live_migrate: vm1\n', 'live_migrate.server',
                     'it is stopped')

    def test_force_came_with_2_29_for_evacuation(self):
        self.refused(DOWN + '  - evacuate: {server: vm1, host: dst, force: '
                            'true, microversion: "2.28"}\n',
                     'evacuate.microversion', 'outside', '2.29 to 2.104')
