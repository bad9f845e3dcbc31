"""Faults: a hypervisor step or a claim that fails, as test input.

Two ways in. ``InjectedFaults`` (``cloud.faults``) arms a fault on a
running compute at a chosen moment of a scenario (the ``fault`` step): the
next call of a virt driver method there (``names.DRIVER_FAULTS``, on a
fake host as on a profiled libvirt one) raises ``InjectedFault``, or the
next resource claim (``claim``) raises ``ComputeResourcesUnavailable``
(and a live migration's pre-checks refuse with ``MigrationPreCheckError``);
``times`` calls fail, once by default, and the run fails if a fault never
fires. Only that object's method is replaced: every line of Nova around
it runs as installed.

``PlacementFaults`` (``cloud.faults.placement``) makes Placement answer a
named request with an error instead, in front of Placement's own WSGI
app (where wsgi-intercept hands it the request), never in Nova's report
client: a 409 with Placement's ``placement.concurrent_update`` code (what
a consumer or provider generation conflict answers), or a 500; or no
answer (``timeout``): Placement does not handle the request and the
client's socket read times out, which keystoneauth raises as
``ConnectTimeout``; or no connection (``unreachable``): the connection
is refused, as by a Placement that is down or that the service is not
configured to reach, which keystoneauth raises as ``ConnectFailure``
(unlike ``ConnectTimeout``, one that the report client's
``safe_connect`` logs and swallows). Every line of Nova's client, its
retries included, runs as installed.

And the older, whole-host form below: fake drivers whose one move step
always fails.

A scenario host may say ``{driver: fake, fail: confirm_migration}``: its
compute then runs Nova's ``fake.MediumFakeDriver`` (the same resources as
``driver: fake``) except that the named driver method raises
``InjectedFault``, as a real hypervisor failing at that step would. Nova's
own functional tests do the same (``fake.FakeFinishMigrationFailDriver``,
``mock.patch`` of ``FakeDriver.confirm_migration``); only the hypervisor
fails, every line of Nova above the driver runs as installed.

Which methods a scenario may name is ``names.FAULT_METHODS``: the
hypervisor steps of a cold move. Each is reached by an RPC cast
(``migrate_disk_and_power_off`` in the source's ``resize_instance``, cast
from the destination's ``prep_resize``; ``finish_migration`` in the
destination's ``finish_resize``, cast from the source's
``resize_instance``; ``confirm_migration`` and ``finish_revert_migration``
on the source, cast from the API and from the destination's
``revert_resize``). The cloud's casts wait for what they cast but leave
its failure on the compute that raised it
(``harness.nova_env.CastsWaited``), as a real cast does: the sender's
error handling never sees it, and an API request that cast answers as it
would in a deployment.

Nova loads a compute driver by a name under ``nova.virt``
(``compute_driver = fake.MediumFakeDriver``), so this module makes itself
importable as ``nova.virt.harness_faults``: ``driver_name(method)`` is the
``compute_driver`` value for a host whose ``method`` fails.
"""

import errno
import json
import socket
import sys
import time
from urllib import parse as urlparse

import fixtures
from neutronclient.common import exceptions as neutron_client_exc
import wsgi_intercept

from nova import exception
from nova.virt import fake

from harness.core import errors
from harness.core import names

# The resource tracker's claims: a ``claim`` fault fails the first of them
# that runs.
CLAIMS = ('instance_claim', 'resize_claim', 'rebuild_claim',
          'live_migration_claim')
PRE_CHECKS = ('check_can_live_migrate_destination',
              'check_can_live_migrate_source')

#: The driver methods a scenario may make fail.
METHODS = names.FAULT_METHODS
ALIAS = 'nova.virt.%s' % names.FAULT_MODULE


class InjectedFault(exception.NovaException):
    msg_fmt = 'injected hypervisor fault: %(method)s failed on %(host)s'


def _failing(method):
    def fail(self, *args, **kwargs):
        raise InjectedFault(method=method,
                            host=getattr(self, '_host', None) or '?')
    fail.__name__ = method
    # FakeDriver.init_host keeps the host name in _host.
    doc = 'MediumFakeDriver whose %s raises InjectedFault.' % method
    return type(names.fault_class_name(method), (fake.MediumFakeDriver,),
                {method: fail, '__doc__': doc})


for _method in METHODS:
    setattr(sys.modules[__name__], names.fault_class_name(_method),
            _failing(_method))
sys.modules.setdefault(ALIAS, sys.modules[__name__])


def driver_name(method):
    """The ``compute_driver`` for a fake host whose ``method`` fails."""
    return names.fault_driver_name(method)


class Fault(object):
    """One armed fault: ``method`` on ``host`` fails ``times`` calls."""

    def __init__(self, host, method, times, network=False):
        self.host = host
        self.method = method
        self.network = network
        self.remaining = times
        # The methods that raised, one entry per failed call.
        self.fired = []
        self._patches = []

    @property
    def subject(self):
        return str(self)

    @property
    def never(self):
        return 'Nova never called %s on %s' % (self.method, self.host)

    def __str__(self):
        return 'fault %s on %s' % (self.method, self.host)

    def _error(self, called):
        reason = 'injected fault (%s) on %s' % (called, self.host)
        if self.network:
            return neutron_client_exc.NeutronClientException(
                message=reason, status_code=500)
        if self.method == names.CLAIM_FAULT:
            return exception.ComputeResourcesUnavailable(reason=reason)
        if self.method in PRE_CHECKS:
            # How drivers refuse a live migration at its checks (libvirt:
            # MigrationPreCheckError, InvalidCPUInfo, ...); any other error
            # there is an unexpected failure, which puts the server in
            # ERROR.
            return exception.MigrationPreCheckError(reason=reason)
        return InjectedFault(method=called, host=self.host)

    def patch(self, obj, attr):
        """Make ``obj.attr`` fail while this fault has calls left."""
        fault = self
        had_own = attr in vars(obj)
        original = getattr(obj, attr)

        def failing(*args, **kwargs):
            if fault.remaining is None or fault.remaining > 0:
                if fault.remaining is not None:
                    fault.remaining -= 1
                fault.fired.append(attr)
                raise fault._error(attr)
            return original(*args, **kwargs)

        failing.__name__ = attr
        setattr(obj, attr, failing)
        self._patches.append((obj, attr, had_own,
                              original if had_own else None))

    def disarm(self):
        for obj, attr, had_own, original in reversed(self._patches):
            if had_own:
                setattr(obj, attr, original)
            else:
                obj.__dict__.pop(attr, None)
        self._patches = []


class PlacementFault(object):
    """Placement answers ``times`` requests ``METHOD /path`` with ``status``.

    The path is matched from its start; ``*`` stands for one path segment
    (``PUT /allocations/*``). The query string is not matched.
    """

    def __init__(self, request, status, times):
        self.request = request
        self.status = status
        self.remaining = times
        self.fired = []
        method, path = request.split(' ', 1)
        self.method = method
        self._path = names.placement_path(path)

    @property
    def subject(self):
        return str(self)

    @property
    def never(self):
        return 'Nova never sent %s to Placement' % self.request

    def __str__(self):
        return 'Placement %s on %s' % (self.status, self.request)

    def matches(self, environ):
        return ((self.remaining is None or self.remaining > 0)
                and environ['REQUEST_METHOD'] == self.method
                and self._path.match(environ.get('PATH_INFO', '')))

    def answer(self, environ, start_response):
        if self.remaining is not None:
            self.remaining -= 1
        self.fired.append('%s %s' % (environ['REQUEST_METHOD'],
                                     environ.get('PATH_INFO', '')))
        if self.status == TIMEOUT:
            # Placement never handles it; the client's read times out
            # (PlacementFaults turns this into the socket's timeout).
            raise _NoAnswer(str(self))
        if self.status == UNREACHABLE:
            # No connection (PlacementFaults turns this into a refused
            # one).
            raise _NoConnection(str(self))
        code = ('placement.concurrent_update' if self.status == 409
                else 'placement.undefined_code')
        title = {409: 'Conflict'}.get(self.status, 'Internal Server Error')
        body = json.dumps({'errors': [{
            'status': self.status, 'code': code, 'title': title,
            'detail': 'injected fault: %s' % self, 'request_id': None}]})
        start_response('%d %s' % (self.status, title), [
            ('Content-Type', 'application/json'),
            ('Content-Length', str(len(body))),
            # Placement's microversion middleware answers every request,
            # errors too, with the version it served (the one asked for,
            # else 1.0); Nova reads it even from a failed response.
            ('OpenStack-API-Version', 'placement %s' % _asked_version(
                environ)),
            ('Vary', 'OpenStack-API-Version')])
        return [body.encode()]


def _asked_version(environ):
    """The Placement microversion a request asked for (1.0: none)."""
    asked = environ.get('HTTP_OPENSTACK_API_VERSION', '').split()
    if len(asked) == 2 and asked[0].lower() == 'placement':
        return asked[1]
    return '1.0'


#: A Placement fault that answers nothing: the client's read times out.
TIMEOUT = names.PLACEMENT_TIMEOUT
#: A Placement fault that takes no connection: the client's is refused.
UNREACHABLE = names.PLACEMENT_UNREACHABLE


class _NoAnswer(Exception):
    """Raised in place of Placement's answer to a request that times out."""


class _NoConnection(Exception):
    """Raised in place of Placement's answer to a request it never gets."""


def _timing_out(makefile):
    """``wsgi_fake_socket.makefile``, reading a timeout for ``_NoAnswer``.

    (And a refused connection for ``_NoConnection``.)

    wsgi-intercept runs the app when the client reads the response
    (``makefile``) and wraps what the app raises in ``WSGIAppError``, which
    no HTTP library knows; a socket whose read times out raises
    ``socket.timeout`` there instead, which urllib3 and requests turn into
    ``ReadTimeout`` and keystoneauth into ``ConnectTimeout``, as they do
    for a Placement that does not answer in time.
    """
    def timing_out(sock, *args, **kwargs):
        try:
            return makefile(sock, *args, **kwargs)
        except wsgi_intercept.WSGIAppError as exc:
            if isinstance(exc.error, _NoAnswer):
                raise socket.timeout('timed out') from None
            if isinstance(exc.error, _NoConnection):
                # requests raises its ConnectionError for it, keystoneauth
                # its ConnectFailure.
                raise ConnectionRefusedError(
                    errno.ECONNREFUSED, 'Connection refused') from None
            raise
    return timing_out


_WALL_TIME = time.time


class _NoBackoff(object):
    """The report module's ``time``, less the wait of its retries."""

    time = staticmethod(_WALL_TIME)

    @staticmethod
    def sleep(seconds):
        pass


class PlacementFaults(fixtures.Fixture):
    """Faults armed in front of Placement's WSGI app; see the module."""

    #: The statuses a fault may answer with (or ``timeout``: none).
    STATUSES = names.PLACEMENT_STATUSES

    def __init__(self, placement):
        super().__init__()
        self._placement = placement

    def _setUp(self):
        self.armed = []
        endpoint = urlparse.urlsplit(self._placement.endpoint)
        key = (endpoint.hostname, endpoint.port or 80)
        app_fn, script_name = wsgi_intercept._wsgi_intercept[key]
        faults = self

        def faulty_app():
            app = app_fn()

            def answer(environ, start_response):
                for fault in faults.armed:
                    if fault.matches(environ):
                        return fault.answer(environ, start_response)
                return app(environ, start_response)
            return answer

        wsgi_intercept._wsgi_intercept[key] = (faulty_app, script_name)
        self.addCleanup(wsgi_intercept._wsgi_intercept.__setitem__, key,
                        (app_fn, script_name))
        self.useFixture(fixtures.MonkeyPatch(
            'wsgi_intercept.wsgi_fake_socket.makefile',
            _timing_out(wsgi_intercept.wsgi_fake_socket.makefile)))
        # The report client backs off between its retries of a conflict
        # (``report.retries``: a random sleep of up to 2, 4, 6 s). The
        # retries run as installed; the wait passes no wall time, as no
        # other wait in the cloud does.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.time', _NoBackoff))

    def arm(self, request, status=409, times=1):
        if status not in self.STATUSES:
            raise errors.HarnessError('Placement faults answer %s, not %r'
                                      % (' or '.join(map(
                                          str, self.STATUSES)), status))
        fault = PlacementFault(request, status, times)
        self.armed.append(fault)
        return fault

    def clear(self):
        self.armed = []


class InjectedFaults(fixtures.Fixture):
    """The faults armed on a cloud's computes; see the module docstring."""

    def __init__(self, cloud):
        super().__init__()
        self._cloud = cloud

    def _setUp(self):
        self.armed = []
        self.addCleanup(self.clear)
        self.placement = self.useFixture(
            PlacementFaults(self._cloud.placement))

    def arm(self, host, method, times=1):
        """Make ``method`` fail on ``host`` for its next ``times`` calls.

        ``times=None``: every call. The fault holds on the compute as it
        runs now; a restart of it starts with none.
        """
        if method not in names.FAULTS:
            raise errors.HarnessError(
                'cannot fail %r; a fault can be put in: %s'
                % (method, ', '.join(names.FAULTS)))
        manager = self._cloud.compute(host).manager
        fault = Fault(host, method, times)
        if method == names.CLAIM_FAULT:
            for claim in CLAIMS:
                fault.patch(manager.rt, claim)
        else:
            fault.patch(manager.driver, method)
        self.armed.append(fault)
        return fault

    def arm_network(self, method, times=1):
        """Make the network service's ``method`` fail ``times`` calls.

        ``method`` is one of ``names.NETWORK_FAULTS``, a call Nova makes to
        Neutron (its stand-in here), which then answers as a failing
        Neutron server does (a 500 from the client).
        """
        if method not in names.NETWORK_FAULTS:
            raise errors.HarnessError(
                'cannot fail network call %r; known: %s'
                % (method, ', '.join(names.NETWORK_FAULTS)))
        fault = Fault('the network service', method, times, network=True)
        fault.patch(self._cloud.neutron, method)
        self.armed.append(fault)
        return fault

    def arm_placement(self, request, status=409, times=1):
        """Placement answers ``request`` (``METHOD /path``) with ``status``.

        For its next ``times`` matches (see ``PlacementFaults``).
        """
        return self.placement.arm(request, status, times)

    def placement_refused(self, request):
        """Whether a fault refused the connection of ``request`` to Placement.

        ``request`` is ``METHOD /path`` as sent (``status: unreachable``
        faults armed in this run only).
        """
        return any(fault.status == names.PLACEMENT_UNREACHABLE
                   and request in fault.fired
                   for fault in self.placement.armed)

    def clear(self):
        """Disarm every fault (what fired stays recorded on it)."""
        for fault in reversed(self.armed):
            fault.disarm()
        self.armed = []
        self.placement.clear()
