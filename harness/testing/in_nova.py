"""The harness's pieces inside a test in Nova's own tree.

A Nova developer's test class may ``useFixture`` these, with Nova's own
test base classes and runner (no harness ``Cloud``):

``ProfiledCompute(test, hostname, profile)``
    on ``nova.tests.functional.libvirt.base.ServersTestBase``: starts a
    compute shaped like a host profile (``fixtures/hosts``): the fake
    libvirt's host info (CPUs, NUMA cells, huge pages), its PCI, vGPU and
    vDPA devices and hypervisor versions, and the profile's options
    (``cpu_dedicated_set``, ``[pci] device_spec``, ...) set with
    ``test.flags``. Nova's config is one per process, so every profiled
    compute of a test must have the same options (one clear error
    otherwise).
``RacePoint(point, run, host=None, times=1)``
    runs ``run()`` at ``'before <method>'`` or ``'after <method>'`` of a
    compute RPC method (``finish_resize``, ``confirm_resize``,
    ``live_migration``, ...), on ``host`` or any compute, ``times`` times
    (``None``: every time), as Nova's own tests stub a manager method;
    ``.fired`` lists the hosts it ran on.
``periodic(test, host, task='update_available_resource')``
    a ``run`` for a race point: that periodic task of ``host`` runs there.
``kill(test, host)``
    a ``run`` for a race point: ``host``'s compute dies there. It stops
    consuming messages, and the work the point interrupts ends: the method
    never runs (``before``) or its caller never gets the answer
    (``after``): a call's caller gets ``MessagingTimeout``, a cast's
    sender (which Nova's ``CastAsCallFixture`` makes wait) goes on as it
    would have. The test then marks the service down
    (``put_service_force_down``), as Nova's tests do for a dead compute.
``VirtualClock()``
    virtual time for ``timeutils.utcnow`` and every periodic task under
    the test's control: ``add_service(name, service)`` schedules a
    service's tasks, ``advance(seconds)`` fires those that come due, in a
    fixed order, ``run(task, name)`` one now (``harness.cloud.clock``).
    Use it before the services start, so their records are stamped with
    its time.
``PlacementFault(test, request, status=409, times=1)``
    Placement answers ``times`` requests ``METHOD /path`` (``*`` for a
    path segment: ``PUT /allocations/*``) with ``status``, or never
    (``status='timeout'``); ``.fired`` lists the requests it answered.

The harness runs Nova in the process's concurrency mode; in Nova's test
runner that is the one Nova's test package chose when it was imported
(eventlet unless ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` says otherwise).
"""

import functools
import inspect
import sys
import weakref

import fixtures

from harness.core import concurrency
from harness.core import errors
from harness.core import profiles


def _align_mode():
    """Run the harness's Nova parts in the mode Nova's tests chose.

    Nova's test package patches (or not) when it is imported; the
    harness's cloud package applies its own mode on import, so it is told
    the one already running first.
    """
    monkey_patch = sys.modules.get('nova.monkey_patch')
    if monkey_patch is None or concurrency.running_mode() is not None:
        return
    concurrency.choose(concurrency.EVENTLET if monkey_patch.is_patched()
                       else concurrency.THREADING)


_align_mode()

from nova.compute import manager as compute_manager  # noqa: E402
from nova.compute import rpcapi as compute_rpcapi  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import exception  # noqa: E402
import oslo_messaging  # noqa: E402

from harness.cloud import clock as clock_mod  # noqa: E402
from harness.cloud import faults as faults_mod  # noqa: E402
from harness.cloud import libvirt  # noqa: E402

WHEN = ('before', 'after')


def _called_methods():
    """The compute RPC methods Nova calls (waits for); the rest it casts.

    Read from the compute RPC API, as its methods send: ``cctxt.call`` or
    ``cctxt.cast`` (``confirm_resize`` and ``stop_instance`` cast unless
    their caller asks to wait: casts here).
    """
    return frozenset(
        name for name, method in inspect.getmembers(
            compute_rpcapi.ComputeAPI, inspect.isfunction)
        if '.call(' in inspect.getsource(method))


#: The compute RPC methods whose caller waits for the answer.
CALLED = _called_methods()
#: test -> the profiled computes it started, in order.
_PROFILED = weakref.WeakKeyDictionary()


class ProfiledCompute(fixtures.Fixture):
    """A compute of ``test`` (a ``ServersTestBase``) shaped by a profile.

    ``profile``: a shipped profile's name or a profile file's path.
    ``.hostname`` and ``.service`` name what was started.
    """

    def __init__(self, test, hostname, profile):
        super().__init__()
        self.test = test
        self.hostname = hostname
        self.profile = profiles.load_profile(profile)
        # Refused here, not in setUp: a fixture's setUp error reaches the
        # test as a bare SetupError.
        self._check_options(_PROFILED.get(test, ()))

    def _check_options(self, started):
        options = self.profile.conf_overrides()
        for other in started:
            theirs = other.profile.conf_overrides()
            if theirs != options:
                differ = sorted(
                    '%s.%s' % (group or 'DEFAULT', name)
                    for group, name in set(options) | set(theirs)
                    if options.get((group, name)) != theirs.get(
                        (group, name)))
                raise errors.HarnessError(
                    'compute %s (profile %s) needs options that compute %s '
                    '(profile %s) has otherwise: %s; Nova\'s config is one '
                    'per process, so the computes of one test share them'
                    % (self.hostname, self.profile.name, other.hostname,
                       other.profile.name, ', '.join(differ)))

    def _setUp(self):
        started = _PROFILED.setdefault(self.test, [])
        options = self.profile.conf_overrides()
        for (group, name), value in sorted(
                options.items(), key=lambda item: str(item[0])):
            if group is None:
                self.test.flags(**{name: value})
            else:
                self.test.flags(group=group, **{name: value})
        if not started:
            self._answer_host(started)
        started.append(self)
        self.addCleanup(started.remove, self)
        # The harness's connection for the profile (the one its own
        # clouds run): ServersTestBase builds one of at most 15 CPUs.
        connection = libvirt.connection(self.hostname, self.profile)
        # What start_compute does with a pci_info it is given.
        self.test.libvirt.update_sriov_mac_address_mapping(
            connection.pci_info.get_pci_address_mac_mapping())
        self.test.start_compute(self.hostname, connection=connection)
        self.service = self.test.computes[self.hostname]

    def _answer_host(self, started):
        """What Nova reads of the host from the OS, from the profiles.

        The online CPUs (ServersTestBase says 0-15 for every host) and,
        from sysfs, whether an address is a PF with VFs (a
        ``device_spec`` naming one address) and a VF's number on its PF
        (a remote-managed port's binding); a device is the same on every
        host that has it, and the CPUs online are every profile's.
        """
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.host.Host.get_online_cpus',
            lambda host: set().union(*(set(compute.profile.cpus)
                                       for compute in started))))

        def is_physical_function(domain, bus, slot, function):
            address = '%s:%s:%s.%s' % (domain, bus, slot, function)
            return any(libvirt.is_pf_with_vfs(compute.profile, address)
                       for compute in started)

        def get_vf_num_by_pci_address(address):
            for compute in started:
                number = libvirt.vf_number(compute.profile, address)
                if number is not None:
                    return number
            raise exception.PciDeviceNotFoundById(id=address)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.utils.is_physical_function', is_physical_function))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.pci.utils.get_vf_num_by_pci_address',
            get_vf_num_by_pci_address))


class ComputeDied(BaseException):
    """A compute died at a race point (``kill``).

    A ``BaseException``: no ``except Exception`` of Nova's runs on it, as
    none runs in a process that is gone; the race point turns it into the
    answer a dead compute gives (none).
    """

    def __init__(self, host):
        super().__init__('compute %s died' % host)
        self.host = host


class RacePoint(fixtures.Fixture):
    """``run()`` at ``point`` (``'before finish_resize'``); see the module.

    :raises HarnessError: for a point that is no compute RPC method
    """

    def __init__(self, point, run, host=None, times=1):
        super().__init__()
        when, _, method = str(point).partition(' ')
        rpc_methods = sorted(
            name for name in dir(compute_rpcapi.ComputeAPI)
            if not name.startswith('_')
            and callable(getattr(compute_manager.ComputeManager, name,
                                 None)))
        if when not in WHEN or method not in rpc_methods:
            raise errors.HarnessError(
                'race point %r: say "before <method>" or "after <method>" '
                'for a compute RPC method: %s'
                % (point, ', '.join(rpc_methods)))
        if times is not None and (not isinstance(times, int) or times < 1):
            raise errors.HarnessError(
                'race point %r: times is a whole number of 1 or more, or '
                'None (every time), not %r' % (point, times))
        self.point, self.when, self.method = point, when, method
        self.run, self.host, self.times = run, host, times
        self.fired = []

    def _setUp(self):
        real = getattr(compute_manager.ComputeManager, self.method)
        point = self

        @functools.wraps(real)
        def wrapped(manager, *args, **kwargs):
            fire = point._due(manager.host)
            try:
                if fire and point.when == 'before':
                    point._fire(manager.host)
                result = real(manager, *args, **kwargs)
                if fire and point.when == 'after':
                    point._fire(manager.host)
            except ComputeDied as died:
                if died.host != manager.host:
                    raise
                # A caller hears nothing back, as from a dead process; a
                # cast's sender had moved on.
                if point.method in CALLED:
                    raise oslo_messaging.MessagingTimeout(str(died))
                return None
            return result

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.%s' % self.method,
            wrapped))

    def _due(self, host):
        return ((self.host is None or host == self.host)
                and (self.times is None or len(self.fired) < self.times))

    def _fire(self, host):
        self.fired.append(host)
        self.run()


def periodic(test, host, task='update_available_resource'):
    """A race point's ``run``: ``task`` of ``host``'s compute runs there."""
    def run_periodic():
        manager = test.computes[host].manager
        getattr(manager, task)(nova_context.get_admin_context())
    return run_periodic


def kill(test, host):
    """A race point's ``run``: ``host``'s compute dies there."""
    def die():
        # Stop consuming messages; not Service.stop(), which waits for
        # the handler this runs in to end.
        test.computes[host].rpcserver.stop()
        raise ComputeDied(host)
    return die


class VirtualClock(clock_mod.Clock):
    """Virtual time and periodic tasks for a Nova test; see the module."""

    def __init__(self, report_interval=10):
        super().__init__(runner=self._run_task,
                         report_interval=report_interval)

    def _run_task(self, task, name, wait=True):
        manager = self._services[name].manager
        getattr(manager, task)(nova_context.get_admin_context())


class PlacementFault(fixtures.Fixture):
    """Placement answers ``request`` with ``status``; see the module."""

    def __init__(self, test, request, status=409, times=1):
        super().__init__()
        self.test = test
        self.request, self.status, self.times = request, status, times

    def _setUp(self):
        # Nova's tests keep Placement's API client; its fixture has the
        # endpoint the faults sit in front of.
        placement = self.test.placement
        faults = self.useFixture(faults_mod.PlacementFaults(
            getattr(placement, 'fixture', placement)))
        self._fault = faults.arm(self.request, self.status, self.times)

    @property
    def fired(self):
        return list(self._fault.fired)
