"""``fault`` and ``action_events``: why Nova failed a server, as data.

Parsing (one ScenarioError naming the file, the step and the field) and
the verdicts on snapshots built from raw records as the reader makes
them (``snapshot.failure_reasons``); no Nova.
"""

import traceback

from harness.core.checks.expect import action_events
from harness.core.checks.expect import fault
from harness.core import errors
from harness.core import scenario
from harness.core import snapshot
from harness import testing
from tests.unit import test_scenario_loader as loader

HEAD = loader.HEAD + ('  - boot: {server: vm2, flavor: small, host: host2}\n'
                      '  - resize: {server: vm1, flavor: large}\n')


def _traceback(exc):
    try:
        raise exc
    except Exception as caught:
        return ''.join(traceback.format_exception(
            type(caught), caught, caught.__traceback__))


class NoValidHost(Exception):
    pass


def _snap(faults=(), actions=()):
    raw = {'resource_providers': [], 'allocations': {}, 'faults':
           list(faults), 'actions': list(actions)}
    return snapshot.Snapshot.from_raw(raw, {'u1': 'vm1', 'u2': 'vm2'})


FAULT = {'instance_uuid': 'u1', 'code': 500, 'host': 'host1',
         'message': 'No valid host was found. ',
         'exception': 'nova.exception.NoValidHost'}
CREATE = {'instance_uuid': 'u1', 'action': 'create', 'message': 'Error',
          'events': [{'event': 'conductor_schedule_and_build_instances',
                      'result': 'Error', 'host': 'host1',
                      'details': 'No valid host was found. '}]}


def _step(expect):
    """The last step of HEAD with ``expect``, parsed."""
    doc = scenario.safe_load(HEAD)
    doc['steps'][-1]['expect'] = scenario.safe_load(expect)
    return scenario.parse(doc, 'example.yaml').steps[-1].expect


def _assert_refused(test, cases):
    """Each ``(expect, field, fragment)``: one error naming the field."""
    for expect, field, fragment in cases:
        error = test.assertRaises(errors.ScenarioError, _step, expect)
        test.assertIn('example.yaml, step 3, field "%s"' % field,
                      str(error), expect)
        test.assertIn(fragment, str(error), expect)


class TestExceptionClass(testing.TestCase):

    def test_the_last_line_of_a_traceback_names_the_class(self):
        text = _traceback(NoValidHost('No valid host was found. '))
        self.assertEqual(__name__ + '.NoValidHost',
                         snapshot.exception_class(text))

    def test_a_builtin_exception_has_no_module(self):
        self.assertEqual('KeyError',
                         snapshot.exception_class(_traceback(KeyError('x'))))

    def test_no_traceback_no_class(self):
        self.assertIsNone(snapshot.exception_class(''))
        self.assertIsNone(snapshot.exception_class(None))
        # Frames only (an event's traceback: serialize_args's format_tb).
        self.assertIsNone(snapshot.exception_class(
            '  File "x.py", line 1, in f\n    g()\n'))


class TestFault(testing.TestCase):

    def check(self, expect, snap):
        return fault.CHECK.check(_step(expect)['fault'], snap, None)

    def test_a_matching_fault_holds(self):
        snap = _snap([FAULT])
        self.assertEqual([], self.check(
            'fault: {vm1: {message: "No valid host*", code: 500, '
            'exception: NoValidHost, host: host1}}', snap))
        self.assertEqual([], self.check(
            'fault: {vm1: {exception: nova.exception.NoValidHost}}', snap))

    def test_each_field_that_differs_is_named(self):
        problems = self.check(
            'fault: {vm1: {message: "Timed out*", code: 400, '
            'exception: NoValidHost}}', _snap([FAULT]))
        self.assertEqual(1, len(problems))
        self.assertEqual(('fault', 'vm1'),
                         (problems[0].check, problems[0].subject))
        self.assertIn('message, code differ', str(problems[0]))
        self.assertIn("got message 'No valid host was found. '",
                      str(problems[0]))

    def test_a_class_is_not_a_prefix(self):
        self.assertEqual(1, len(self.check(
            'fault: {vm1: {exception: NoValid}}', _snap([FAULT]))))

    def test_null_says_no_fault(self):
        self.assertEqual([], self.check('fault: {vm2: null}',
                                        _snap([FAULT])))
        problems = self.check('fault: {vm1: null}', _snap([FAULT]))
        self.assertIn('fault of vm1: expected no fault, got message',
                      str(problems[0]))
        problems = self.check('fault: {vm1: {code: 500}}', _snap())
        self.assertIn('got no fault', str(problems[0]))

    def test_bad_input_names_the_field(self):
        _assert_refused(self, (
            ('fault: {vm9: null}', 'expect.fault.vm9', 'unknown server'),
            ('fault: {vm1: {}}', 'expect.fault.vm1',
             'name at least one of'),
            ('fault: {vm1: {reason: x}}', 'expect.fault.vm1.reason',
             'unknown field'),
            ('fault: {vm1: {code: "500"}}', 'expect.fault.vm1.code',
             'expected a whole number'),
            ('fault: {vm1: {code: 42}}', 'expect.fault.vm1.code',
             'must be at least 100'),
            ('fault: {vm1: {message: [x]}}', 'expect.fault.vm1.message',
             'expected a name'),
            ('fault: {vm1: {host: nowhere}}', 'expect.fault.vm1.host',
             'unknown host')))


class TestActionEvents(testing.TestCase):

    def check(self, expect, snap):
        return action_events.CHECK.check(_step(expect)['action_events'],
                                         snap, None)

    def test_an_event_of_the_action_matches(self):
        snap = _snap(actions=[CREATE])
        self.assertEqual([], self.check(
            'action_events: {vm1: {action: create, event: '
            'conductor_schedule_and_build_instances, result: Error, '
            'details: "No valid host*", host: host1}}', snap))
        self.assertEqual([], self.check(
            'action_events: {vm1: [{result: Error}, {host: host1}]}', snap))

    def test_one_event_must_match_every_field(self):
        snap = _snap(actions=[CREATE, {
            'instance_uuid': 'u1', 'action': 'create', 'events': [
                {'event': 'compute__do_build_and_run_instance',
                 'result': 'Success', 'host': 'host2', 'details': None}]}])
        # The latest create only: its event succeeded.
        problems = self.check(
            'action_events: {vm1: {action: create, result: Error}}', snap)
        self.assertEqual(1, len(problems))
        self.assertIn("vm1: no event action 'create', result 'Error'; its "
                      "actions: create: conductor_schedule_and_build_"
                      "instances Error 'No valid host was found. '; create: "
                      "compute__do_build_and_run_instance Success",
                      str(problems[0]))
        # Any action: the first create's event.
        self.assertEqual([], self.check(
            'action_events: {vm1: {result: Error}}', snap))
        self.assertEqual(1, len(self.check(
            'action_events: {vm1: {result: Success, host: host1}}', snap)))

    def test_a_server_without_actions(self):
        problems = self.check('action_events: {vm2: {action: create}}',
                              _snap(actions=[CREATE]))
        self.assertIn("its actions: none", str(problems[0]))

    def test_bad_input_names_the_field(self):
        _assert_refused(self, (
            ('action_events: {vm1: {result: Failed}}',
             'expect.action_events.vm1.result',
             'expected one of Success, Error'),
            ('action_events: {vm1: [{event: x}, {when: y}]}',
             'expect.action_events.vm1.2.when', 'unknown field'),
            ('action_events: {vm1: []}', 'expect.action_events.vm1',
             'list at least one event'),
            ('action_events: {vm1: {}}', 'expect.action_events.vm1',
             'name at least one of'),
            ('action_events: {vm1: {host: h9}}',
             'expect.action_events.vm1.host', 'unknown host')))


class TestFailureReasons(testing.TestCase):

    def test_records_by_server_name(self):
        faults, actions = snapshot.failure_reasons(
            {'faults': [FAULT, dict(FAULT, instance_uuid='u9')],
             'actions': [CREATE]}, {'u1': 'vm1'})
        self.assertEqual(['u9', 'vm1'], sorted(faults))
        self.assertEqual(snapshot.Fault('No valid host was found. ', 500,
                                        'nova.exception.NoValidHost',
                                        'host1'), faults['vm1'])
        self.assertEqual(('create',), tuple(
            a.action for a in actions['vm1']))
        self.assertEqual('Error', actions['vm1'][0].events[0].result)

    def test_a_snapshot_without_the_records_has_none(self):
        snap = snapshot.Snapshot.from_raw(
            {'resource_providers': [], 'allocations': {}}, {})
        self.assertEqual(({}, {}), (snap.faults, snap.actions))
