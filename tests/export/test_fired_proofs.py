"""An exported test fails where an injection or fault it armed never fired.

The harness fails a run whose injection nothing passed, or whose fault
Nova never met, at its last step (``runner``'s ``check_fired``); the
exported test asserts the same after its last step
(``assertInjectionsFired``, ``assertFaultsFired``). Proved on scenarios
that arm one for what never comes: run with Nova's runner, the exported
test fails at the step where the harness's run of the scenario fails.
"""

import os

from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.export import nova_test
from harness.runners import runner
from tests.export import test_nova_proofs
from tests.unit import test_export

# A periodic armed before a confirm that never comes.
INJECTION = test_export.HEAD + '''\
      - boot: {server: vm1, flavor: small, host: src}
      # A delete confirms a resize waiting for it: not this server's.
      - inject: {before: confirm_resize, run: update_available_resource,
                 on: src}
      - delete: vm1
        expect: {allocations: {}}
'''

# A spawn fault armed on a host no guest goes to.
FAULT = test_export.HEAD + '''\
      - fault: {host: dst, method: spawn}
      - boot: {server: vm1, flavor: small, host: src}
        expect: {servers: {vm1: ACTIVE}}
'''


class UnfiredProofs(test_nova_proofs._NovaTestRuns):

    def prove(self, text, unfired):
        path = os.path.join(self.tmp, 'unfired.yaml')
        with open(path, 'w') as f:
            f.write(text)
        scenario, = scenario_mod.load(path)
        exc = self.assertRaises(errors.ScenarioFailed, runner.run, scenario,
                                test_id=self.id())
        self.assertIn('never fired', str(exc))
        self.assertEqual(len(scenario.steps), exc.step.index)
        source = nova_test.export(path)
        module = 'test_unfired'
        code, output = self.run_nova_test(module, source, False)
        self.assertEqual(1, code, output[-3000:])
        self.assertIn(unfired, output)
        method = nova_test.method_names([scenario.name])[scenario.name]
        self.assertEqual(exc.step.index, test_nova_proofs.failing_step(
            source, module, output, method + '\n'))

    def test_an_injection_nothing_passed(self):
        self.prove(INJECTION, "['before confirm_resize']: injections that "
                   "never fired")

    def test_a_fault_nova_never_met(self):
        self.prove(FAULT, "['spawn on dst']: faults Nova never met")
