"""The process-wide state a Nova test needs, as fixtures.

Nova keeps this set-up inside ``nova.test.TestCase.setUp``; we compose the
same fixtures from ``nova.tests.fixtures`` instead of inheriting that class,
so that a ``Cloud`` works in any testtools, oslotest or pytest case.
Each fixture here undoes what it does.
"""

# The process's concurrency mode is applied (harness.cloud.mode) before
# anything imports threading-sensitive modules.
from harness.cloud import mode  # noqa: I100

import collections  # noqa: E402
import contextlib  # noqa: E402
import copy  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import logging as std_logging  # noqa: E402
import queue  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import fixtures  # noqa: E402
import os_vif  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_db import options as db_options  # noqa: E402
from oslo_log.fixture import logging_error as log_fixture  # noqa: E402
from oslo_log import log as logging  # noqa: E402
import oslo_messaging  # noqa: E402
from oslo_messaging._drivers import base as messaging_base  # noqa: E402,E501
from oslo_messaging._drivers import impl_fake  # noqa: E402
from oslo_messaging import conffixture as messaging_conffixture  # noqa: E402
from oslo_messaging import server as messaging_server  # noqa: E402
from oslo_middleware import http_proxy_to_wsgi  # noqa: E402
from oslo_middleware import sizelimit  # noqa: E402
from oslo_policy import opts as policy_opts  # noqa: E402
from oslo_service import _options as service_options  # noqa: E402
from oslo_versionedobjects import fixture as ovo_fixture  # noqa: E402
from oslotest import mock_fixture  # noqa: E402
import requests  # noqa: E402

from nova.api.openstack import wsgi_app  # noqa: E402
from nova import availability_zones  # noqa: E402
from nova.compute import rpcapi as compute_rpcapi  # noqa: E402
import nova.conf  # noqa: E402
import nova.conf.neutron  # noqa: E402
from nova import context  # noqa: E402
import nova.crypto  # noqa: E402
import nova.limit.utils  # noqa: E402
from nova import objects  # noqa: E402
from nova.objects import base as objects_base  # noqa: E402
from nova.pci import request as pci_request  # noqa: E402
from nova import quota  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from nova.scheduler import utils as scheduler_utils  # noqa: E402
import nova.service_auth  # noqa: E402
# nova.test configures oslo.log, oslo.cache and mock at import time, as every
# Nova test process does; we use that, not its TestCase.
import nova.test  # noqa: E402,F401
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

from harness.cloud import databases  # noqa: E402
from harness.cloud import install  # noqa: E402
from harness.core import errors  # noqa: E402

# Nova 34's nova.thread_pool_factory; nova.utils before.
thread_pool_factory = install.nova_spawn_module()
from harness.cloud import offline  # noqa: E402

CONF = nova.conf.CONF
LOG = logging.getLogger(__name__)
_MISSING = object()
# How oslo.messaging's fake driver words a call that got no reply in time
# (``impl_fake.FakeDriver._send``); a compute that dies answers with
# another (``harness.cloud.dying.ended``).
_NO_REPLY = 'No reply on topic'


def _register_lazy_opts():
    """Register now the options a first cloud would register on first use.

    oslo.messaging, oslo.policy, oslo.middleware, oslo.db, oslo.service,
    os-vif and ``nova.conf.neutron`` register some of their options only
    when first used, so the first cloud of a process would register them
    inside its test (and ``harness.leaks`` rightly calls that a leak).
    Each library's own registration is used here, so the options are the
    very ones it would register later (which then registers nothing new);
    none of them sets a default or an override.
    """
    # [oslo_messaging_rabbit], [oslo_messaging_notifications] and
    # [DEFAULT] transport_url, control_exchange, rpc_response_timeout,
    # rpc_ping_enabled: what RPCFixture's messaging ConfFixture registers.
    messaging_conffixture.ConfFixture(CONF)
    # [DEFAULT] executor_thread_pool_size: registered by each RPC server.
    CONF.register_opts(messaging_server._pool_opts)
    # [DEFAULT] run_external_periodic_tasks: by each service's manager.
    CONF.register_opts(service_options.periodic_opts)
    # [oslo_policy]: nova_fixtures.ConfFixture passes nothing else either.
    policy_opts.set_defaults(CONF)
    # [neutron_tunnel] (and a group per physnet, none by default), as
    # nova_fixtures.ConfFixture does after parsing.
    nova.conf.neutron.register_dynamic_opts(CONF)
    # [database] use_db_reconnect: Nova leaves it out of its copy of
    # oslo.db's options; oslo.db's enginefacade registers them all.
    CONF.register_opts(db_options.database_opts, 'database')
    # [oslo_middleware]: by the API pipelines' middleware.
    CONF.register_opts(http_proxy_to_wsgi.OPTS, 'oslo_middleware')
    # oslo.middleware before 7 (Nova 31's) names them _opts.
    CONF.register_opts(getattr(sizelimit, 'OPTS', None) or sizelimit._opts,
                       'oslo_middleware')
    # [os_vif_ovs] and [vif_plug_ovs_privileged]: loading os-vif's plugins,
    # as nova_fixtures.LibvirtFixture does on a cloud's first libvirt host
    # (later calls do nothing). Importing the OVS plugin (pyroute2) is the
    # dearest part, ~0.4 s once per process, which the first cloud with a
    # libvirt host paid anyway. Its "Loaded VIF plugins" note belongs to no
    # test; keep it off the console.
    vif_log = std_logging.getLogger('os_vif')
    level = vif_log.level
    vif_log.setLevel(std_logging.WARNING)
    try:
        os_vif.initialize()
    finally:
        vif_log.setLevel(level)


_register_lazy_opts()


def _start_metrics_collector():
    """Make oslo.messaging's metrics client now, as a first RPC call would.

    Before oslo.messaging 17 (Nova 31's 16.1) every RPC client call goes
    through a process-wide collector, made on first use with a thread that
    runs ``metrics_thread_stop_timeout`` (10 s) even with metrics off: the
    first test to send RPC would be blamed for it (``harness.leaks``).
    From 17 on (``measure_metrics``) no collector is made while off.
    """
    from oslo_messaging import _metrics as metrics
    if not hasattr(metrics, 'measure_metrics'):
        metrics.get_collector(CONF, 'rpc_client')


_start_metrics_collector()


class TestShim(object):
    """What Nova's service-stand-in fixtures ask of "the test".

    ``NeutronFixture(test)``, ``GlanceFixture(test)``, ``CastAsCallFixture``
    and friends call ``test.stub_out``, ``test.flags``, ``test.useFixture``
    and ``test.id``; route those to the owning fixture so clean-up stays
    with it.
    """

    def __init__(self, owner, test_id):
        self._owner = owner
        self._test_id = test_id

    def id(self):
        return self._test_id

    def useFixture(self, fixture):
        return self._owner.useFixture(fixture)

    def stub_out(self, old, new):
        self._owner.useFixture(fixtures.MonkeyPatch(old, new))

    def flags(self, **kw):
        group = kw.pop('group', None)
        for name, value in kw.items():
            self._owner.useFixture(
                nova_fixtures.ConfPatcher(group=group, **{name: value}))


class CastsWaited(fixtures.Fixture):
    """RPC casts wait for what they cast, and keep its failures to it.

    Nova's ``CastAsCallFixture`` turns every cast into a call, so that the
    caller returns once the cast method has; that also hands the method's
    exception back to the caller, which no real cast does (the receiving
    service logs it, the sender has long moved on). Here each cast is
    still that call, but an exception stays on the receiving side: logged,
    not raised into the caller. So a compute that fails a step leaves the
    caller's flow as it would in a deployment (an API request that cast
    answers as it would, a source's ``resize_instance`` does not see its
    destination's ``finish_resize`` fail).

    A cast to a compute that is stopped waits in its queue, as on a real
    message bus, instead of holding the caller until the RPC timeout:
    ``deliver(host)`` runs the queued casts, in order, once the compute is
    back (``Cloud.restart_compute`` does).

    A cast whose call had no reply within ``rpc_response_timeout`` (by
    the wall clock) is no failure of the receiving side: its handler was
    still running (a cast to a stopped compute queues, one to a compute
    that dies answers at once: ``harness.cloud.dying``), and its caller
    went on without it, which no run does the same way twice. That is
    handed to ``unanswered`` as an error of ours.

    :param is_stopped: ``is_stopped(host)``, whether that compute is
        stopped now.
    :param unanswered: ``unanswered(error)``, told of each such cast
        (``errors.OperationTimeout``).
    """

    def __init__(self, test, is_stopped=lambda host: False,
                 unanswered=lambda error: None):
        super().__init__()
        self.test = test
        self.is_stopped = is_stopped
        self.unanswered = unanswered

    def _setUp(self):
        self.failures = []
        # host -> [(call, client, ctxt, method, kwargs)], oldest first
        self.queued = {}
        # While set (``threaded``), casts run in a thread of their own.
        self._threaded = False
        self.useFixture(nova_fixtures.CastAsCallFixture(_CastShim(
            self.test, self)))

    def queued_methods(self):
        """Host -> the methods cast to it while stopped, not yet run."""
        return {host: [cast[3] for cast in casts]
                for host, casts in sorted(self.queued.items()) if casts}

    def deliver(self, host):
        """Run the casts queued for ``host``, oldest first; return them."""
        casts = self.queued.pop(host, [])
        for call, client, ctxt, method, kwargs in casts:
            self.run(call, client, ctxt, method, kwargs)
        return [cast[3] for cast in casts]

    @contextlib.contextmanager
    def threaded(self):
        """Casts sent in this block run in a thread of their own.

        For a request sent from inside another operation (at a race
        point): what it casts must wait for the locks that operation holds
        (the instance's), as it would on a real message bus, instead of
        running inside it. The thread is one of Nova's executor's, so the
        cloud's waits wait for it.
        """
        self._threaded, was = True, self._threaded
        try:
            yield
        finally:
            self._threaded = was

    def send(self, call, client, ctxt, method, kwargs):
        """A cast: queued if its compute is stopped, else run now."""
        server = getattr(getattr(client, 'target', None), 'server', None)
        if server is not None and self.is_stopped(server):
            LOG.info('cast %s to the stopped compute %s: queued until it '
                     'starts', method, server)
            self.queued.setdefault(server, []).append(
                (call, client, ctxt, method, kwargs))
            return
        if self._threaded:
            thread_pool_factory.spawn(self.run, call, client, ctxt, method,
                                      kwargs)
            return
        self.run(call, client, ctxt, method, kwargs)

    def run(self, call, client, ctxt, method, kwargs):
        try:
            call(client, ctxt, method, **kwargs)
        except Exception as exc:
            if (isinstance(exc, oslo_messaging.MessagingTimeout)
                    and str(exc).startswith(_NO_REPLY)):
                server = getattr(getattr(client, 'target', None), 'server',
                                 None)
                self.unanswered(errors.OperationTimeout(
                    'the cast %s to %s had no reply within '
                    'rpc_response_timeout (%ss of the wall clock): its '
                    'handler still ran, unseen by the harness\'s waits, '
                    'when its sender went on; the run would not be the '
                    'same every time' % (method, server or 'its topic',
                                         CONF.rpc_response_timeout)))
            self.failures.append((method, exc))
            LOG.warning('cast %s failed on the receiving side (a real '
                        'cast does not return this to its caller): '
                        '%s', method, exc)


class _CastShim(object):
    """The test ``CastAsCallFixture`` stubs through; wraps its casts."""

    def __init__(self, test, casts):
        self._test = test
        self._casts = casts

    def __getattr__(self, name):
        return getattr(self._test, name)

    def stub_out(self, target, new):
        if target.endswith('.cast'):
            new = self._cast(new)
        self._test.stub_out(target, new)

    def _cast(self, call):
        casts = self._casts

        def cast(client, ctxt, method, **kwargs):
            casts.send(call, client, ctxt, method, kwargs)
        return cast


class FewerCollections(fixtures.Fixture):
    """Python's cyclic GC collects the youngest objects less often.

    A cloud allocates fast (Nova objects, SQLAlchemy rows, WSGI
    environments): at the default threshold (700) the collector ran ~180
    times per scenario, scanning its young objects and, every tenth time,
    the next generation too: ~0.2 s of a 1.6 s scenario. At 10000 it runs
    ~11 times for half the time, at the cost of ~85 MB more peak memory
    (garbage waits longer). When cycles are collected is no input to what
    Nova does; the previous thresholds come back at clean-up.
    """

    YOUNGEST = 10000

    def _setUp(self):
        before = gc.get_threshold()
        gc.set_threshold(self.YOUNGEST, *before[1:])
        self.addCleanup(gc.set_threshold, *before)


class NovaGlobals(fixtures.Fixture):
    """Reset Nova's module-level caches and restore the object registry.

    Nova caches cells, clients, key managers and version pins in module
    globals; a cloud from an earlier test must not leak into this one, nor
    this one into what runs after it: each global is put back on clean-up.
    """

    def _setUp(self):
        pci_request.get_alias_from_config.cache_clear()
        # Cached from Nova 34 on.
        getattr(libvirt_driver.LibvirtDriver._get_pci_passthrough_devices,
                'cache_clear', lambda: None)()
        # A class attribute set on NovaObject shadows VersionedObject's;
        # _set deletes it again rather than leave a copy on the subclass.
        self._set(objects_base.NovaObject, 'indirection_api', None)
        registry = objects_base.NovaObjectRegistry._registry
        saved = copy.copy(registry._obj_classes)
        self.addCleanup(setattr, registry, '_obj_classes', saved)
        # what objects.Service.clear_min_version_cache() does
        self._set(objects.Service, '_MIN_VERSION_CACHE', {})
        from nova.compute import api as compute_api
        self._set(compute_api, 'CELLS', [])
        if hasattr(context, 'reset_globals'):
            context.reset_globals()
            self.addCleanup(context.reset_globals)
        else:
            # Before Nova 33: the same two caches, with no reset.
            self._set(context, 'CELL_CACHE', {})
            self._set(context, 'CELLS', [])
        compute_rpcapi.reset_globals()
        self.addCleanup(compute_rpcapi.reset_globals)
        self._set(quota, 'UID_QFD_POPULATED_CACHE_BY_PROJECT', set())
        self._set(quota, 'UID_QFD_POPULATED_CACHE_ALL', False)
        wsgi_app.init_global_data.reset()
        wsgi_app.init_application.reset()
        self._set(report, 'PLACEMENTCLIENT', None)
        scheduler_utils.reset_globals()
        self.addCleanup(scheduler_utils.reset_globals)
        self._set(nova.crypto, '_KEYMGR', None)
        self._set(nova.limit.utils, 'IDENTITY_CLIENT', None)
        nova.service_auth.reset_globals()
        self.addCleanup(nova.service_auth.reset_globals)
        # the memcache client of the availability zone cache
        self._set(availability_zones, 'MC', None)

    def _set(self, owner, name, value):
        """Set ``owner.name`` to ``value`` until clean-up.

        Clean-up puts back what ``owner`` itself held, or deletes the name
        if it held none (an inherited or absent attribute).
        """
        old = vars(owner).get(name, _MISSING)
        if old is _MISSING:
            self.addCleanup(delattr, owner, name)
        else:
            self.addCleanup(setattr, owner, name, old)
        setattr(owner, name, value)


class KeepConfSettings(fixtures.Fixture):
    """Put back the overrides and defaults CONF held before the test.

    oslo.config's ``Config`` fixture (under ``nova_fixtures.ConfFixture``)
    resets every override and default on clean-up, including those set at
    import time (``nova.test``: ``use_stderr``; privsep contexts:
    ``capabilities``, ``logger_name``), which nothing would set again. Set
    up before it, this fixture re-applies them after its clean-up.
    """

    def _setUp(self):
        saved = []
        for info, group in CONF._all_opt_infos():
            for key in ('override', 'default'):
                if key in info:
                    saved.append((key, info['opt'].dest,
                                  None if group is None else group.name,
                                  info[key]))
        self.addCleanup(self._restore, saved)

    @staticmethod
    def _restore(saved):
        setters = {'override': CONF.set_override,
                   'default': CONF.set_default}
        for key, name, group, value in saved:
            try:
                setters[key](name, value, group)
            except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
                pass  # unregistered since: harness.leaks says so


class InProcessHTTP(fixtures.Fixture):
    """Requests to the cloud's APIs take nothing from the environment.

    Nova's test clients send their requests with ``requests``, which at
    every request reads the environment's proxies (``http_proxy``,
    ``no_proxy``, ...) and CA bundle, and looks for a ``~/.netrc``. Every
    request of a cloud is answered in this process (wsgi-intercept): a
    proxy set in the environment would send it to the network instead,
    and the look-ups cost a scan of the environment and a few file checks
    at each of the hundreds of requests a scenario makes. Placement's
    client keeps one session, which stops trusting the environment; Nova's
    API client makes a session per request, through its module's
    ``requests``, which makes them so.
    """

    def __init__(self, placement):
        super().__init__()
        self._placement = placement

    def _setUp(self):
        session = self._placement._client.session.session
        self.addCleanup(setattr, session, 'trust_env', session.trust_env)
        session.trust_env = False
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.functional.api.client.requests', _Untrusting()))


class _Untrusting(object):
    """``requests`` as Nova's API client uses it, the environment aside."""

    def __getattr__(self, name):
        return getattr(requests, name)

    @staticmethod
    def request(method, url, **kwargs):
        with requests.Session() as session:
            session.trust_env = False
            return session.request(method=method, url=url, **kwargs)


class PromptDelivery(fixtures.Fixture):
    """Wake only the fake RPC transport's listeners a message is for.

    oslo.messaging's fake driver has every listener poll its queues every
    50 ms: each RPC hop of a move waited for the next poll, and with many
    computes the listeners' wake-ups alone grew with the hosts (three
    listeners a compute, twenty polls a second each). Here each listener
    waits on an event of its own, set when a message is delivered to a
    topic it listens on, or when it stops; it looks at its queues after
    clearing the event, so a delivery between its look and its wait is
    not missed. A listener with nothing to do sleeps until then (its
    server's poll timeout, if it gives one, still ends the wait).
    """

    def _setUp(self):
        # topic -> the wake events of the listeners with a target on it.
        waiting = collections.defaultdict(set)
        real_deliver = impl_fake.FakeExchange.deliver_message

        def deliver_message(exchange, topic, *args, **kwargs):
            real_deliver(exchange, topic, *args, **kwargs)
            for wake in list(waiting.get(topic, ())):
                wake.set()

        def wake_of(listener):
            wake = vars(listener).get('_harness_wake')
            if wake is None:
                wake = listener._harness_wake = threading.Event()
                for target in listener._targets:
                    waiting[target.topic].add(wake)
            return wake

        real_stop = impl_fake.FakeListener.stop

        def stop(listener):
            # A stopping service waits for its listener to see the stop.
            real_stop(listener)
            wake = wake_of(listener)
            for target in listener._targets:
                waiting[target.topic].discard(wake)
            wake.set()

        def poll(listener, timeout=None):
            # FakeListener.poll's look at each target's queue, with the
            # wait on the listener's own event instead of a 50 ms sleep.
            wake = wake_of(listener)
            deadline = None if timeout is None else time.time() + timeout
            while not listener._stopped.is_set():
                wake.clear()
                for target in listener._targets:
                    exchange = listener._exchange_manager.get_exchange(
                        target.exchange)
                    ctxt, message, reply_q, requeue = exchange.poll(
                        target, listener._pool)
                    if message is not None:
                        return impl_fake.FakeIncomingMessage(
                            ctxt, message, reply_q, requeue)
                if deadline is None:
                    wake.wait()
                else:
                    pause = deadline - time.time()
                    if pause < 0:
                        break
                    wake.wait(pause)
            return None

        self.addCleanup(waiting.clear)
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.FakeExchange.deliver_message',
            deliver_message))
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.FakeListener.stop', stop))
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.FakeListener.poll',
            messaging_base.batch_poll_helper(poll)))


class PromptWorkerStop(fixtures.Fixture):
    """An idle executor worker stops as soon as it is told to.

    futurist's idle ``ThreadWorker`` waits for work ``MAX_IDLE_FOR`` (1 s)
    at a time and only then sees that it should stop, so every executor
    shut down with ``wait=True`` (Nova's at a cloud's clean-up, each RPC
    server's at a service's stop) waited up to a second per worker: most
    of a threading-mode scenario's wall time. Nova's own tests shorten the
    poll instead (``nova.test``: 0.01 s), which wakes every idle worker a
    hundred times a second. Here ``stop`` puts a wake-up in the worker's
    queue; an idle worker that takes one stops if it should and otherwise
    waits on. Threading mode only (eventlet's workers are green).
    """

    _WAKE = object()

    def _setUp(self):
        from futurist import _thread
        wake = self._WAKE
        real_stop = _thread.ThreadWorker.stop

        def stop(worker):
            real_stop(worker)
            worker.work_queue.put(wake)

        def wait_for_work(worker):
            worker.idle = True
            work = None
            while work is None:
                try:
                    work = worker.work_queue.get(True, worker.MAX_IDLE_FOR)
                except queue.Empty:
                    work = None
                else:
                    if work is wake:
                        # Not work: nothing will call task_done for it.
                        worker.work_queue.task_done()
                        work = None
                    else:
                        break
                if worker._is_dying():
                    raise _thread._Stopping()
            worker.idle = False
            return work

        self.useFixture(fixtures.MockPatchObject(
            _thread.ThreadWorker, 'stop', stop))
        self.useFixture(fixtures.MockPatchObject(
            _thread.ThreadWorker, '_wait_for_work', wait_for_work))


@functools.lru_cache(maxsize=None)
def _api_paste_ini():
    # Listing the distribution's files costs ~50 ms; the answer is fixed
    # for the life of the process.
    return install.nova_api_paste_ini()


def _use_if_there(fixture, name):
    """Use Nova's test fixture ``name`` where this Nova has it.

    Safety checks Nova's own tests added in later releases (Nova 33:
    DelayingExecutorWrapperCleanupFixture, RPCPollerCleanupFixture): an
    older Nova has neither the fixture nor what it checks.
    """
    cls = getattr(nova_fixtures, name, None)
    if cls is not None:
        fixture.useFixture(cls())


def _make_executors():
    """Before Nova 34, make the executors Nova makes on first use.

    Nova 32 and 33 keep them in ``nova.utils`` globals, which
    ``IsolatedExecutorFixture`` resets at its clean-up: made here, they
    belong to the cloud (kept with a kept cloud), as the executors of Nova
    34's ``thread_pool_factory`` do, not to the first test that used one.
    """
    if thread_pool_factory.__name__ != 'nova.utils':
        return
    for name in ('_get_default_executor', 'get_scatter_gather_executor',
                 'get_cache_images_executor'):
        getattr(thread_pool_factory, name, lambda: None)()


class NovaEnvironment(fixtures.Fixture):
    """Config, logging, RPC, databases and poison, as a Nova test has them.

    ``test_id`` names the test for Nova's per-test executors and
    notification routing.
    """

    def __init__(self, test_id):
        super().__init__()
        self.test_id = test_id

    def _setUp(self):
        if mode.THREADING:
            # First: in place until the last executor has stopped.
            self.useFixture(PromptWorkerStop())
        self.useFixture(offline.NoNetwork())
        self.useFixture(fixtures.EnvironmentVariable('OS_LOG_CAPTURE', '0'))
        # Logging first, so that it still captures what the executors log
        # when they shut down in clean-up.
        self.useFixture(log_fixture.get_logging_handle_error_fixture())
        root = std_logging.getLogger()
        # StandardLogging sets the root logger to DEBUG and leaves it so.
        self.addCleanup(root.setLevel, root.level)
        self.stdlog = self.useFixture(nova_fixtures.StandardLogging())
        # It builds every DEBUG record and formats it into a null handler,
        # so that Nova's tests catch a malformed debug message; nothing
        # here reads them, and building them cost 2-5% of Nova's work. The
        # root logger takes the level of the capture it set up first
        # (INFO, or DEBUG when OS_DEBUG asks): what it keeps still passes.
        root.setLevel(root.handlers[0].level)
        self.useFixture(
            nova_fixtures.PropagateTestCaseIdToChildEventlets(self.test_id))
        self.useFixture(nova_fixtures.OpenStackSDKFixture())
        # Nova 31 spawns on a green pool, not executors: its own fixture.
        isolated = (getattr(nova_fixtures, 'IsolatedExecutorFixture', None)
                    or nova_fixtures.IsolatedGreenPoolFixture)
        self.useFixture(isolated(self.test_id))
        _use_if_there(self, 'DelayingExecutorWrapperCleanupFixture')
        self.useFixture(KeepConfSettings())
        self.useFixture(nova_fixtures.ConfFixture(CONF))
        _make_executors()
        # Nova's tests turn versioned notifications on ('both') to wait
        # for them; the harness follows Nova's work itself and reads no
        # notification, so Nova keeps its own default (legacy ones only):
        # building versioned payloads nobody reads cost ~5% of a
        # scenario. A scenario's config can turn them back on.
        self.useFixture(nova_fixtures.ConfPatcher(
            group='notifications', notification_format='unversioned'))
        self.useFixture(nova_fixtures.ConfPatcher(
            group='wsgi', api_paste_config=_api_paste_ini()))
        # RPCFixture's clean-up drops in-flight messages by binding a new
        # dict to this class attribute; this patch, cleaned up after it,
        # puts back the dict that was there (and unused meanwhile).
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.FakeExchangeManager.'
            '_exchanges', {}))
        self.useFixture(nova_fixtures.RPCFixture('nova.test'))
        self.useFixture(PromptDelivery())
        # Notifications go to Nova's test driver, as in Nova's own tests.
        self.useFixture(nova_fixtures.ConfPatcher(
            group='oslo_messaging_notifications', driver=['test']))
        _use_if_there(self, 'RPCPollerCleanupFixture')
        self.useFixture(NovaGlobals())
        self.engines = self.useFixture(
            databases.ReusedEngines()).engines
        if mode.THREADING:
            self.useFixture(databases.InMemoryDatabases())
        self.cells = self.useFixture(databases.CellsDatabase())
        # After the databases: their migrations reset warning filters.
        self.useFixture(nova_fixtures.WarningsFixture())
        self.useFixture(ovo_fixture.StableObjectJsonFixture())
        self.useFixture(fixtures.EnvironmentVariable('http_proxy'))
        self.useFixture(nova_fixtures.PoisonFunctions())
        self.useFixture(nova_fixtures.ForbidNewLegacyNotificationFixture())
        self.useFixture(nova_fixtures.PrivsepNoHelperFixture())
        self.useFixture(mock_fixture.MockAutospecFixture())
        self.useFixture(nova_fixtures.ConfPatcher(
            group='filter_scheduler', build_failure_weight_multiplier=0.0))
        self.useFixture(nova_fixtures.GenericPoisonFixture())
        self.useFixture(nova_fixtures.SysFsPoisonFixture())
        self.useFixture(nova_fixtures.ImportModulePoisonFixture(
            {'guestfs', 'libvirt'}))
        self.useFixture(nova_fixtures.ComputeNodeIdFixture())
        self.useFixture(nova_fixtures.GreenThreadPoolShutdownWait())
