"""``reconfigure: {config, restart?}``: the loader.

The whole cloud's options, checked as the scenario's ``config`` is (the
names and values against Nova's in ``harness.cloud.config``, before any
service starts); those the loader reads count from the step on. No Nova
service runs here.
"""

from tests.unit import refusals

PATH = 'reconfigure.yaml'
HEAD = """\
name: reconfigure
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
"""


class TestReconfigure(refusals.StepLoaderCase):

    PATH = PATH
    HEAD = HEAD

    def test_restarts_both_controllers_by_default(self):
        step = self.load('  - reconfigure: {config: {filter_scheduler: '
                         '{host_subset_size: 2}}}\n').steps[1]
        self.assertEqual(({'filter_scheduler': {'host_subset_size': 2}},
                          ('conductor', 'scheduler')),
                         (step.args['config'], step.args['restart']))
        self.assertEqual('reconfigure [filter_scheduler] host_subset_size '
                         'and restart conductor, scheduler', step.label)

    def test_restarts_what_it_names(self):
        step = self.load('  - reconfigure: {config: {DEFAULT: {'
                         'allow_resize_to_same_host: true}}, restart: []}\n'
                         ).steps[1]
        self.assertEqual((), step.args['restart'])

    def test_only_the_control_plane_restarts(self):
        self.refused('  - reconfigure: {config: {DEFAULT: {debug: true}}, '
                     'restart: [compute]}\n', 'reconfigure.restart[0]',
                     'conductor or scheduler')

    def test_no_options(self):
        self.refused('  - reconfigure: {config: {}}\n',
                     'reconfigure.config', 'at least one option')
        self.refused('  - reconfigure: {config: {DEFAULT: {}}}\n',
                     'reconfigure.config.DEFAULT', 'at least one option')

    def test_the_loaders_options_count_from_the_step_on(self):
        # service_down_time 600: 61 s after the stop, Nova does not see src
        # down yet, so an evacuation is refused by the loader.
        down = ('  - stop_compute: src\n  - advance_clock: 61\n'
                '  - evacuate: {server: vm1, host: dst}\n')
        self.load(down)
        self.refused('  - reconfigure: {config: {DEFAULT: '
                     '{service_down_time: 600}}}\n' + down,
                     'evacuate.server', 'not seen down')

    def test_a_loader_option_is_a_whole_number(self):
        self.refused('  - reconfigure: {config: {DEFAULT: '
                     '{service_down_time: soon}}}\n',
                     'reconfigure.config.DEFAULT.service_down_time')
