"""An injection that fails after its step's operation last looked fails
that step, wherever it surfaces.

A point the step's casts pass after ``_Steps.operate`` last asked
(``race.check``), while the snapshot is read or the cloud settles before
a check's trial, can fire an injection that cannot run there (its role
names no host: "no migration is in flight for this point"). The first
check that runs Nova then meets it: ``run_task``'s ``race.check`` inside
the periodic-idempotence check's trial raised it from inside the check,
and the run ended with a traceback (under the explorer's eventlet
nesting, a forked child died of it). The runner makes it the step's
failure instead, as it does for one the operation saw.

The check here is the periodic-idempotence check's shape: a periodic in
a trial; the failure is the one race.py notes for such an injection,
left pending as the cast's passage leaves it.
"""

from harness.core import errors
from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod
from harness.runners import runner
from harness import testing

RESIZE = """
name: a resize whose armed periodic failed after the operation looked
hosts:
  src: {driver: fake}
  dst: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
  - resize: {server: vm1, flavor: large}
  - confirm: vm1
"""
INJECTION = ('before scheduler.update_instance_info: '
             'update_available_resource on source')
WHY = 'no migration is in flight for this point'


class _PeriodicInATrial(object):
    """A check that runs a periodic in a trial.

    After the resize, an injection's failure is pending when it does.
    """

    def __init__(self):
        self.after = []

    def __call__(self, cloud, step, snap, timeline, scenario):
        self.after.append(step.kind)
        if step.kind == 'resize':
            cloud.race.failures.append((
                INJECTION, 'before scheduler.update_instance_info on -',
                errors.InjectionFailed(WHY)))
        with cloud.trial():
            cloud.run_periodic('update_available_resource', 'src')
        return []


class TestLateInjectionFailure(testing.TestCase):

    def _scenario(self):
        return scenario_mod.parse(scenario_mod.safe_load(RESIZE), 'late')

    def test_it_fails_its_step_and_the_run_goes_on(self):
        check = _PeriodicInATrial()
        timeline = runner.run(self._scenario(), test_id=self.id(),
                              checks=[check], keep_going=True)
        # Every step ran and was checked: the error did not end the run.
        self.assertEqual(['boot', 'resize', 'confirm'], check.after)
        resize = timeline.entries[2]
        self.assertEqual([(problems_mod.STEP_FAILED, 'InjectionFailed')],
                         [(p.check, p.actual) for p in resize.problems])
        self.assertIn(WHY, resize.problems[0].text)
        self.assertEqual([], timeline.entries[3].problems)

    def test_without_keep_going_the_step_fails(self):
        error = self.assertRaises(
            errors.ScenarioFailed, runner.run, self._scenario(),
            test_id=self.id(), checks=[_PeriodicInATrial()])
        self.assertEqual(2, error.step.index)
        self.assertIn(WHY, str(error))
