"""A cloud kept between runs of scenarios of the same shape.

Standing a cloud up (Nova's API app, the services, the computes) is
about a third of a short scenario's time. Scenarios with the same shape
(hosts, drivers, profiles, config, and the bug put back if any:
``shape``) can share one, each run making its own flavors and images
on it. ``CloudPool.cloud(scenario)`` gives a cloud that is

- the first time, stood up as ``runner.run`` stands one up and
  *settled*: every cache of host states, minimum versions and
  availability zones is dropped, and each compute keeps the resource
  tracker its start gave it (no second start-up pass: a compute node
  record takes ``[DEFAULT] cpu_allocation_ratio`` and its kin only at its
  compute's second pass, ``ResourceTracker._copy_resources``, so a second
  pass here would start a kept cloud where a new one, and Nova's own
  tests, have not got to yet). A ``Checkpoint`` of the settled cloud is
  taken at once, before any step;
- the next times, that cloud put back to its checkpoint: every database
  (Nova's API and cell databases, Placement's) copied back with SQLite's
  backup API, the clock, the counters, the race recording, the queued
  casts, the stand-in services' (Neutron, Glance, Cinder) records, the
  report clients' caches of Placement's providers and each compute's
  resource tracker (which match those databases at the checkpoint); then
  settled again, with a copy of the checkpoint's tracker in place of a
  new start-up pass over the same records.

A first and a later run of a scenario thus start from the same state by
construction; ``tests/functional/test_reuse.py`` checks they give the
same timeline.

A compute a run stopped, killed, restarted or whose service it deleted
is started anew after the run, from its host's spec as the stand-up
started it (``CloudPool._replace_computes``): the checkpoint takes the
new service, the next run puts the databases back over whatever that
start wrote, and its tracker is the checkpoint's with the new compute's
driver and report client (``Checkpoint.rebind``). A cloud is not kept
when a run raised, left casts queued for a stopped compute, made a
database nobody counts, left Nova busy, or left a compute that cannot
start as it first did (a fake host restarted with config of its own, a
compute of several nodes): the next run then gets a new cloud. Only one
cloud is alive at a time (two would share Nova's global config).

``shared_pool()`` is the process's pool, kept from one test to the next
(the functional suite's scenario tests run on it): before each run on a
kept cloud it proves every database back at the checkpoint byte for byte
(``Checkpoint.verify``), and it gives its cloud up when anything else in
the process stands a cloud up (``fixture.Cloud`` asks it to).
"""

import atexit
import collections
import contextlib
import json
import os

import fixtures

from nova import availability_zones
from nova.compute import api as compute_api
from nova.compute import manager as compute_manager
from nova.compute import rpcapi as compute_rpcapi
from nova import context
from nova.limit import utils as limit_utils
from nova import objects
from nova import quota
from nova.scheduler import host_manager
from nova.scheduler import utils as scheduler_utils
from nova import service_auth
from nova.tests import fixtures as nova_fixtures

from harness.cloud import activity as activity_mod
from harness.cloud import checkpoint as checkpoint_mod
from harness.cloud import databases
from harness.cloud import fixture as cloud_mod
from harness.cloud import limits
from harness.cloud import nodes
from harness.cloud import perhost
from harness.cloud import servers
from harness.cloud import snapshot_reader
from harness.core import errors
from harness.core import shapes


def shape(scenario, cloud_kwargs=None, fixtures=()):
    """What two scenarios must share to run on one cloud, as a key.

    The scenario's ``shapes.cloud_shape`` (options and hosts; not its
    flavors and images, which each run makes on the cloud put back),
    the cloud's arguments, and ``fixtures`` compared by class: the pool
    keeps only fixtures that hold no state between runs (see
    ``keepable``).
    """
    return repr((
        [type(f).__module__ + '.' + type(f).__qualname__ for f in fixtures],
        shapes.cloud_shape(scenario),
        sorted((cloud_kwargs or {}).items())))


def keepable(fixtures):
    """Whether a pool may keep ``fixtures`` in place with its cloud.

    Only fixtures that say they carry nothing from one run to the next
    (``stateless``, as a bug's reintroduction does): the pool sets up the
    first run's and keeps it for every later run of the same shape.
    """
    return all(getattr(f, 'stateless', False) for f in fixtures)


def stand_up(stack, scenario, test_id=None, cloud_kwargs=None,
             fixtures=()):
    """A new cloud with the scenario's hosts, flavors and images.

    ``fixtures`` are in place before the computes start (a bug's
    reintroduction may patch what a service binds at start).
    """
    cloud = start_services(stack, scenario, test_id, cloud_kwargs, fixtures)
    add_catalogue(cloud, scenario)
    return cloud


def start_services(stack, scenario, test_id=None, cloud_kwargs=None,
                   fixtures=()):
    """A new cloud with the scenario's hosts, on ``stack``."""
    if scenario.weights:
        # Before the scheduler starts: it loads its weighers at start.
        stack.enter_context(nova_fixtures.HostNameWeigherFixture(
            dict(scenario.weights)))
    cloud = stack.enter_context(cloud_mod.Cloud(
        test_id=test_id or 'scenario.%s' % scenario.id,
        conf=scenario.config, **(cloud_kwargs or {})))
    if scenario.limits:
        stack.enter_context(limits.UnifiedLimits(scenario.limits))
    for fixture in fixtures:
        stack.enter_context(fixture)
    for host in sorted(scenario.hosts.values(), key=lambda h: h.name):
        cloud.start_compute(host.name, driver=host.driver,
                            profile=host.profile)
    return cloud


def add_catalogue(cloud, scenario):
    """The scenario's flavors and images, made through the cloud."""
    for flavor in scenario.flavors.values():
        cloud.create_flavor(flavor.name, vcpus=flavor.vcpus,
                            ram=flavor.ram, disk=flavor.disk,
                            ephemeral=flavor.ephemeral, swap=flavor.swap,
                            extra_specs=flavor.extra_specs)
    for name, properties in sorted(scenario.images.items()):
        cloud.create_image(name, properties)


def settle(cloud, checkpoint=None):
    """Every compute on an empty hypervisor, every cache dropped or put back.

    A compute keeps its service and manager (what its RPC server, the
    clock and the race points are wired to) and gets a hypervisor with no
    guests. Given the ``checkpoint`` the databases were just put back to,
    it gets a copy of the tracker it had when the checkpoint was taken;
    without one (the cloud just stood up), it keeps the tracker of its
    start, as a new cloud's compute does. Its report client keeps the
    provider cache the checkpoint put back (a restart would fetch the same
    records from Placement).
    """
    ctxt = context.get_admin_context()
    objects.Service.clear_min_version_cache()
    availability_zones.reset_cache()
    for binary, service in (('nova-conductor', cloud.conductor),
                            ('nova-scheduler', cloud.scheduler)):
        service.service_ref = objects.Service.get_by_host_and_binary(
            ctxt, service.host, binary)
    cloud.scheduler.manager.host_manager = host_manager.HostManager()
    for host, service in sorted(cloud.computes.items()):
        _settle_compute(cloud, host, service, checkpoint)
    cloud.activity.wait_idle(cloud.timeout,
                             lambda: 'after settling the computes')
    cloud.race.check()
    cloud.servers = servers.ServerOps(cloud)
    cloud.reader = snapshot_reader.SnapshotReader(cloud)


def _settle_compute(cloud, host, service, checkpoint):
    manager = service.manager
    libvirt_hosts = cloud._libvirt_hosts
    if libvirt_hosts is not None and libvirt_hosts.has(host):
        libvirt_hosts.empty_hypervisor(host, service)
    else:
        _empty_fake_hypervisor(manager.driver)
    # What ComputeManager.__init__ starts empty and a run fills.
    manager.instance_events = compute_manager.InstanceEvents()
    if hasattr(manager, 'syncs_in_progress'):
        with manager.syncs_in_progress() as syncs:
            syncs.clear()
    else:
        # Before Nova 33: a plain dict, no lock.
        manager._syncs_in_progress.clear()
    for name in ('_waiting_live_migrations', '_pending_dest_live_migrations',
                 '_pending_dest_resizes'):
        if hasattr(manager, name):
            setattr(manager, name, {})
    if checkpoint is not None:
        manager.rt = checkpoint.tracker(host)
    ctxt = context.get_admin_context()
    cell = cloud.env.cells.cell_mappings[databases.CELL1_NAME]
    with activity_mod.acting_as(host):
        with context.target_cell(ctxt, cell) as cctxt:
            service_ref = objects.Service.get_by_host_and_binary(
                cctxt, host, 'nova-compute')
            service.service_ref = service_ref
            # ComputeManager.pre_start_hook, with the cell's context.
            manager.service_ref = service_ref
            manager.rt.set_service_ref(service_ref)


# Nova's module globals that its code fills on first use (what their
# modules' reset_globals() or reset_cache() empty): the cells (of the
# context, and of the compute API, which lists them for a deleted compute
# service's instances), the compute RPC router and version cap, the
# scheduler's group-policy support, service auth, the availability
# zones' cache client.
_LAZY_GLOBALS = (
    (availability_zones, ('MC',)),
    (compute_api, ('CELLS',)),
    (context, ('CELL_CACHE', 'CELLS')),
    (compute_rpcapi, ('NO_COMPUTES_WARNING', 'LAST_VERSION', '_ROUTER')),
    (scheduler_utils, ('_SUPPORTS_AFFINITY', '_SUPPORTS_ANTI_AFFINITY',
                       '_SUPPORTS_SOFT_AFFINITY',
                       '_SUPPORTS_SOFT_ANTI_AFFINITY')),
    # _SERVICE_AUTH before Nova 33.
    (service_auth, ('_AUTHS', '_SESSIONS', '_SERVICE_AUTH')),
    # Unified limits (``limits:``): Keystone's client, and whether the
    # instance mappings' queued_for_delete was filled in (counting servers
    # from Placement reads it).
    (limit_utils, ('IDENTITY_CLIENT',)),
    (quota, ('UID_QFD_POPULATED_CACHE_ALL',
             'UID_QFD_POPULATED_CACHE_BY_PROJECT')),
)


def lazy_globals():
    """The values of those globals now, to put back with ``set_globals``."""
    return [(module, name, getattr(module, name))
            for module, names in _LAZY_GLOBALS for name in names
            if hasattr(module, name)]  # each release has its own


def set_globals(saved):
    """Put back what ``lazy_globals`` gave.

    A kept cloud's next run fills them as its first run did, and nothing
    a run filled outlives it (the leak check sees the process as it was).
    """
    for module, name, value in saved:
        setattr(module, name, value)


# What a fake driver's start (init_host) set, or its manager registered.
_FAKE_DRIVER_WIRING = ('virtapi', '_host', '_nodes', 'host_status_base',
                       '_compute_event_callback')


def _empty_fake_hypervisor(driver):
    from nova.virt import fake
    if not isinstance(driver, fake.FakeDriver):
        raise errors.HarnessError(
            'a compute on %s cannot be reused' % type(driver).__name__)
    wiring = {name: vars(driver)[name] for name in _FAKE_DRIVER_WIRING
              if name in vars(driver)}
    type(driver).__init__(driver, driver.virtapi)
    vars(driver).update(wiring)


class CloudPool(fixtures.Fixture):
    """Keeps at most one cloud alive, for the next scenario of its shape.

    ``with pool.cloud(scenario) as cloud:`` gives a settled cloud with the
    scenario's hosts and flavors; what the run leaves is put back to the
    checkpoint next time, or the cloud is torn down when it cannot be.
    ``made`` and ``reused`` count clouds stood up and runs on a kept one;
    ``given_up`` counts the clouds it tore down itself, by why (the
    reasons below the class; a ``discard()`` asked from outside is not
    counted).

    :param around_change: a context manager factory entered around every
        stand-up and tear-down of the kept cloud (a pool kept between
        tests tells the leak check, ``leaks.pool_changing``).
    """

    def __init__(self, around_change=contextlib.nullcontext):
        super().__init__()
        self._around_change = around_change

    def _setUp(self):
        self._key = None
        self._stack = None
        self._cloud = None
        self._checkpoint = None
        self.made = 0
        self.reused = 0
        #: Runs after which stopped or restarted computes started anew.
        self.replaced = 0
        self.given_up = collections.Counter()
        #: Whether the cloud of the last ``cloud()`` was a kept one.
        self.last_was_kept = False
        self.addCleanup(self.discard)

    def discard(self):
        """Tear down the kept cloud, if any."""
        if self._stack is None and self._checkpoint is None:
            return
        with self._around_change():
            self._discard()

    def _discard(self):
        stack, self._stack, self._cloud, self._key = (
            self._stack, None, None, None)
        if self._checkpoint is not None:
            self._checkpoint.close()
            self._checkpoint = None
        if stack is not None:
            stack.close()

    @contextlib.contextmanager
    def cloud(self, scenario, test_id=None, cloud_kwargs=None, fixtures=()):
        """The settled cloud for ``scenario``, with ``fixtures`` in place.

        ``fixtures`` must be ``keepable``: on a kept cloud the ones set up
        with it stay in place, and these are not used.
        """
        if not keepable(fixtures):
            raise errors.HarnessError(
                'a kept cloud cannot keep fixtures that hold state '
                'between runs: %s' % ', '.join(
                    type(f).__name__ for f in fixtures
                    if not getattr(f, 'stateless', False)))
        key = shape(scenario, cloud_kwargs, fixtures)
        if self._cloud is not None and key == self._key:
            try:
                self._checkpoint.restore(self._cloud)
                self._checkpoint.verify(self._cloud)
                settle(self._cloud, self._checkpoint)
            except BaseException:
                self._give_up(NOT_PUT_BACK)
                raise
            # Images made after the checkpoint are gone from the image
            # stand-in with it; the cloud's names for them go too.
            self._cloud.images.clear()
            self.reused += 1
            self.last_was_kept = True
        else:
            if self._cloud is not None:
                self.given_up[OTHER_SHAPE] += 1
            with self._around_change():
                self._discard()
                self._stand_up(key, scenario, test_id, cloud_kwargs,
                               fixtures)
            self.made += 1
            self.last_was_kept = False
        try:
            add_catalogue(self._cloud, scenario)
            yield self._cloud
        except BaseException:
            self._give_up(RAISED)
            raise
        reason = self._not_reusable(self._cloud)
        if reason is None and not self._checkpoint.matches(self._cloud):
            reason = self._replace_computes(self._cloud)
        if reason:
            self._give_up(reason)
        else:
            set_globals(self._lazy_globals)

    def _give_up(self, reason):
        if self._cloud is not None:
            self.given_up[reason] += 1
        self.discard()

    def _stand_up(self, key, scenario, test_id, cloud_kwargs, fixtures):
        stack = contextlib.ExitStack()
        try:
            cloud = start_services(stack, scenario, test_id, cloud_kwargs,
                                   fixtures)
            settle(cloud)
            self._checkpoint = checkpoint_mod.Checkpoint(cloud)
        except BaseException:
            stack.close()
            raise
        self._stack, self._cloud, self._key = stack, cloud, key
        self._lazy_globals = lazy_globals()
        # What a replaced compute starts from (``_replace_computes``).
        self._hosts = {host.name: host for host in scenario.hosts.values()}
        self._host_conf = _host_conf()
        self._started_anew = 0

    def _not_reusable(self, cloud):
        """Why ``cloud`` cannot be put back for the next run, or None.

        None too for a cloud whose computes a run stopped, killed or
        restarted, when ``_replace_computes`` can start them anew.
        """
        if not (self._checkpoint.matches(cloud)
                or self._replaceable(cloud)):
            return COMPUTES_CHANGED
        if cloud.reconfigured:
            return RECONFIGURED
        if cloud.casts.queued:
            return CASTS_QUEUED
        if cloud.race.failures:
            return RACE_FAILED
        if not cloud.activity.idle():
            return BUSY
        if databases.database_writes() is None:
            return UNCOUNTED_DATABASE
        return None

    def _changed(self, cloud):
        """The hosts whose compute is not the checkpoint's any more."""
        return [host for host, service
                in sorted(self._checkpoint.services.items())
                if cloud.computes.get(host) is not service]

    def _replaceable(self, cloud):
        """Whether each changed compute can start anew as it first did.

        Not when the run made a database or started a compute the cloud
        was not stood up with, when the cloud has started computes anew
        ``STARTS_ANEW_PER_CLOUD`` times already, or for a compute on a fake
        driver left with config of its own that its first start did not
        have (a restart's ``config``; a profiled host's start takes its
        profile's again) or one managing several nodes (their records are
        the bare-metal stand-in's).
        """
        if list(cloud.env.engines) != self._checkpoint.engines:
            return False
        if self._started_anew >= STARTS_ANEW_PER_CLOUD:
            return False
        known = set(self._checkpoint.services)
        if not (set(cloud.computes) | set(cloud.stopped_computes())) <= known:
            return False
        conf = _host_conf()
        for host in self._changed(cloud):
            # A host's driver is its spec's, whichever compute runs it.
            if nodes.is_multi_node(
                    self._checkpoint.services[host].manager.driver):
                return False
            if self._hosts[host].profile is None and (
                    conf.get(host) != self._host_conf.get(host)):
                return False
        return True

    def _replace_computes(self, cloud):
        """Start the changed computes anew; why not, or None.

        Each stopped (or stopped now) and started from its host's spec
        (``Cloud.replace_compute``), the checkpoint taking the new service
        (``Checkpoint.rebind``), and their work waited for: the next run
        puts the databases back over whatever this start wrote, proves
        them back byte for byte, and settles every compute as usual. A
        start that fails gives the cloud up.
        """
        with self._around_change():
            try:
                for host in self._changed(cloud):
                    spec = self._hosts[host]
                    self._checkpoint.rebind(host, cloud.replace_compute(
                        host, driver=spec.driver, profile=spec.profile))
                cloud.activity.wait_idle(
                    cloud.timeout, lambda: 'after starting computes anew')
                cloud.race.check()
            except Exception:
                return NOT_REPLACED
            # The starts filled Nova's lazy globals: put back as any run
            # leaves them, with the pool's change (the leak check's view).
            set_globals(self._lazy_globals)
        self.replaced += 1
        self._started_anew += 1
        return None


# Runs after which one cloud starts computes anew, at most. The old
# services stay referenced by the cloud's clean-ups (Nova's service
# fixtures, the race points' wrappers) until it is torn down: about 1.3
# MB per run (40 runs of a libvirt restart scenario on one cloud, 231 MB
# after the first, 287 MB after the last). Then the cloud is given up.
STARTS_ANEW_PER_CLOUD = 20


def _host_conf():
    """Each host's own config now (``perhost``), as a plain dict."""
    conf = perhost.installed()
    if conf is None:
        return {}
    return {host: dict(values) for host, values in conf.overrides.items()}


# Why a pool gave its cloud up (``CloudPool.given_up``).
COMPUTES_CHANGED = ('a compute was stopped, restarted or deleted and '
                    'cannot start anew')
NOT_REPLACED = 'a compute stopped, restarted or deleted did not start anew'
CASTS_QUEUED = 'casts still queued for a stopped compute'
RECONFIGURED = 'a step changed the whole cloud\'s config'
RACE_FAILED = 'a race point failed'
BUSY = 'Nova still busy'
UNCOUNTED_DATABASE = 'a database nobody counts'
RAISED = 'the run raised'
NOT_PUT_BACK = 'it could not be put back to its checkpoint'
OTHER_SHAPE = 'a scenario of another shape came'


#: Set to 0 to give every test a cloud of its own (as before kept clouds;
#: ``benchmarks/suite_speed.py`` compares the two).
KEEP_ENV = 'HARNESS_KEEP_CLOUDS'
#: A file to which each process appends, as it exits, a JSON line: how
#: many clouds its shared pool stood up (``made``), how many runs it put
#: one back for (``reused``), after how many it started stopped or
#: restarted computes anew (``replaced``) and why it gave clouds up
#: (``given_up``, reason -> count); ``benchmarks/suite_speed.py`` adds
#: them up.
STATS_ENV = 'HARNESS_POOL_STATS'
_SHARED = []


def keeping():
    """Whether tests share the process's kept cloud (``KEEP_ENV``)."""
    return os.environ.get(KEEP_ENV, '1') != '0'


def shared_pool(around_change=None):
    """The process's pool, kept from one test to the next.

    Made on first use; ``around_change``, if given, is its hook from now
    on (see ``CloudPool``). It gives its cloud up before any other cloud
    stands up in this process.
    """
    if not _SHARED:
        pool = CloudPool()
        pool.setUp()
        cloud_mod.KEPT_BY.append(pool)
        _SHARED.append(pool)
        if os.environ.get(STATS_ENV):
            atexit.register(_write_stats, os.environ[STATS_ENV], pool)
    pool = _SHARED[0]
    if around_change is not None:
        pool._around_change = around_change
    return pool


def _write_stats(path, pool):
    with open(path, 'a') as out:
        out.write(json.dumps({'made': pool.made, 'reused': pool.reused,
                              'replaced': pool.replaced,
                              'given_up': dict(pool.given_up)}) + '\n')
