"""Exported tests assert that every injection they armed fired.

The harness fails a run whose injection nothing passed (``runner``'s
``check_fired``, after the last step): an exported test does too, with
``assertInjectionsFired`` after its last step.
"""

import ast

import testtools

from tests.unit import test_export

INJECT = ('- boot: {server: vm1, flavor: small, host: src}\n'
          '- inject: {before: resize_instance, run: '
          'update_available_resource, on: src}\n'
          '- resize: {server: vm1, flavor: large}\n'
          '  expect: {servers: {vm1: VERIFY_RESIZE}}')


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
        # Armed as _arm arms it: the action at its (when, point).
        case._injections = {('before', 'resize_instance'): [
            lambda manager, passed: ran.append(manager)]}
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
