"""A cloud's state at rest, taken and put back.

``Checkpoint(cloud)`` copies what a run changes: every database (Nova's
API and cell databases, Placement's, with SQLite's backup API), the
clock, the counters, the stand-in services' records, the report clients'
caches of Placement's providers and each compute's resource tracker.
``restore`` puts it back.

Two uses:

- a kept cloud (``harness.cloud.reuse``) is put back to the checkpoint
  of its settled state before each run;
- ``Cloud.trial()`` checkpoints a cloud between two steps with
  ``exact=True``, lets a check run Nova code (the periodic-idempotence
  invariant runs ``update_available_resource``), and puts everything
  back as it was, in place: the same tracker objects with their state,
  each report client's cache and refresh times, the hypervisors' guests,
  the notifications, the race points' recording and injections, and the
  casts queued for stopped computes. The next step sees exactly what the
  step before left.
"""

import contextlib
import sqlite3
import time

from nova.compute import resource_tracker
from nova.scheduler.client import report

from harness.cloud import databases
from harness.cloud import objcopy
from harness.core import errors

# The stand-in services' per-test records (not their wiring to the test).
_FIXTURE_WIRING = frozenset(['test', '_cleanups', '_details',
                             '_detail_sources'])


@contextlib.contextmanager
def _raw(engine):
    # oslo.db gives an in-memory SQLite engine a StaticPool: its one
    # connection is the database.
    proxy = engine.raw_connection()
    try:
        yield proxy.driver_connection
    finally:
        proxy.close()


class Checkpoint(object):
    """A cloud's state at rest, to put it back to later.

    Taken when nothing runs; ``restore`` refuses a cloud whose services
    or databases are not the ones it was taken of. With ``exact`` it also
    keeps what a kept cloud resets instead (see the module docstring), and
    ``restore`` puts each tracker's state back into the same object.
    """

    def __init__(self, cloud, exact=False):
        self.exact = exact
        if databases.database_writes() is None:
            raise errors.HarnessError(
                'a cloud with a database that is not an in-memory SQLite '
                'one cannot be checkpointed')
        self.engines = list(cloud.env.engines)
        self.databases = []
        for _key, engine in self.engines:
            saved = sqlite3.connect(':memory:', check_same_thread=False)
            with _raw(engine) as live:
                live.backup(saved)
            self.databases.append(saved)
        self.services = dict(cloud.computes)
        self.clock = cloud.clock.state()
        self.counters = (cloud.activity.saves,
                         cloud.activity.placement_writes)
        self.records = [(stand_in, _records(stand_in))
                        for stand_in in cloud.stand_ins]
        # Taken at rest, each report client's cache holds what Placement's
        # database holds now; put back with it, it matches that database
        # again (a run leaves its own generations and allocations in it)
        # without fetching every provider's inventory, traits and
        # aggregates again.
        self.provider_caches = [
            (client, objcopy.keeping_links(client._provider_tree),
             dict(client._association_refresh_time))
            for client in _report_clients(cloud)]
        # Taken settled, each tracker holds what a start-up pass over
        # these databases gives; a copy of it saves settling that pass.
        self.trackers = {host: _tracker_state(service.manager.rt)
                         for host, service in cloud.computes.items()}
        if exact:
            self.notifications = (
                list(cloud.notifier.fake_notifier.notifications),
                list(cloud.notifier.fake_versioned_notifier
                     .versioned_notifications))
            self.casts = (list(cloud.casts.failures),
                          {host: list(queued) for host, queued
                           in cloud.casts.queued.items()})
            self.race = cloud.race.state()
            self.hypervisors = {host: _hypervisor_state(cloud, host, service)
                                for host, service in cloud.computes.items()}

    def verify(self, cloud):
        """Prove every database of ``cloud`` is the checkpoint's copy.

        Byte for byte, but for the schema cookie that SQLite's backup
        bumps in the copy it writes (so that prepared statements are
        made again).
        """
        for (key, engine), saved in zip(self.engines, self.databases):
            with _raw(engine) as live:
                if _content(live) != _content(saved):
                    raise errors.HarnessError(
                        'database %s is not back at its checkpoint' % (
                            key,))

    def tracker(self, host):
        """A copy of ``host``'s resource tracker as the checkpoint has it."""
        shared, state = self.trackers[host]
        tracker = resource_tracker.ResourceTracker.__new__(
            resource_tracker.ResourceTracker)
        vars(tracker).update(objcopy.keeping_links(state, dict(shared)))
        return tracker

    def rebind(self, host, service):
        """Take ``service`` as ``host``'s compute from now on.

        A kept cloud's compute that a run replaced
        (``Cloud.replace_compute``): its tracker copies refer to the new
        compute's driver, report client, monitors, service record and PCI
        context in place of the old one's, and the new report client gets
        the old one's cache of Placement's providers.
        """
        old = self.services[host]
        memo, state = self.trackers[host]
        new = _shared(service.manager.rt)
        if len(new) != len(memo):
            raise errors.HarnessError(
                'the new compute on %s shares %d things with its tracker, '
                'the checkpoint\'s %d' % (host, len(new), len(memo)))
        # The memo's keys are the ids of what the saved state refers to,
        # in _shared's order. The service record stays the checkpoint's:
        # the databases put back hold it (a run that deleted the service
        # made the new compute a record of its own).
        self.trackers[host] = ({
            key: memo[key] if name == 'service_ref' else thing
            for key, (name, thing) in zip(memo, new)}, state)
        self.provider_caches = [
            (service.manager.reportclient
             if client is old.manager.reportclient else client,
             tree, refreshed)
            for client, tree, refreshed in self.provider_caches]
        self.services[host] = service

    def close(self):
        for saved in self.databases:
            saved.close()
        self.databases = []

    def matches(self, cloud):
        """Whether ``cloud`` still runs what this checkpoint was taken of."""
        # A trial may run while a compute is stopped (it stays stopped);
        # a kept cloud starts every run with all its computes running.
        return (list(cloud.env.engines) == self.engines
                and (self.exact or not cloud.stopped_computes())
                and cloud.computes.keys() == self.services.keys()
                and all(cloud.computes[host] is service
                        for host, service in self.services.items()))

    def restore(self, cloud):
        if not self.matches(cloud):
            raise errors.HarnessError(
                'the cloud no longer runs the services and databases of '
                'its checkpoint')
        for (_key, engine), saved in zip(self.engines, self.databases):
            with _raw(engine) as live:
                saved.backup(live)
        # Readers that skip re-reading while nothing was written must see
        # the copy as a write.
        databases.count_write()
        cloud.clock.set_state(self.clock)
        cloud.activity.saves, cloud.activity.placement_writes = (
            self.counters)
        for stand_in, records in self.records:
            vars(stand_in).update(objcopy.keeping_links(records))
        for client, tree, refreshed in self.provider_caches:
            client._provider_tree = objcopy.keeping_links(tree)
            # A kept cloud's cache counts as just refreshed (it is
            # Placement's records now); a trial's keeps its own times.
            client._association_refresh_time = (
                dict(refreshed) if self.exact
                else dict.fromkeys(refreshed, time.time()))
        if self.exact:
            self._restore_exactly(cloud)
            return
        cloud.notifier.reset()
        cloud.casts.failures = []
        cloud.casts.queued = {}
        cloud.race.reset()

    def _restore_exactly(self, cloud):
        legacy, versioned = self.notifications
        cloud.notifier.fake_notifier.notifications[:] = legacy
        (cloud.notifier.fake_versioned_notifier
         .versioned_notifications[:]) = versioned
        failures, queued = self.casts
        cloud.casts.failures = list(failures)
        cloud.casts.queued = {host: list(q) for host, q in queued.items()}
        cloud.race.set_state(self.race)
        for host, service in cloud.computes.items():
            # In place: whatever holds the tracker sees its state again.
            _shared, state = self.trackers[host]
            tracker = service.manager.rt
            vars(tracker).clear()
            vars(tracker).update(state)
            _set_hypervisor_state(cloud, host, service,
                                  self.hypervisors[host])
        # Used once: a second restore would share the state put back.
        self.trackers = {}


def _content(connection):
    data = connection.serialize()
    # Header bytes 40-43: the schema cookie.
    return data[:40] + data[44:]


def _tracker_state(tracker):
    """What a resource tracker owns, and what it shares with its compute.

    The driver, report client, monitors, service record and the PCI
    tracker's request context are the compute's: a copy refers to them.
    """
    memo = {id(thing): thing for _name, thing in _shared(tracker)}
    return memo, objcopy.keeping_links(vars(tracker), dict(memo))


def _shared(tracker):
    """``(name, thing)`` of what ``tracker`` shares, in a fixed order."""
    shared = [('driver', tracker.driver),
              ('reportclient', tracker.reportclient),
              ('monitors', tracker.monitors),
              ('service_ref', tracker.service_ref)]
    if tracker.pci_tracker is not None:
        shared.append(('pci_context', tracker.pci_tracker._context))
    return shared


def _report_clients(cloud):
    """The report clients whose provider caches a run fills."""
    clients = [] if report.PLACEMENTCLIENT is None else [
        report.PLACEMENTCLIENT]
    for _host, service in sorted(cloud.computes.items()):
        if all(service.manager.reportclient is not c for c in clients):
            clients.append(service.manager.reportclient)
    return clients


def _records(stand_in):
    return objcopy.keeping_links({
        name: value for name, value in vars(stand_in).items()
        if name not in _FIXTURE_WIRING})


def _hypervisor_state(cloud, host, service):
    """The guests ``host``'s hypervisor knows (the objects themselves)."""
    libvirt_hosts = cloud._libvirt_hosts
    if libvirt_hosts is not None and libvirt_hosts.has(host):
        conn = libvirt_hosts.connection(host)
        return ('libvirt', conn, dict(conn._vms), dict(conn._running_vms),
                conn._id_counter)
    driver = service.manager.driver
    return ('driver', driver, dict(getattr(driver, 'instances', {})))


def _set_hypervisor_state(cloud, host, service, state):
    if state[0] == 'libvirt':
        _kind, conn, vms, running, counter = state
        conn._vms = dict(vms)
        conn._running_vms = dict(running)
        conn._id_counter = counter
    else:
        _kind, driver, instances = state
        if hasattr(driver, 'instances'):
            driver.instances = dict(instances)


@contextlib.contextmanager
def trial(cloud):
    """Run a block on ``cloud`` and put the cloud back as it was.

    For checks that need Nova to run code: nothing the block does is seen
    by what comes after. Injections neither fire nor record meanwhile.
    An injection of the step that failed while the cloud settled is
    raised first (``race.check``): it is the step's failure (the runner
    makes it so), not the trial's, and the checkpoint must not keep it
    to put back after.
    """
    cloud.activity.wait_idle(cloud.timeout,
                             lambda: 'before a check\'s trial')
    cloud.race.check()
    saved = Checkpoint(cloud, exact=True)
    cloud.race.injections, cloud.race.record = [], False
    try:
        yield cloud
        cloud.activity.wait_idle(cloud.timeout,
                                 lambda: 'in a check\'s trial')
    finally:
        try:
            saved.restore(cloud)
        finally:
            saved.close()
