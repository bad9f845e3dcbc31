"""Exported tests assert that every injection and fault they armed fired.

The harness fails a run whose injection nothing passed, or whose fault
Nova never met (``runner``'s ``check_fired``, after the last step): an
exported test does too, with ``assertInjectionsFired`` and
``assertFaultsFired`` after its last step.
"""

import ast

import testtools

from tests.unit import test_export

INJECT = ('- boot: {server: vm1, flavor: small, host: src}\n'
          '- inject: {before: resize_instance, run: '
          'update_available_resource, on: src}\n'
          '- resize: {server: vm1, flavor: large}\n'
          '  expect: {servers: {vm1: VERIFY_RESIZE}}')

FAULT = ('- fault: {host: src, method: spawn}\n'
         '- boot: {server: vm1, flavor: small, host: src}\n'
         '  error: did not reach its resting state\n'
         '  expect: {servers: {vm1: ERROR}}')

PLACEMENT_FAULT = ('- boot: {server: vm1, flavor: small, host: src}\n'
                   "- fault: {placement: 'PUT /allocations/*', times: 2}\n"
                   '- resize: {server: vm1, flavor: large}')


def _helpers(source, names):
    """The exported class's methods ``names``, as plain functions."""
    module = ast.parse(source)
    found = {}
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            code = compile(ast.Module(body=[node], type_ignores=[]),
                           '<exported>', 'exec')
            namespace = {}
            exec(code, namespace)
            found[node.name] = namespace[node.name]
    return found


class InjectionsFiredTest(test_export.ExportTestCase):

    def test_asserted_after_the_last_step(self):
        source = self.export(INJECT)
        method = source[source.index('    def test_the_scenario'):]
        # The method's last statement, after the last step's own
        # assertions: where the harness checks it.
        self.assertTrue(method.rstrip().endswith(
            "self.assertServer('vm1', status='VERIFY_RESIZE')\n\n"
            "        self.assertInjectionsFired()"), method)
        self.assertEqual(1, method.count('self.assertInjectionsFired()'))

    def test_not_asserted_without_injections(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        self.assertNotIn('assertInjectionsFired', source)

    def test_fails_on_an_injection_nothing_passed(self):
        helpers = _helpers(self.export(INJECT),
                           ('_fire', 'assertInjectionsFired'))
        ran = []

        class Exported(testtools.TestCase):
            _fire = helpers['_fire']
            assertInjectionsFired = helpers['assertInjectionsFired']

            def test(self):
                pass

        case = Exported('test')
        # Armed as _arm arms it: the action at its (when, point), for
        # any server's pass on any host.
        case._injections = {('before', 'resize_instance'): [
            (None, None, lambda manager, passed: ran.append(manager))]}
        error = self.assertRaises(AssertionError, case.assertInjectionsFired)
        self.assertIn("'before resize_instance'", str(error))
        self.assertIn('injections that never fired', str(error))
        # A pass at another point leaves it armed.
        case._fire('after', 'resize_instance', 'src manager', [])
        self.assertRaises(AssertionError, case.assertInjectionsFired)
        # Passed once, it fired: nothing is left.
        case._fire('before', 'resize_instance', 'src manager', [])
        self.assertEqual(['src manager'], ran)
        case.assertInjectionsFired()


class FaultsFiredTest(test_export.ExportTestCase):

    def test_asserted_after_the_last_step(self):
        for steps in (FAULT, PLACEMENT_FAULT):
            source = self.export(steps)
            method = source[source.index('    def test_the_scenario'):]
            self.assertTrue(method.rstrip().endswith(
                '\n\n        self.assertFaultsFired()'), method)
            self.assertNotIn('assertInjectionsFired', source)
            self.assertIn('        self._faults = []\n', source)

    def test_each_fault_step_registers_what_it_armed(self):
        source = self.export(FAULT)
        self.assertIn("            self._faults.append(('%s on %s' % "
                      "(method, host), left, times))\n", source)
        source = self.export(PLACEMENT_FAULT)
        self.assertIn("        self._faults.append(('Placement %s on %s' % "
                      "(status, request),\n"
                      "                             left, times))\n", source)

    def test_not_asserted_for_a_failing_driver(self):
        # A host whose driver always fails (fail:) is no step's fault:
        # the harness does not ask that Nova meets it.
        head = test_export.HEAD.replace(
            'src: {driver: fake}',
            'src: {driver: fake, fail: confirm_migration}')
        source = self.export('- boot: {server: vm1, flavor: small, '
                             'host: dst}', head=head)
        self.assertIn("self._fault('src', 'confirm_migration', None)", source)
        self.assertIn('        if times is not None:\n', source)
        self.assertNotIn('self.assertFaultsFired()', source)

    def test_not_asserted_without_faults(self):
        source = self.export('- boot: {server: vm1, flavor: small}')
        self.assertNotIn('FaultsFired', source)
        self.assertNotIn('self._faults', source)

    def test_fails_on_a_fault_nova_never_met(self):
        helpers = _helpers(self.export(FAULT), ('assertFaultsFired',))

        class Exported(testtools.TestCase):
            assertFaultsFired = helpers['assertFaultsFired']

            def test(self):
                pass

        case = Exported('test')
        # As _fault and _placement_fault record them: calls left of times.
        left, placement_left = [1], [2]
        case._faults = [('spawn on src', left, 1),
                        ('Placement 409 on PUT /allocations/*',
                         placement_left, 2)]
        error = self.assertRaises(AssertionError, case.assertFaultsFired)
        self.assertIn("'Placement 409 on PUT /allocations/*'", str(error))
        self.assertIn("'spawn on src'", str(error))
        self.assertIn('faults Nova never met', str(error))
        # Met once each (not every time armed): fired, as the harness's.
        left[0] = 0
        placement_left[0] = 1
        case.assertFaultsFired()
