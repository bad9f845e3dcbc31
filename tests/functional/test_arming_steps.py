"""No checks after a step that only arms; and such a step writes nothing.

An ``inject`` or a ``fault`` step arms what a later step sets off
(``StepKind.arms``): the cloud after it is the cloud the checks saw after
the step before, so the runner runs no checks after it (the explorer's
replays put one or two in before a move step: their checks were a fifth
of a replay's time). The runner proves the premise each time: Nova
writing to its records or Placement while such a step runs fails the
step.
"""

import fixtures

from harness.core import scenario as scenario_mod
from harness.core import steps
from harness.core.steps import inject as inject_step
from harness.runners import runner
from harness import testing

ARMED = """
name: a live migration with a periodic and a fault armed before it
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - fault: {host: dst, method: pre_live_migration}
  - inject: {before: pre_live_migration, run: update_available_resource,
             on: dest}
  - live_migrate: {server: vm1, host: dst}
    error: did not reach its resting state
"""


class _Calls(object):
    """A check that notes the steps it was called after; finds nothing."""

    def __init__(self):
        self.after = []

    def __call__(self, cloud, step, snap, timeline, scenario):
        self.after.append(step.kind)
        return []


class TestArmingSteps(testing.TestCase):

    def _scenario(self):
        return scenario_mod.parse(scenario_mod.safe_load(ARMED), 'armed')

    def test_only_inject_and_fault_arm(self):
        self.assertEqual(['fault', 'inject'], sorted(
            name for name in steps.names() if steps.get(name).arms))

    def test_no_checks_after_an_arming_step(self):
        calls = _Calls()
        timeline = runner.run(self._scenario(), test_id=self.id(),
                              checks=[calls])
        # The armed periodic and fault both went off in the live
        # migration (a fault or an injection that never fires fails the
        # run), and each of the four steps has its entry.
        self.assertEqual(['boot', 'live_migrate'], calls.after)
        self.assertEqual([0, 1, 2, 3, 4],
                         [entry.index for entry in timeline])

    def test_an_arming_step_that_writes_fails(self):
        real = inject_step.Inject.run

        def run_and_write(self, cloud, args):
            # A periodic saves the compute node record: a write.
            cloud.run_periodic('update_available_resource', 'src')
            return real(self, cloud, args)

        self.useFixture(fixtures.MonkeyPatch(
            'harness.core.steps.inject.Inject.run', run_and_write))
        timeline = runner.run(self._scenario(), test_id=self.id(),
                              keep_going=True)
        inject = [entry for entry in timeline
                  if entry.label.startswith('inject')][0]
        self.assertEqual(1, len(inject.problems))
        self.assertIn('only arms, but Nova wrote to its records or '
                      'Placement', str(inject.problems[0]))
