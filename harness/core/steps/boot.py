"""``boot: {server, flavor, host?, force?, image?, port?}``: create a
server, wait for ACTIVE.

``host`` goes in the request (microversion 2.74): the scheduler still
checks that it fits. ``force: true`` forces the host instead, the older
way (``availability_zone: "nova:<host>"``): the scheduler's filters are
skipped, and the request spec keeps the forced host, which a later move
must reset (LP#1845291).

``image`` names one of the scenario's ``images:`` (the image stand-in's
default image otherwise); ``port: true`` gives the server a port on the
network stand-in's network (no network otherwise), so its moves bind
ports and a ``fault: {network: ...}`` can meet them; ``port: direct``
gives it an SR-IOV port (``vnic_type: direct``) on physnet2, for which
Nova claims a VF the host's ``[pci] device_spec`` tags with that physical
network; ``port: vdpa`` a vDPA port (``vnic_type: vdpa``) there, for
which Nova claims a vDPA device (a VF of a profile PF with ``vdpa:
true``); ``port: remote-managed`` a port of a SmartNIC/DPU's VF
(``vnic_type: remote-managed``), for which Nova claims a VF the
``device_spec`` marks ``remote_managed: "true"`` and sends its card's
serial number, PF MAC and VF number in the port's binding.

``port: bandwidth`` gives it a port with a minimum-bandwidth resource
request (a copy of the network stand-in's ``port_with_resource_request``:
1000 kbit/s each way, on physnet2 with vnic type normal), which Nova
counts against the project's limits (unified limits) and asks Placement
for. No host reports bandwidth inventory (Neutron's agents make those
providers, and the harness runs none), so such a boot is placed nowhere:
the loader takes it only in a boot that must fail (``error:``), as one
refused over a limit before anything is scheduled.
"""

from harness.core import errors
from harness.core import names
from harness.core.steps import base

#: ``port:`` values that are a port of their own vnic type.
VNIC_PORTS = ('direct', 'vdpa', 'remote-managed')
#: The ``port:`` value of a port with a minimum-bandwidth request.
BANDWIDTH_PORT = 'bandwidth'
#: The ``port:`` values that name a kind of port.
PORT_KINDS = VNIC_PORTS + (BANDWIDTH_PORT,)


class Boot(base.ServerOperation):
    name = 'boot'
    summary = 'Create a server; wait until it is ACTIVE.'
    fields = {
        'server': ('server name', "the new server's name (``migration(...)`` "
                   'names migrations: not a server name)'),
        'flavor': ('flavor name', "one of the scenario's ``flavors:``"),
        'host': ('host name', 'build there (in the request, microversion '
                 '2.74: the scheduler still checks that it fits); where '
                 'the scheduler chooses otherwise'),
        'force': ('true or false', 'with ``host``: force the server there '
                  '(``availability_zone: "nova:<host>"``), skipping the '
                  "scheduler's filters"),
        'image': ('image name', "one of the scenario's ``images:``; the "
                  "image stand-in's default image otherwise"),
        'port': ('true, false, ``direct``, ``vdpa``, ``remote-managed`` '
                 'or ``bandwidth``',
                 "true: a port on the network stand-in's network, so its "
                 'moves bind ports; ``direct``: an SR-IOV port on physnet2, '
                 'for which Nova claims a VF; ``vdpa``: a vDPA port there, '
                 'for which Nova claims a vDPA device; ``remote-managed``: '
                 "a DPU's port there, for which Nova claims a remote-"
                 'managed VF; ``bandwidth``: a port with a minimum-'
                 'bandwidth request, in a boot that must fail (no host '
                 'reports bandwidth); no port by default'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
  expect: {allocations: {vm1: {src: pin2}}, pinned_cpus: {src: 2, dst: 0}}
'''
    required = ('server', 'flavor')
    resting = {'status': 'ACTIVE'}
    # A build that fails on its host goes back to the conductor
    # (build_instances) for an alternate: a reschedule.
    points = frozenset((
        'conductor.schedule_and_build_instances', 'build_and_run_instance',
        'conductor.build_instances', 'scheduler.select_destinations',
        'scheduler.update_instance_info', 'instance.host'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        server = args['server']
        if server in state.servers or server in state.deleted:
            check.fail('server', 'a server named %r was booted already'
                       % server)
        if names.MIGRATION_CONSUMER.match(server):
            check.fail('server', '%r is reserved for migrations' % server)
        check.known(args['flavor'], scenario.flavors, 'flavor')
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
        force = args.get('force', False)
        if not isinstance(force, bool):
            check.fail('force', 'true or false, not %s' % errors.show(force))
        if force and args.get('host') is None:
            check.fail('force', 'forcing needs a host to force the server to')
        port = args.get('port')
        if port is not None and not isinstance(port, bool) and \
                port not in PORT_KINDS:
            check.fail('port', 'expected true or false (or direct: an '
                       'SR-IOV port; vdpa: a vDPA port; remote-managed: a '
                       "DPU's port; bandwidth: a port with a minimum-"
                       'bandwidth request), got %s'
                       % errors.show(args['port']))
        if port == BANDWIDTH_PORT and not error:
            check.fail('port', 'a boot with a bandwidth port is placed '
                       'nowhere (no host reports bandwidth inventory: the '
                       "harness runs no Neutron agent): say the error it "
                       'must fail with (error:), as a boot refused over a '
                       'limit')
        if args.get('image') is not None:
            check.known(args['image'], scenario.images, 'image',
                        noun='image')
        state.servers[server] = 'error' if error else 'active'
        return args

    def label(self, args):
        where = ' on %s' % args['host'] if args.get('host') else ''
        return 'boot %s (%s)%s' % (args['server'], args['flavor'], where)

    def run(self, cloud, args):
        cloud.servers.boot(args['server'], args['flavor'],
                           host=args.get('host'), image=args.get('image'),
                           force=args.get('force', False),
                           port=(args['port'] if args.get('port') in
                                 PORT_KINDS else bool(args.get('port'))))


KIND = Boot()
