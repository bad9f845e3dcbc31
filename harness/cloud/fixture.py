"""``Cloud``: real Nova and real Placement in one process.

A ``Cloud`` is a ``fixtures.Fixture``. It stands up Nova's API (over
wsgi-intercept), conductor and scheduler, Placement's own WSGI app and
database, and Nova's stand-ins for Neutron, Glance and Cinder; computes are
started by name. Nothing periodic runs by itself: ``run_periodic`` runs a
task on purpose. Servers are driven through Nova's REST API as an admin,
as Tempest drives a real cloud, and each operation returns once Nova has
reached its resting state.
"""

from harness.cloud import databases
from harness.cloud import nova_env  # noqa: I100  (patches eventlet first)

import contextlib  # noqa: E402
import uuid  # noqa: E402

import fixtures  # noqa: E402
from oslo_log import log as logging  # noqa: E402

from nova.compute import rpcapi as compute_rpcapi  # noqa: E402
from nova import context  # noqa: E402
from nova import exception  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.tests.functional import fixtures as func_fixtures  # noqa: E402

from harness.cloud import activity  # noqa: E402
from harness.cloud import capacity  # noqa: E402
from harness.cloud import checkpoint  # noqa: E402
from harness.cloud import clock as clock_mod  # noqa: E402
# Also registers nova.virt.harness_faults, the drivers of hosts with
# 'fail:'.
from harness.cloud import faults  # noqa: E402
# Also registers nova.virt.harness_ironic, the drivers of hosts with
# 'nodes:'.
from harness.cloud import mode  # noqa: E402
from harness.cloud import nodes  # noqa: E402
from harness.cloud import perhost  # noqa: E402
from harness.cloud import race as race_mod  # noqa: E402
from harness.cloud import servers  # noqa: E402
from harness.cloud import services  # noqa: E402
from harness.cloud import snapshot_reader  # noqa: E402
from harness.cloud import threads  # noqa: E402
from harness.core import errors  # noqa: E402
from harness.core import hooks  # noqa: E402

LOG = logging.getLogger(__name__)

DEFAULT_DRIVER = 'fake.MediumFakeDriver'

#: The namespace of the fake driver's UUIDs (``NamedUUIDs``).
FAKE_NAMESPACE = uuid.UUID('5d2c7a1e-93b4-4f08-8e6a-1c7f0b2d4e93')


class NamedUUIDs(object):
    """``uuids.NAME`` as oslo's uuidsentinel, but the same in every process."""

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        return str(uuid.uuid5(FAKE_NAMESPACE, name))


# The cloud set up in this process, if any: two would share Nova's global
# config and fixtures, and the second fails deep inside them.
_ALIVE = []
# Pools that keep a cloud between tests (``reuse.shared_pool``): they give
# it up when another cloud stands up.
KEPT_BY = []


class Cloud(fixtures.Fixture):
    """Real Nova (API, conductor, scheduler, computes) and real Placement.

    :param test_id: the id of the test using the cloud, for Nova's logs and
        per-test executors; a fresh name by default.
    :param compute_driver: the virt driver computes get unless
        ``start_compute`` names another.
    :param timeout: seconds an operation may take to reach its resting
        state before it fails with the server's state.
    :param conf: Nova config for the whole cloud, as ``{group: {option:
        value}}`` (``DEFAULT`` for the default group), e.g.
        ``{'DEFAULT': {'resize_confirm_window': 120}}``.
    """

    def __init__(self, test_id=None, compute_driver=DEFAULT_DRIVER,
                 timeout=60.0, conf=None):
        super().__init__()
        self.test_id = test_id or 'harness.cloud.%s' % uuid.uuid4().hex[:8]
        self.compute_driver = compute_driver
        self.timeout = timeout
        self.conf = conf or {}

    def setUp(self):
        for pool in KEPT_BY:
            pool.discard()
        # Before any fixture, so the error is this one and not a
        # fixtures.MultipleExceptions wrapping it.
        if _ALIVE:
            raise errors.HarnessError(
                'cloud %s cannot start while cloud %s is alive in this '
                'process (they would share Nova\'s global config); clean '
                'that one up first, or discard the reuse.CloudPool that '
                'keeps it' % (self.test_id, _ALIVE[0].test_id))
        super().setUp()

    def _setUp(self):
        _ALIVE.append(self)
        self.addCleanup(_ALIVE.remove, self)
        self.useFixture(nova_env.FewerCollections())
        # Computes stopped by the test, by host (casts to them queue up).
        self._stopped = {}
        # The options a ``reconfigure`` changed since the cloud's start.
        self.reconfigured = {}
        # The clock first: every record Nova writes carries virtual time.
        self.clock = self.useFixture(clock_mod.Clock(runner=self.run_task))
        self.env = self.useFixture(nova_env.NovaEnvironment(self.test_id))
        shim = nova_env.TestShim(self, self.test_id)
        # Nova's fake driver names its nodes' UUIDs from oslo's sentinels,
        # drawn at random once per process: two equally good nodes were
        # then weighed in an order that followed the process (the
        # scheduler's host states come from a set). Derived from the
        # names instead, as the libvirt hosts' are (libvirt.NODE_NAMESPACE).
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.uuids', NamedUUIDs()))
        self.useFixture(nova_fixtures.ConfPatcher(
            compute_driver=self.compute_driver))
        for group, options in sorted(self.conf.items()):
            self.useFixture(nova_fixtures.ConfPatcher(
                group=None if group == 'DEFAULT' else group, **options))
        # Casts run as calls: an API request returns when the RPC chain it
        # started has returned, so only executor tasks are left to follow;
        # a cast's failure stays with the service that raised it.
        # A cast with no reply in time fails the step at the next wait for
        # Nova's threads (``Activity.unanswered``): the run went on
        # without its handler.
        self.casts = self.useFixture(nova_env.CastsWaited(
            shim, is_stopped=lambda host: host in self._stopped,
            unanswered=lambda error: self.activity.unanswered.append(error)))
        self.placement = self.useFixture(func_fixtures.PlacementFixture())
        self.useFixture(nova_env.InProcessHTTP(self.placement))
        self.neutron = self.useFixture(nova_fixtures.NeutronFixture(shim))
        self.glance = self.useFixture(nova_fixtures.GlanceFixture(shim))
        self.image_id = self.glance.image1['id']
        # Images a test created, by name (``create_image``).
        self.images = {}
        self.cinder = self.useFixture(nova_fixtures.CinderFixture(shim))
        # Nova's stand-ins for the other services, whose records a run
        # changes.
        self.stand_ins = (self.neutron, self.glance, self.cinder)
        self.useFixture(nova_fixtures.RealPolicyFixture())
        self.useFixture(nova_fixtures.AllServicesCurrent())
        self.notifier = self.useFixture(
            nova_fixtures.NotificationFixture(shim))
        api_fixture = self.useFixture(
            nova_fixtures.OSAPIFixture(api_version='v2.1'))
        self.api = api_fixture.admin_api
        self.api.microversion = 'latest'
        self.activity = self.useFixture(activity.Activity(self.timeout))
        self.thread_chains = (
            self.useFixture(threads.ThreadChains(self.activity))
            if mode.THREADING else None)
        self.race = self.useFixture(race_mod.RacePoints(self))
        # Faults a test arms on a running compute (a driver method or a
        # claim that fails); see harness.cloud.faults.
        self.faults = self.useFixture(faults.InjectedFaults(self))
        self.computes = {}
        self._libvirt_hosts = None
        self._host_mappings = {}
        # The scheduler reads its filters once, at start: enable the NUMA
        # and PCI fitting that profiled hosts need, as a deployment with
        # NUMA hosts and devices configures it (each passes any host when
        # the request has no NUMA topology or no PCI request).
        filters = list(nova_env.CONF.filter_scheduler.enabled_filters)
        filters += [name for name in ('NUMATopologyFilter',
                                      'PciPassthroughFilter')
                    if name not in filters]
        self.useFixture(nova_fixtures.ConfPatcher(
            group='filter_scheduler', enabled_filters=filters))
        self.conductor = self._start_service('conductor')
        self.scheduler = self._start_service('scheduler')
        for name, service in (('conductor', self.conductor),
                              ('scheduler', self.scheduler)):
            self.clock.add_service(name, service)
            self.race.attach(service)
        self.servers = servers.ServerOps(self)
        self.services = services.ServiceOps(self)
        # The bare-metal service's side of multi-node computes.
        self.nodes = nodes.NodeOps(self)
        self.reader = snapshot_reader.SnapshotReader(self)
        if mode.THREADING:
            # First of the clean-ups: what Nova still has in line (work
            # spawned since the test last waited for it, such as the
            # scheduler's start-up read of every host's instances) runs
            # before the services stop, not after the cloud is gone.
            self.addCleanup(self._finish_nova_work)
        hooks.notify('cloud_started', self)

    def useFixture(self, fixture):
        """``Fixture.useFixture``, cleaning up after a failed ``setUp``.

        Nova's fixtures override ``setUp`` itself; one that raises after
        its ``super().setUp()`` (a service Nova refuses to start) leaves
        the clean-ups it registered unrun, as the ``fixtures`` library
        runs them only after a failed ``_setUp``: its patches would stay
        in the process (the API fixture's mock of keystonemiddleware's
        ``filter_factory`` fails the next cloud's start). They run here,
        before the cloud's own clean-ups, in the order they would have.
        """
        try:
            return super().useFixture(fixture)
        except Exception:
            if getattr(fixture, '_cleanups', None) is not None:
                try:
                    fixture.cleanUp()
                except Exception:
                    LOG.warning('cleaning up after %s failed',
                                type(fixture).__name__, exc_info=True)
            raise

    def _finish_nova_work(self):
        try:
            self.activity.wait_idle(
                self.timeout, lambda: 'before the cloud is torn down')
        except errors.HarnessError:
            # The test has its own failure to report; the clean-up goes on.
            LOG.warning('Nova was busy as the cloud was torn down',
                        exc_info=True)

    # -- services -----------------------------------------------------

    def _start_service(self, binary, host=None, **kwargs):
        # No timers: heartbeats and periodic tasks run only when the clock
        # says so (see harness.clock).
        conf = (nova_fixtures.ConfPatcher(host=host) if host
                else contextlib.nullcontext())
        with conf:
            fixture = self.useFixture(nova_fixtures.ServiceFixture(
                binary, host, report_interval=0, periodic_enable=False,
                **kwargs))
        return fixture.service

    def start_compute(self, host, driver=None, profile=None):
        """Start nova-compute on ``host``.

        :param driver: a ``compute_driver`` name (``fake.MediumFakeDriver``)
            or ``None`` for the cloud's default.
        :param profile: a host profile (name from ``fixtures/hosts``, path,
            or ``HostProfile``): the host then runs Nova's libvirt driver
            over a fake libvirt connection shaped like that machine, with
            the profile's own config.
        """
        if host in self.computes:
            raise errors.HarnessError('compute %r is already running' % host)
        with nova_fixtures.ConfPatcher(
                compute_driver=driver or self.compute_driver):
            if profile is None:
                service = self._start_compute_service(host)
            else:
                hosts = self.libvirt_hosts()
                with hosts.starting(host, profile):
                    service = self._start_compute_service(host)
                hosts.started(host, service)
        return self._running(host, service)

    def _running(self, host, service):
        """Put a started compute under the clock's and race points' watch."""
        self.computes[host] = service
        self.clock.add_service(host, service)
        self.race.attach(service, host)
        if nodes.is_multi_node(service.manager.driver):
            # Its driver passes a race point of its own (is_node_deleted).
            service.manager.driver.race_points = self.race
        return service

    def libvirt_hosts(self):
        """The fixture behind profiled (libvirt) hosts, made on first use."""
        if self._libvirt_hosts is None:
            from harness.cloud import libvirt
            self._libvirt_hosts = self.useFixture(libvirt.LibvirtHosts())
        return self._libvirt_hosts

    def _start_compute_service(self, host, keep_driver=None,
                               map_host=True):
        ctxt = context.get_admin_context()
        cell = self.env.cells.cell_mappings[databases.CELL1_NAME]
        # The host mapping must exist before the compute starts, as
        # `nova-manage cell_v2 discover_hosts` would have made it. Looked
        # up, not remembered: deleting a compute service destroys it.
        # Unless told not to (``map_host``): then it waits for
        # ``discover_hosts`` (the one it had still says its cell).
        try:
            self._host_mappings[host] = objects.HostMapping.get_by_host(
                ctxt, host)
        except exception.HostMappingNotFound:
            if map_host:
                mapping = objects.HostMapping(
                    context=ctxt, host=host, cell_mapping=cell)
                mapping.create()
                self._host_mappings[host] = mapping
        patch = (fixtures.MonkeyPatch(
            'nova.virt.driver.load_compute_driver',
            lambda *a, **k: keep_driver)
            if keep_driver is not None else contextlib.nullcontext())
        with patch:
            # Nova 33 on: computes listen on a second topic too.
            alt = getattr(compute_rpcapi, 'RPC_TOPIC_ALT', None)
            service = self._start_service(
                'compute', host, cell=cell,
                **({'topic_alt': alt} if alt else {}))
        if not map_host:
            return service
        with context.target_cell(ctxt, cell) as cctxt:
            try:
                found = objects.ComputeNodeList.get_all_by_host(cctxt, host)
            except exception.ComputeHostNotFound:
                # A multi-node compute managing no node yet.
                found = []
            for node in found:
                if not node.mapped:
                    node.mapped = 1
                    node.save()
        return service

    def compute(self, host):
        try:
            return self.computes[host]
        except KeyError:
            raise errors.UnknownName(
                'no compute %r is running; running: %s'
                % (host, ', '.join(sorted(self.computes)) or 'none'))

    #: The control-plane services ``reconfigure`` may restart.
    CONTROLLERS = ('conductor', 'scheduler')

    def reconfigure(self, config, restart=CONTROLLERS):
        """Change the whole cloud's ``nova.conf``; restart ``restart``.

        ``config`` is ``{group: {option: value}}``, set for every service
        (Nova's config is the process's), as an operator edits nova.conf
        everywhere: the API reads most options at each request; the
        conductor and scheduler each restart (a new service, so that what
        they read at start, the scheduler's filters and weighers, is read
        again); the computes read the new values where Nova reads them at
        each use, and at their next start. Until the cloud is gone.
        """
        for group, options in sorted(config.items()):
            self.useFixture(nova_fixtures.ConfPatcher(
                group=None if group == 'DEFAULT' else group, **options))
            self.reconfigured.setdefault(group, {}).update(options)
        self.activity.wait_idle(self.timeout,
                                lambda: 'before restarting %s' % (
                                    ', '.join(restart)))
        for name in restart:
            old = getattr(self, name)
            old.stop()
            self.clock.remove_service(name)
            service = self._start_service(name)
            setattr(self, name, service)
            self.clock.add_service(name, service)
            self.race.attach(service)
        self.activity.wait_idle(self.timeout,
                                lambda: 'after restarting %s' % (
                                    ', '.join(restart)))

    def stop_compute(self, host):
        """Stop nova-compute on ``host``; its records stay in the DB."""
        service = self.compute(host)
        service.stop()
        del self.computes[host]
        self.clock.remove_service(host)
        self._stopped[host] = service

    def kill_compute(self, host):
        """Kill nova-compute on ``host`` now, without a graceful stop.

        Its RPC servers take no more messages (the ones in flight die with
        it) and it leaves the clock, as with ``stop_compute``; its work in
        flight is not waited for (``harness.cloud.dying`` ends it).
        """
        service = self.compute(host)
        for server in (service.rpcserver,
                       getattr(service, 'rpcserver_alt', None)):
            if server is not None:
                server.stop()
        del self.computes[host]
        self.clock.remove_service(host)
        self._stopped[host] = service
        return service

    def stopped_computes(self):
        """Hosts whose compute was stopped and not started again."""
        return sorted(self._stopped)

    def restart_compute(self, host, keep_hypervisor_state=True,
                        config=None, map_host=True):
        """Stop and start nova-compute on ``host`` with a new manager.

        The compute node keeps its UUID (its record stays in the cell DB).
        With ``keep_hypervisor_state`` the guests defined on the hypervisor
        survive, as they do across a real nova-compute restart.

        :param config: ``{section: {option: value}}`` (``DEFAULT`` or
            ``compute``), host-local options (``harness.cloud.perhost``)
            the compute starts with on top of its own, and keeps for its
            later starts, as an edited ``nova.conf`` would. A start Nova
            refuses (``InvalidConfiguration``) raises ``OperationFailed``
            and leaves the compute stopped.
        :param map_host: map the host to the cell if it has no host
            mapping (its service was deleted), as ``discover_hosts`` would
            have; else it stays unmapped until ``discover_hosts``.
        """
        if host in self.computes:
            self.stop_compute(host)
        if host not in self._stopped:
            raise errors.UnknownName('no compute %r was started' % host)
        if config:
            self._reconfigure(host, config)
        old = self._stopped[host]
        libvirt_hosts = self._libvirt_hosts
        try:
            if libvirt_hosts is not None and libvirt_hosts.has(host):
                with libvirt_hosts.restarting(host, old,
                                              keep_hypervisor_state):
                    service = self._start_compute_service(
                        host, map_host=map_host)
                libvirt_hosts.started(host, service)
            else:
                driver = old.manager.driver if keep_hypervisor_state \
                    else None
                conf = contextlib.nullcontext()
                if nodes.is_multi_node(old.manager.driver):
                    # Its nodes are the bare-metal service's: a new
                    # hypervisor view finds them where they were. Nova
                    # reads the driver's name as it starts (an Ironic-like
                    # one has no node identity of its own).
                    if driver is None:
                        driver = nodes.fresh_like(old.manager.driver)
                    conf = nova_fixtures.ConfPatcher(
                        compute_driver=nodes.loaded_name(driver))
                with conf:
                    service = self._start_compute_service(
                        host, keep_driver=driver, map_host=map_host)
        except exception.InvalidConfiguration as exc:
            raise errors.OperationFailed(
                'nova-compute on %s refused to start: %s' % (host, exc))
        del self._stopped[host]
        self._running(host, service)
        # It reports in as it starts (Nova's first report_state comes 5 s,
        # INITIAL_REPORTING_DELAY, after the start; the clock's only after
        # report_interval): until then the API would still see a compute
        # that was down past service_down_time as down, and delete its
        # servers locally. The loader's State sees it up at once.
        service.servicegroup_api._driver._report_state(service)
        # What was cast to it while it was down, as a message bus would
        # hand it over now; waited for, so the next step starts at rest.
        if self.casts.deliver(host):
            self.activity.wait_idle(
                self.timeout,
                lambda: 'after the casts queued for %s while stopped' % host)
            self.race.check()
        return service

    def replace_compute(self, host, driver=None, profile=None):
        """A new nova-compute on ``host``, started as at the cloud's start.

        For a kept cloud (``harness.cloud.reuse``): the compute a run
        stopped, killed or restarted is stopped if it runs and forgotten,
        and a new one starts from ``driver``/``profile`` (the host's spec:
        a fresh machine, the profile's own config, not what a restart's
        ``config`` made of it).
        """
        if host in self.computes:
            self.stop_compute(host)
        if host not in self._stopped:
            raise errors.UnknownName('no compute %r was started' % host)
        del self._stopped[host]
        return self.start_compute(host, driver=driver, profile=profile)

    def _reconfigure(self, host, config):
        """Give ``host`` its changed config before it starts again."""
        libvirt_hosts = self._libvirt_hosts
        if libvirt_hosts is not None and libvirt_hosts.has(host):
            libvirt_hosts.reconfigure(host, config)
            return
        conf = perhost.installed() or self.useFixture(perhost.PerHostConf())
        conf.update_host(host, {
            (None if group == 'DEFAULT' else group, name): value
            for group, options in config.items()
            for name, value in options.items()})

    # -- periodic tasks -------------------------------------------------

    def run_periodic(self, task, host):
        """Run the periodic ``task`` of the service on ``host`` now.

        ``host`` is a compute's host name, or ``conductor``/``scheduler``.
        """
        self.clock.run(task, host)

    def run_task(self, task, host, wait=True):
        """Run ``task`` of the service on ``host`` (the clock's runner).

        With ``wait`` it returns once the work the task started is done;
        injections run it without waiting, from inside Nova's own work.
        """
        controllers = {'conductor': self.conductor,
                       'scheduler': self.scheduler}
        service = self.computes.get(host) or controllers[host]
        ctxt = context.get_admin_context()
        mapping = self._host_mappings.get(host)
        with activity.acting_as(host):
            if mapping is not None:
                with context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
                    getattr(service.manager, task)(cctxt)
            else:
                getattr(service.manager, task)(ctxt)
        if wait:
            self.activity.wait_idle(
                self.timeout,
                lambda: 'after periodic %s on %s' % (task, host))
            self.race.check()

    def discover_hosts(self):
        """``nova-manage cell_v2 discover_hosts``: the hosts it mapped.

        Nova maps each compute node record not flagged ``mapped`` whose
        host has no host mapping yet, and flags the records it saw.
        """
        from nova.objects import host_mapping
        ctxt = context.get_admin_context()
        made = host_mapping.discover_hosts(ctxt, status_fn=lambda m: None)
        for mapping in made:
            self._host_mappings[mapping.host] = mapping
        return sorted(mapping.host for mapping in made)

    def archive_deleted_rows(self, max_rows):
        """``nova-manage db archive_deleted_rows`` on the cell's database.

        Returns table name -> how many rows Nova moved to its shadow table.
        """
        from nova.db.main import api as main_db
        ctxt = context.get_admin_context()
        cell = self.env.cells.cell_mappings[databases.CELL1_NAME]
        with context.target_cell(ctxt, cell) as cctxt:
            archived = main_db.archive_deleted_rows(cctxt, max_rows=max_rows)
        return dict(archived[0])

    def run_periodics(self, task='update_available_resource', hosts=None):
        """Run ``task`` on each host, in the order given (all by name)."""
        for host in hosts or sorted(self.computes):
            self.run_periodic(task, host)

    # -- flavors and snapshots -------------------------------------------

    def create_flavor(self, name, vcpus, ram, disk, extra_specs=None,
                      ephemeral=0, swap=0):
        """Create a flavor through the API and return its API view."""
        flavor = self.api.post_flavor({'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk,
            'OS-FLV-EXT-DATA:ephemeral': ephemeral, 'swap': swap,
            'id': name}})
        if extra_specs:
            self.api.post_extra_spec(
                flavor['id'], {'extra_specs': dict(extra_specs)})
        return flavor

    def create_image(self, name, properties=None):
        """Add image ``name`` to the image stand-in; return its id.

        ``properties`` are Glance image properties as Nova reads them
        (``hw_cpu_policy``, ``hw_numa_nodes``, ``hw_mem_page_size``, ...);
        the image is otherwise the stand-in's first (raw, x86_64).
        """
        if name in self.images:
            raise errors.HarnessError('an image named %r exists' % name)
        meta = {key: value for key, value in self.glance.image1.items()
                if key not in ('id', 'name', 'properties')}
        meta['name'] = name
        meta['properties'] = dict(self.glance.image1['properties'],
                                  **(properties or {}))
        image_id = self.glance.create(context.get_admin_context(),
                                      meta)['id']
        self.images[name] = image_id
        return image_id

    def image_ref(self, name=None):
        """The id of image ``name`` (``create_image``), or the default."""
        if name is None:
            return self.image_id
        try:
            return self.images[name]
        except KeyError:
            raise errors.UnknownName(
                'no image named %r; known: %s'
                % (name, ', '.join(sorted(self.images)) or 'none'))

    def snapshot(self):
        """The accounting now: Placement's and each tracker's view."""
        return self.reader.read()

    def claim_test(self, host, node, request):
        """Whether ``host``'s tracker takes ``request``, without a claim.

        ``request``: a ``harness.core.capacity.Request``; the answer is
        Nova's NUMA fitting on the tracker's topology
        (``harness.cloud.capacity``): the cells it would use, or None.
        """
        return capacity.claim_test(self, host, node, request)

    def trial(self):
        """A block whose effects on the cloud are all put back after it.

        ``with cloud.trial(): ...`` checkpoints the cloud (databases,
        clock, trackers, report clients' caches, hypervisors, race points,
        notifications, queued casts) and restores it when the block ends,
        so a check can run Nova code without changing what it checks.
        """
        return checkpoint.trial(self)
