"""What ``harness run`` reports besides verdicts (no Nova).

- ``nova_logs.NovaLogs``: Nova's records of a scenario, by service, for
  the log file, taken even while Nova's ``StandardLogging`` (a
  ``fixtures.FakeLogger`` on the root logger) has the root's handlers
  away, as it has while a cloud runs;
- ``standup``: a service's failed start as its error and its service,
  and the clean-ups a ``setUp``-overriding fixture left behind;
- ``cli.summary``: the run's last line.
"""

import logging
import types

import fixtures

from harness.runners import cli
from harness.runners import nova_logs
from harness.runners import standup
from harness import testing

# Loggers of this test's own: Nova's are the process's.
LOGGERS = ('harness-test-nova', 'harness-test-placement')
SCENARIO = types.SimpleNamespace(name='boot fails', path='boot.yaml')


def by_service(record):
    # The test's stand-in for the stack: which service a record is from.
    return getattr(record, 'service', 'other')


class TestNovaLogs(testing.TestCase):

    def capture(self, level=logging.WARNING):
        logs = nova_logs.NovaLogs(level, service_of=by_service,
                                  loggers=LOGGERS)
        logs.__enter__()
        self.addCleanup(logs.__exit__, None, None, None)
        return logs

    def log(self, level, message, service, logger=LOGGERS[0]):
        logging.getLogger(logger + '.child').log(
            level, message, extra={'service': service})

    def test_taken_while_the_root_loggers_handlers_are_away(self):
        # As Nova's StandardLogging does while a cloud runs: the root's
        # handlers go, a FakeLogger takes their place.
        logs = self.capture()
        root = logging.getLogger()
        before = list(root.handlers)
        with fixtures.FakeLogger(level=logging.INFO) as fake:
            self.assertEqual(1, len(root.handlers))
            self.log(logging.ERROR, 'Instance failed to spawn',
                     'nova-compute on h1')
            self.assertIn('Instance failed to spawn', fake.output)
        self.assertEqual(before, root.handlers)
        grouped = logs.take()
        self.assertEqual(['nova-compute on h1'], list(grouped))
        [line] = grouped['nova-compute on h1']
        self.assertTrue(line.endswith(
            'ERROR [harness-test-nova.child] Instance failed to spawn'),
            line)

    def test_warning_and_up_by_default_every_record_when_asked(self):
        # The loggers let INFO through, as Nova's logging does.
        logger = logging.getLogger(LOGGERS[0])
        self.addCleanup(logger.setLevel, logger.level)
        logger.setLevel(logging.INFO)
        for level, expected in ((logging.WARNING, ['warned', 'failed']),
                                (logging.NOTSET,
                                 ['noted', 'warned', 'failed'])):
            logs = self.capture(level)
            self.log(logging.INFO, 'noted', 'nova-api')
            self.log(logging.WARNING, 'warned', 'nova-api')
            self.log(logging.ERROR, 'failed', 'nova-api')
            lines = logs.take()['nova-api']
            self.assertEqual(expected, [line.rsplit(' ', 1)[1]
                                        for line in lines])
            logs.__exit__(None, None, None)

    def test_a_section_per_scenario_services_in_order(self):
        logs = self.capture()
        self.log(logging.WARNING, 'p', 'placement', LOGGERS[1])
        self.log(logging.WARNING, 'c2', 'nova-compute on h2')
        self.log(logging.WARNING, 'c1', 'nova-compute on h1')
        self.log(logging.ERROR, 'cond', 'nova-conductor')
        self.log(logging.WARNING, 'api', 'nova-api')
        self.log(logging.WARNING, 'c1 again', 'nova-compute on h1')
        lines = logs.section(SCENARIO).splitlines()
        self.assertEqual(
            "Nova's logs of scenario 'boot fails' (boot.yaml), WARNING "
            "and up: 6 records", lines[2])
        headers = [line for line in lines if line.startswith('---')]
        self.assertEqual(['--- nova-api (1) ---', '--- nova-conductor (1) ---',
                          '--- nova-compute on h1 (2) ---',
                          '--- nova-compute on h2 (1) ---',
                          '--- placement (1) ---'], headers)
        at = lines.index('--- nova-compute on h1 (2) ---')
        self.assertTrue(lines[at + 1].endswith(' c1'))
        self.assertTrue(lines[at + 2].endswith(' c1 again'))
        # Taken: the next scenario's section starts empty.
        self.assertIn('WARNING and up: none', logs.section(SCENARIO))

    def test_every_record_is_named_so_in_the_header(self):
        logs = self.capture(logging.NOTSET)
        self.log(logging.WARNING, 'noted', 'nova-api')
        self.assertIn("(boot.yaml), every record: 1 record\n",
                      logs.section(SCENARIO))

    def test_services_logger_names_tell(self):
        self.assertEqual('nova-scheduler',
                         nova_logs.by_name('nova.scheduler.manager'))
        self.assertEqual('nova-api', nova_logs.by_name('nova.api.openstack'))
        self.assertEqual('placement',
                         nova_logs.by_name('placement.requestlog'))
        self.assertEqual('nova-compute', nova_logs.by_name('nova.virt.fake'))
        self.assertIsNone(nova_logs.by_name('nova.objects.instance'))
        self.assertIsNone(nova_logs.by_name('nova.apiary'))


class ServiceFixture(fixtures.Fixture):
    """Nova's ``ServiceFixture``'s shape: ``setUp`` overridden, kwargs."""

    def __init__(self, binary, host, error):
        super().__init__()
        self.kwargs = {'binary': binary, 'host': host}
        self.error = error

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'tests.unit.test_cli_run_report.PATCHED', 'patched'))
        raise self.error


PATCHED = 'as imported'


class Cloud(fixtures.Fixture):

    def __init__(self, error):
        super().__init__()
        self.error = error

    def _setUp(self):
        self.service = ServiceFixture('nova-compute', 'h1', self.error)
        self.useFixture(self.service)


class TestStandUp(testing.TestCase):

    def failed_start(self, error):
        cloud = Cloud(error)
        failure = self.assertRaises(fixtures.MultipleExceptions,
                                    cloud.setUp)
        # The clean-ups its setUp left (harness.cloud.fixture.Cloud runs
        # them for Nova's fixtures).
        self.addCleanup(cloud.service.cleanUp)
        return failure

    def test_the_first_error_and_the_service_starting(self):
        error = ValueError('Invalid [pci]device_spec config:\n  zzzz')
        service, found = standup.refusal(self.failed_start(error))
        self.assertIs(error, found)
        self.assertEqual('nova-compute on h1', service)
        self.assertEqual(
            'nova-compute on h1 did not start: ValueError: Invalid '
            '[pci]device_spec config: zzzz',
            standup.one_line(service, found))

    def test_not_a_set_up_failure(self):
        self.assertIsNone(standup.refusal(ValueError('x')))


class TestSummary(testing.TestCase):

    def test_counts_and_names(self):
        self.assertEqual('2 passed, 0 failed', cli.summary(2, []))
        self.assertEqual('1 passed, 2 failed: a, b',
                         cli.summary(1, ['a', 'b']))

    def test_fail_fast_says_what_did_not_run(self):
        self.assertEqual(
            '0 passed, 1 failed: a; stopped at the first failure '
            '(--fail-fast): 2 scenarios not run', cli.summary(0, ['a'], 2))
        self.assertTrue(cli.summary(0, ['a'], 1).endswith(
            '1 scenario not run'))
