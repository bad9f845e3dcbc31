"""``logs``: Nova's log records of a step, per service, as expectations.

Parsing (one ScenarioError naming the file, the step and the field), the
verdicts on snapshots holding records, and ``nova_logs.StepLogs``, which
gives a run's steps their records; no Nova.
"""

import logging

from harness.core.checks.expect import logs
from harness.core import errors
from harness.core import scenario
from harness.core import snapshot
from harness.runners import nova_logs
from harness import testing
from tests.unit import test_scenario_loader as loader


def _scenario(expect, first=None):
    """HEAD with ``expect`` on its step (and ``first`` on a step before)."""
    doc = scenario.safe_load(loader.HEAD)
    doc['steps'].append({'delete': 'vm1'})
    doc['steps'][-1]['expect'] = scenario.safe_load(expect)
    if first is not None:
        doc['steps'][0]['expect'] = scenario.safe_load(first)
    return scenario.parse(doc, 'logs.yaml')


def _record(service, level, message, logger='nova.compute.manager'):
    return snapshot.LogRecord(service, level, logger, message)


def _snap(*records):
    snap = snapshot.Snapshot({}, {}, {})
    snap.logs = records
    return snap


RECORDS = (
    _record('nova-scheduler', logging.INFO,
            'Got no allocation candidates from the Placement API.'),
    _record('nova-conductor', logging.ERROR, 'Failed to schedule instances',
            'nova.conductor.manager'),
    _record('nova-compute on host2', logging.WARNING,
            'Instance 1234 not found on the hypervisor'),
)


class TestLogsKey(testing.TestCase):

    def check(self, expect, *records):
        want = _scenario(expect).steps[-1].expect['logs']
        return logs.CHECK.check(want, _snap(*records), None)

    def test_present_and_absent_hold(self):
        self.assertEqual([], self.check(
            'logs: {scheduler: {present: {level: INFO, pattern: "^Got no"}, '
            'absent: {level: WARNING}}, '
            'nova-conductor: {present: {level: ERROR}}, '
            '"nova-compute on host1": {absent: {level: DEBUG}}, '
            'nova-compute: {present: {level: WARNING, '
            'pattern: "Instance \\\\d+ not found"}}}', *RECORDS))

    def test_a_level_takes_the_levels_above_it(self):
        self.assertEqual([], self.check(
            'logs: {any: {present: {level: WARNING, pattern: schedule}}}',
            *RECORDS))
        # An INFO record is below WARNING.
        self.assertEqual(1, len(self.check(
            'logs: {any: {present: {level: WARNING, pattern: Placement}}}',
            *RECORDS)))

    def test_a_record_that_should_be_absent(self):
        problems = self.check(
            'logs: {conductor: {absent: {level: WARNING}}, '
            'scheduler: {absent: {level: INFO}}}', *RECORDS)
        self.assertEqual(
            ['conductor absent at WARNING or above',
             'scheduler absent at INFO or above'],
            [p.subject for p in problems])
        self.assertEqual(
            'logs of conductor: expected no record at WARNING or above, '
            'found nova-conductor ERROR [nova.conductor.manager] Failed to '
            'schedule instances', str(problems[0]))

    def test_a_record_that_should_be_present(self):
        problems = self.check(
            'logs: {"nova-compute on host1": {present: {level: WARNING, '
            'pattern: not found}}}', *RECORDS)
        self.assertEqual(
            ["logs of nova-compute on host1: expected a record at WARNING "
             "or above matching 'not found', found none"],
            [str(p) for p in problems])

    def test_records_not_captured_is_a_problem(self):
        want = _scenario('logs: {any: {absent: {level: ERROR}}}').steps[
            -1].expect['logs']
        problems = logs.CHECK.check(want, snapshot.Snapshot({}, {}, {}),
                                    None)
        self.assertIn('were not captured', str(problems[0]))

    def test_bad_input_names_the_field(self):
        for expect, field, fragment in (
                ('logs: {compute: {absent: {level: ERROR}}}',
                 'expect.logs.compute', "unknown service 'compute'"),
                ('logs: {"nova-compute on host9": {absent: {level: ERROR}}}',
                 'expect.logs.nova-compute on host9', 'unknown service'),
                ('logs: {api: {absent: {level: LOUD}}}',
                 'expect.logs.api.absent.level',
                 "unknown level 'LOUD'; known: DEBUG, INFO, WARNING, ERROR"),
                ('logs: {api: {absent: {level: 40}}}',
                 'expect.logs.api.absent.level', 'unknown level 40'),
                ('logs: {api: {present: [{level: ERROR, pattern: "a("}]}}',
                 'expect.logs.api.present.1.pattern',
                 'not a regular expression: missing )'),
                ('logs: {api: {present: {pattern: x}}}',
                 'expect.logs.api.present.level', 'missing'),
                ('logs: {api: {seen: {level: ERROR}}}',
                 'expect.logs.api.seen', 'unknown field'),
                ('logs: {api: {}}', 'expect.logs.api',
                 'say absent, present or both'),
                ('logs: {api: {present: []}}', 'expect.logs.api.present',
                 'list at least one matcher')):
            error = self.assertRaises(errors.ScenarioError, _scenario,
                                      expect)
            self.assertIn('logs.yaml, step 2, field "%s"' % field,
                          str(error), expect)
            self.assertIn(fragment, str(error), expect)

    def test_the_run_captures_the_lowest_level_asked(self):
        self.assertIsNone(logs.level_wanted(_scenario('{}')))
        self.assertEqual(logging.INFO, logs.level_wanted(_scenario(
            'logs: {api: {absent: {level: ERROR}}}',
            first='logs: {scheduler: {present: [{level: CRITICAL}, '
                  '{level: INFO}]}}')))

    def test_the_log_file_and_the_key_name_computes_alike(self):
        self.assertEqual('nova-compute on h1', nova_logs.compute('h1'))
        self.assertTrue(logs.covers('nova-compute', nova_logs.compute('h1')))
        self.assertFalse(logs.covers('nova-compute', 'nova-conductor'))
        self.assertTrue(logs.covers('scheduler', 'nova-scheduler'))
        self.assertTrue(logs.covers('any', 'other'))


class TestStepLogs(testing.TestCase):

    def test_records_of_the_level_and_up_since_the_last_take(self):
        step_logs = nova_logs.StepLogs(
            logging.INFO, service_of=lambda record: 'nova-api',
            loggers=('harness-test-step-logs',))
        logger = logging.getLogger('harness-test-step-logs.api')
        logger.setLevel(logging.DEBUG)
        self.addCleanup(logger.setLevel, logging.NOTSET)
        with step_logs:
            logger.info('before the step')
            step_logs.take()
            logger.debug('too low')
            logger.warning('Instance %s gone', 'vm1')
            records = step_logs.records()
            self.assertEqual((), step_logs.records())
        self.assertEqual(
            (snapshot.LogRecord('nova-api', logging.WARNING,
                                'harness-test-step-logs.api',
                                'Instance vm1 gone'),), records)

    def test_a_scenario_without_logs_captures_nothing(self):
        with nova_logs.step_logs(_scenario('{}')) as step_logs:
            self.assertIsNone(step_logs)
        with nova_logs.step_logs(_scenario(
                'logs: {api: {absent: {level: ERROR}}}')) as step_logs:
            self.assertEqual(logging.ERROR, step_logs.level)
