"""Nova's log records of each scenario, by service, for the log file.

While a cloud runs, Nova's ``StandardLogging`` fixture takes the root
logger's handlers away (it puts them back when the cloud goes), so the
log file the command names would hold nothing Nova said while a scenario
ran. ``NovaLogs`` sits on the loggers Nova's services log through
(``nova``, ``placement`` and the oslo libraries doing their work), which
that fixture leaves alone, and collects each scenario's records; at the
scenario's end ``section`` renders them, grouped by the service that
logged them, under a header naming the scenario.

Which service logged a record is told, in order, by:

- the logger's name, for Placement (it runs inside whoever calls it);
- the service object nearest on the logging thread's stack: a compute's
  manager, tracker or driver (its host), the conductor's or the
  scheduler's manager, the API's WSGI resource, or the RPC server a
  message arrived through (its topic and server);
- the host the harness hands the work to (``activity.acting_host``:
  RPC dispatch, periodic runs, and executor tasks they spawn);
- the logger's name (``nova.conductor``, ``nova.scheduler``, ...);
- else ``other`` (shared code, with no service on the stack).

Reading the stack is done for the records kept only (WARNING and up,
unless asked for every record), in the logging thread, and changes
nothing: a record is handed on exactly as it came.
"""

import collections
import contextlib
import logging
import sys
import threading

from harness.core.checks.expect import logs as logs_key
from harness.core import frames
from harness.core import snapshot

#: Loggers the records are taken from: Nova, Placement, and the libraries
#: whose records are part of a service's work (a failed RPC handler is
#: logged by oslo.messaging, a lock by oslo.concurrency). None is another's
#: ancestor, so no record is taken twice.
LOGGERS = ('nova', 'placement', 'oslo_messaging', 'oslo_service',
           'oslo_concurrency', 'oslo_db', 'os_vif', 'keystoneauth1')

#: Logger-name prefixes of the services, for records no stack names.
BY_NAME = (('placement', 'placement'),
           ('nova.api', 'nova-api'),
           ('nova.conductor', 'nova-conductor'),
           ('nova.scheduler', 'nova-scheduler'),
           ('nova.compute', 'nova-compute'),
           ('nova.virt', 'nova-compute'))

OTHER = 'other'

FORMAT = '%(asctime)s %(levelname)s [%(name)s] %(message)s'


# The names a scenario's ``logs:`` expectation uses for the services.
compute = logs_key.compute


def by_name(name):
    """The service a logger's name says, or None."""
    for prefix, service in BY_NAME:
        if name == prefix or name.startswith(prefix + '.'):
            return service
    return None


def _rpc_server(server):
    target = server.target
    if target.topic == 'compute':
        return compute(target.server)
    return 'nova-%s' % target.topic


# (module, class, service of an instance): looked up in the modules
# already imported, never imported here (a record may be logged while
# one of them is half-imported).
_CLASSES = (
    ('nova.compute.manager', 'ComputeManager', lambda m: compute(m.host)),
    ('nova.compute.resource_tracker', 'ResourceTracker',
     lambda t: compute(t.host)),
    ('nova.conductor.manager', 'ConductorManager',
     lambda _: 'nova-conductor'),
    ('nova.conductor.manager', 'ComputeTaskManager',
     lambda _: 'nova-conductor'),
    ('nova.scheduler.manager', 'SchedulerManager',
     lambda _: 'nova-scheduler'),
    ('nova.api.openstack.wsgi', 'Resource', lambda _: 'nova-api'),
    ('oslo_messaging.server', 'MessageHandlingServer', _rpc_server),
)


def _service_classes():
    """(class, service of an instance) pairs of the classes imported."""
    found = []
    for module_name, class_name, service_of in _CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type):
            found.append((cls, service_of))
    return tuple(found)


def _from_stack(frame):
    """The service of the nearest service object on the stack, or None.

    A manager not set up yet (no host) names none.
    """
    return frames.nearest(frame, _service_classes())


def nova_service(record):
    """The service that logged ``record`` (see the module docstring).

    Called in the thread that logs it, while it logs it.
    """
    if record.name.split('.', 1)[0] == 'placement':
        return 'placement'
    service = _from_stack(sys._getframe(1))
    if service is not None:
        return service
    # Imported with the cloud; not imported here (see _CLASSES).
    activity = sys.modules.get('harness.cloud.activity')
    host = activity.acting_host() if activity is not None else None
    if host in ('conductor', 'scheduler'):
        return 'nova-%s' % host
    if host is not None:
        return compute(host)
    return by_name(record.name) or OTHER


class NovaLogs(logging.Handler):
    """Collects the records of ``level`` and up, by service, per scenario.

    :param service_of: tells the service of a record as it is logged
        (``nova_service``; tests give their own).
    """

    def __init__(self, level=logging.WARNING, service_of=nova_service,
                 loggers=LOGGERS):
        super().__init__(level)
        self.setFormatter(logging.Formatter(FORMAT))
        self.service_of = service_of
        self.loggers = loggers
        self._lock = threading.Lock()
        self._records = []

    def emit(self, record):
        try:
            service = self.service_of(record)
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        with self._lock:
            self._records.append((service, line))

    def __enter__(self):
        for name in self.loggers:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc):
        for name in self.loggers:
            logging.getLogger(name).removeHandler(self)
        self.close()

    def take(self):
        """The records since the last ``take``: ``{service: [line]}``."""
        with self._lock:
            records, self._records = self._records, []
        grouped = collections.OrderedDict()
        for service, line in records:
            grouped.setdefault(service, []).append(line)
        return grouped

    def section(self, scenario):
        """The scenario's records as text, and takes them (``take``)."""
        grouped = self.take()
        level = logging.getLevelName(self.level)
        lines = ['', '=' * 70,
                 "Nova's logs of scenario %r (%s), %s: %s" % (
                     scenario.name, scenario.path,
                     'every record' if self.level <= logging.DEBUG
                     else '%s and up' % level,
                     _records(sum(map(len, grouped.values())))
                     if grouped else 'none'),
                 '=' * 70]
        # Services in a fixed order (a compute's host by name), so that
        # two runs' logs compare; each service's records in order.
        for service in sorted(grouped, key=_service_order):
            lines.append('--- %s (%d) ---'
                         % (service, len(grouped[service])))
            lines.extend(grouped[service])
        return '\n'.join(lines) + '\n'


class StepLogs(NovaLogs):
    """Collects the records of ``level`` and up of each step, for ``logs:``.

    The runner ``take``s what came before a step (the checks' own work
    after the step before) and gives the step's snapshot the records
    logged up to it (``records``), as ``snapshot.LogRecord``s.
    """

    def emit(self, record):
        try:
            kept = snapshot.LogRecord(
                service=self.service_of(record), level=record.levelno,
                logger=record.name, message=record.getMessage())
        except Exception:
            self.handleError(record)
            return
        with self._lock:
            self._records.append((kept.service, kept))

    def records(self):
        """The records since the last ``take`` or ``records``, in order."""
        with self._lock:
            records, self._records = self._records, []
        return tuple(record for _, record in records)


def step_logs(scenario):
    """What captures ``scenario``'s records for its ``logs:`` keys.

    A ``StepLogs`` at the lowest level they ask for, or, without any, a
    null context (it gives None).
    """
    level = logs_key.level_wanted(scenario)
    if level is None:
        return contextlib.nullcontext()
    return StepLogs(level)


_ORDER = ('nova-api', 'nova-conductor', 'nova-scheduler', 'nova-compute',
          'placement', OTHER)


def _service_order(service):
    for index, name in enumerate(_ORDER):
        if service == name or service.startswith(name + ' '):
            return index, service
    return len(_ORDER), service


def _records(count):
    return '%d record%s' % (count, '' if count == 1 else 's')
