"""Step kinds as Nova's functional tests write them, one unit each.

A unit is a function ``(args) -> lines`` of test code, registered under
its step kind's name by ``translates``. The code uses what the generated
test class defines: ``self.servers`` (name -> the server's API body),
``self.flavors`` (name -> flavor id) and ``self.computes`` (host -> its
compute service). A step kind without a unit is refused by name.
"""

import re

from harness.core import names as core_names
from harness.export import registry

_REGISTRY = registry.Registry()
translates = _REGISTRY.translates
names = _REGISTRY.names
# Step kinds whose translation differs on profiled (libvirt) hosts.
_LIBVIRT = registry.Registry()
# Step kinds expected to fail (``error:``): ``(args, error, expect) ->
# lines``, ``expect`` the step's parsed expectations.
_FAILING = registry.Registry()
get_failing = _FAILING.get
failing_names = _FAILING.names
Unsupported = registry.Unsupported


def get(kind, libvirt=False):
    """The unit of ``kind`` (on profiled hosts: its own, if it has one)."""
    return (libvirt and _LIBVIRT.get(kind)) or _REGISTRY.get(kind)


def _only(args, allowed):
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise Unsupported('field %r' % extra[0])


def _server(name):
    return 'self.servers[%r]' % name


def _image(args):
    # One of the scenario's images (the test's world creates them).
    return (' image_uuid=self.images[%r],' % args['image']
            if args.get('image') else '')


def _where(args):
    # A host asked for (microversion 2.74: scheduled, its filters run),
    # or forced (the availability zone 'nova:<host>': the scheduler's
    # filters skipped), as the harness's boot sends it.
    if args.get('force'):
        return 'az=%r' % ('nova:%s' % args['host'])
    return 'host=%r' % (args.get('host'),)


# The harness's ports (harness.cloud.servers.ServerOps.boot): a port
# of its own of each of these kinds (the generated class's ``_port``).
_PORT_KINDS = ('direct', 'vdpa', 'remote-managed', 'bandwidth')

_BOOT_FIELDS = ('server', 'flavor', 'host', 'image', 'force', 'port')


def _networks(args):
    """The boot's ``networks``, as the harness's boot asks for them.

    ``port: true``: one port Nova creates on the Neutron fixture's
    network_1; a kind of port: one made for the server before the boot
    (``_port``), as Nova's SR-IOV and QoS tests pass theirs; none
    otherwise.
    """
    port = args.get('port')
    if not port:
        return "'none'"
    if port is True:
        return "[{'uuid': self.neutron.network_1['id']}]"
    if port not in _PORT_KINDS:
        raise Unsupported('port %r' % (port,))
    return "[{'port': self._port(%r, %r)}]" % (args['server'], port)


def _port_built(args, lines):
    """``lines`` (a boot and its wait) with a port's network info cached.

    Under eventlet, the network info the build's network thread caches
    is lost in Nova's test fixtures (the server's addresses stay empty,
    and its moves then see no port to bind); Nova's tests of ports with
    resource requests make that thread synchronous, as this does for
    the boot's while.
    """
    if not args.get('port'):
        return lines
    return (['with nova_fixtures.SpawnIsSynchronousFixture():']
            + ['    ' + line for line in lines])


@translates('boot')
def boot(args):
    _only(args, _BOOT_FIELDS)
    return _port_built(args, [
        'self.servers[%r] = self._create_server(' % args['server'],
        '    name=%r, flavor_id=self.flavors[%r],%s'
        % (args['server'], args['flavor'], _image(args)),
        "    %s, networks=%s)" % (_where(args), _networks(args))])


def _rebuild_image(args):
    # One of the scenario's images, or the harness's default: Glance's
    # stand-in's first image, the one _create_server boots from.
    if args.get('image'):
        return 'self.images[%r]' % args['image']
    return "self.glance.image1['id']"


def _rebuild_body(args):
    return "{'rebuild': {'imageRef': %s}}" % _rebuild_image(args)


@translates('rebuild')
def rebuild(args):
    # On its own host; a stopped server is rebuilt and stopped again.
    _only(args, ('server', 'image'))
    name = args['server']
    return ["state = self.api.get_server(%s['id'])['status']" % _server(name),
            'self.servers[%r] = self._rebuild_server(' % name,
            '    %s, %s,' % (_server(name), _rebuild_image(args)),
            "    expected_state='SHUTOFF' if state == 'SHUTOFF' "
            "else 'ACTIVE')"]


@_FAILING.translates('rebuild')
def rebuild_refused(args, error, expect):
    # A rebuild that ends short of its resting state (a failing driver):
    # sent, then where Nova left the server. Otherwise Nova's API refuses
    # it (400) with the error in the response's body, the server left as
    # it was.
    _only(args, ('server', 'image'))
    if (_UNRESTED.match(error) or _FAULTED.match(error)
            or error in core_names.DRIVER_FAULTS):
        # Where no status is expected: its compute event, in error (the
        # compute handler records the fault first, wrap_instance_fault).
        return _post_action(args['server'], _rebuild_body(args)) + \
            _unrested(args['server'], error, expect,
                      ending=('rebuild', 'compute_rebuild_instance'))
    return ['exc = self.assertRaises(',
            '    client.OpenStackApiException, self.api.post_server_action,',
            "    %s['id'], %s)" % (
                _server(args['server']), _rebuild_body(args)),
            'self.assertEqual(400, exc.response.status_code)',
            'self.assertIn(%r, exc.response.text)' % error]


@translates('resize')
def resize(args):
    _only(args, ('server', 'flavor'))
    return ['self.servers[%r] = self._resize_server(' % args['server'],
            '    %s, self.flavors[%r])'
            % (_server(args['server']), args['flavor'])]


@translates('migrate')
def migrate(args):
    _only(args, ('server', 'host'))
    host = ', host=%r' % args['host'] if args.get('host') else ''
    return ['self.servers[%r] = self._migrate_server(%s%s)'
            % (args['server'], _server(args['server']), host)]


@translates('live_migrate')
def live_migrate(args):
    _only(args, ('server', 'host'))
    return ['self.servers[%r] = self._live_migrate(%s, host=%r)'
            % (args['server'], _server(args['server']), args.get('host'))]


@translates('confirm')
def confirm(args):
    _only(args, ('server',))
    return ['self.servers[%r] = self._confirm_resize(%s)'
            % (args['server'], _server(args['server']))]


@translates('revert')
def revert(args):
    _only(args, ('server',))
    return ['self.servers[%r] = self._revert_resize(%s)'
            % (args['server'], _server(args['server']))]


@translates('delete')
def delete(args):
    # ``placement_cut_off``: the loader's note that a Placement fault
    # armed before (translated by its own unit) refuses this request.
    _only(args, ('server', 'placement_cut_off'))
    return ['self._delete_server(%s)' % _server(args['server'])]


@translates('run_periodic')
def run_periodic(args):
    _only(args, ('task', 'hosts'))
    hosts = args.get('hosts') or []
    task = args['task']
    if not task.isidentifier():
        raise Unsupported('task %r' % task)
    # No host named: every compute, in name order, as the harness does.
    target = ('sorted(self.computes)' if not hosts
              else repr(list(hosts)))
    return ['for host in %s:' % target,
            '    self.computes[host].manager.%s(' % task,
            '        self.context)']


def _service_id(host):
    return ["service = self.admin_api.get_services(",
            "    binary='nova-compute', host=%r)[0]" % host]


def _service(host, body):
    # The API's PUT calls the up compute's set_host_enabled (an RPC
    # call): the COMPUTE_STATUS_DISABLED trait is set when it returns.
    return _service_id(host) + [
        "self.admin_api.put_service(service['id'], {"] + [
        '    %r: %r,' % item for item in body.items()] + ['})']


@translates('disable_compute')
def disable_compute(args):
    _only(args, ('host', 'reason'))
    body = {'status': 'disabled'}
    if args.get('reason') is not None:
        body['disabled_reason'] = args['reason']
    return _service(args['host'], body)


@translates('enable_compute')
def enable_compute(args):
    _only(args, ('host',))
    return _service(args['host'], {'status': 'enabled'})


@translates('advance_clock')
def advance_clock(args):
    _only(args, ('seconds',))
    return ['self._advance_clock(%r)' % (args['seconds'],)]


@translates('stop_compute')
def stop_compute(args):
    _only(args, ('host',))
    # Its records stay; what is cast to it waits on the bus for its start.
    host = args['host']
    return ['self.computes[%r].stop()' % host,
            'self._unschedule(%r)' % host]


def _mapping(args, mapping, lines):
    """``lines`` (a restart) with its host mapped again, if it must be.

    ``mapping``: None, the compute's host mapping is there; otherwise its
    service's delete destroyed it (Nova's test keeps its own record of
    it, ``self.host_mappings``, so its restart makes none): True, the
    start maps it again first and flags its records, as a deployment's
    ``discover_hosts`` would have (the harness's default); False, it
    starts unmapped (``mapped: false``).
    """
    if not mapping:
        return lines
    return (['self._map_host(%r)' % args['host']] + lines
            + ['self._flag_mapped(%r)' % args['host']])


@translates('start_compute')
def start_compute(args, mapping=None):
    # A changed nova.conf on Nova's fake driver: refused (its options are
    # all read by a running compute again).
    _only(args, ('host', 'guests', 'mapped'))
    host = args['host']
    kept = args.get('guests', 'kept') == 'kept'
    return _mapping(args, mapping, [
        'self.computes[%r] = self.restart_compute_service(' % host,
        '    self.computes[%r], keep_hypervisor_state=%r)' % (host, kept),
        'self._schedule(%r)' % host])


@_LIBVIRT.translates('start_compute')
def start_compute_profiled(args, flags=(), fresh=None, mapping=None):
    """ServersTestBase's restart, the host's fake libvirt kept.

    ``flags``: the lines that set the options the start reads (a
    ``config`` changed them; ``libvirt.Options``), as Nova's PCI tests
    set ``[pci] device_spec`` before a restart. ``guests: gone``: a
    fresh fake libvirt, ``fresh`` (the arguments of ``start_compute``
    that build the host's profile, as at its first start), as the
    harness boots the machine again from its profile. ``mapping``: as
    ``_mapping``'s.
    """
    _only(args, ('host', 'guests', 'config', 'mapped'))
    host = args['host']
    if args.get('guests', 'kept') == 'kept':
        restart = ['self.restart_compute_service(%r)' % host]
    else:
        restart = (['self.restart_compute_service(',
                    '    %r, keep_hypervisor_state=False,' % host]
                   + ['    %s%s' % (item, ',' if number < len(fresh) - 1
                                    else ')')
                      for number, item in enumerate(fresh)])
    return [line[8:] for line in flags] + _mapping(
        args, mapping, restart + ['self._schedule(%r)' % host])


@translates('discover_hosts')
def discover_hosts(args):
    # nova-manage cell_v2 discover_hosts: the hosts it mapped, exactly.
    _only(args, ('maps',))
    return ['mapped = host_mapping.discover_hosts(',
            '    self.context, status_fn=lambda message: None)',
            'self.assertEqual(%r, sorted(' % (list(args['maps']),),
            '    mapping.host for mapping in mapped))']


@translates('archive_deleted_rows')
def archive_deleted_rows(args):
    # nova-manage db archive_deleted_rows on the cell's database (1000
    # rows, its default), as Nova's test of LP#1839560 archives; the rows
    # moved from each table named, exactly.
    _only(args, ('archives',))
    lines = ['with context.target_cell(',
             "        self.context, self.cell_mappings['cell1']) as cctxt:",
             '    archived = db_api.archive_deleted_rows(',
             '        cctxt, max_rows=1000)[0]']
    for table, count in sorted(args['archives'].items()):
        lines.append('self.assertEqual(%d, archived.get(%r, 0), %r)'
                     % (count, table, 'rows archived from %s' % table))
    return lines


@translates('evacuate')
def evacuate(args):
    # The test's API is at the latest microversion (2.95 and later): Nova
    # leaves an evacuated ACTIVE or SHUTOFF server SHUTOFF. force and an
    # older microversion change that and the scheduling: refused.
    _only(args, ('server', 'host'))
    host = args.get('host')
    post = ', extra_post_args={%r: %r}' % ('host', host) if host else ''
    return ['self.servers[%r] = self._evacuate_server(' % args['server'],
            '    %s%s,' % (_server(args['server']), post),
            '    expected_host=%r, expected_state=%r)' % (host, 'SHUTOFF')]


@translates('force_down')
def force_down(args):
    _only(args, ('host',))
    return _service(args['host'], {'forced_down': True})


@translates('force_up')
def force_up(args):
    _only(args, ('host',))
    return _service(args['host'], {'forced_down': False})


@translates('delete_service')
def delete_service(args):
    _only(args, ('host',))
    # Nova's API deletes the service, its compute nodes and providers
    # before it answers.
    return _service_id(args['host']) + [
        "self.admin_api.api_delete('/os-services/%s' % service['id'])"]


@_FAILING.translates('delete_service')
def delete_service_refused(args, error, expect):
    # Nova refuses (409) while the host has instances or migrations in
    # progress; the error's text is in the response's body.
    _only(args, ('host',))
    return _service_id(args['host']) + [
        'exc = self.assertRaises(',
        '    client.OpenStackApiException, self.admin_api.api_delete,',
        "    '/os-services/%s' % service['id'])",
        'self.assertEqual(409, exc.response.status_code)',
        'self.assertIn(%r, exc.response.text)' % error]


# The services whose RPC methods a point may name besides a compute's
# (bare): the scheduler's (``scheduler.select_destinations``), wrapped
# on the conductor's client of it. The conductor's are refused: its RPC
# endpoint keeps a method once dispatched, and no client wraps them all.
_POINT_SERVICES = ('scheduler',)

# A compute's RPC methods that are cast to it (nova.compute.rpcapi): its
# death there has no caller waiting for an answer. At a call, the
# harness's caller gets MessagingTimeout at once, which Nova's tests only
# get after rpc_response_timeout: refused.
_CAST_METHODS = ('build_and_run_instance', 'unshelve_instance',
                 'prep_resize', 'resize_instance', 'finish_resize',
                 'revert_resize', 'finish_revert_resize', 'live_migration',
                 'rebuild_instance')

# The API requests an injection may send at a point, as the generated
# class's ``_request`` sends them.
_REQUESTS = ('delete', 'abort_live_migration', 'live_migrate',
             'delete_service')


# The points that are a record's change, as the harness sees one (a
# save that changes the field: harness.cloud.race): an instance's host,
# a migration's status set to a value. Wrapped on the record's save.
_RECORD_POINT = re.compile(r'^(instance\.host|migration\.status=[a-z-]+)$')

# The points that are a conductor task (nova.conductor.tasks), by its
# class: its execute, as the harness wraps TaskBase.execute.
_TASK_POINT = re.compile(r'^conductor\.[A-Z][A-Za-z]*$')

# The record changes made only in a compute's method that is cast to it
# (a death there has no caller waiting): 'post-migrating' is saved in
# resize_instance, and in prep_snapshot_based_resize_at_source, a cross
# cell resize's, which a test of one cell never runs.
_CAST_SAVES = ('migration.status=post-migrating',)


def point_kind(point):
    """What passes ``point``: 'record', 'task' or 'method'."""
    if _RECORD_POINT.match(point):
        return 'record'
    if _TASK_POINT.match(point):
        return 'task'
    return 'method'


def _point(args, compute_only=False, changes=False):
    """The point's method: a compute's, or ``<service>.<method>``.

    ``changes``: or a record's change, a conductor task, or a step of
    the resource tracker (``tracker.<method>``: its method, wrapped on
    its class, is passed before it takes the tracker's lock and after
    it frees it, as the harness passes it).
    """
    point = args['point']
    if changes and point_kind(point) != 'method':
        return point
    service, _, method = point.rpartition('.')
    services = ('',) + (('tracker',) if changes else ()) + (
        () if compute_only else _POINT_SERVICES)
    if (not method.isidentifier() or point == 'is_node_deleted'
            or service not in services or not method.islower()):
        raise Unsupported('point %r (no single %s method to wrap)' % (
            point, 'compute' if compute_only else 'compute or scheduler'))
    return point


@translates('inject')
def inject(args):
    # At a method of one service: a periodic run there, an API request
    # sent there, or a compute that dies there; narrowed to the passes
    # for one server (an Instance among the method's arguments, or a
    # Migration of it) and to the passes on one host (the compute whose
    # manager or tracker passes it: ``_arm``). A check and a restart
    # need more than one wrapped method; a periodic overlapping the
    # held call (``overlap``) runs the call elsewhere once the periodic
    # has read, which no wrapped method reproduces.
    for key in ('check', 'restart', 'overlap'):
        if args.get(key) is not None:
            raise Unsupported('field %r' % key)
    if args.get('times') != 1:
        raise Unsupported('times %r' % args.get('times'))
    if args.get('stop') is not None:
        return _inject_death(args)
    if args.get('do') is not None:
        return _inject_request(args)
    point = _point(args, compute_only=True, changes=True)
    if not args['run'].isidentifier():
        raise Unsupported('task %r' % args['run'])
    return ['self._inject(%r, %r,' % (args['when'], point),
            '             %r, %r%s)' % (args['run'], args['on'],
                                        _narrowed(args))]


def _narrowed(args, server=True):
    """The injection's ``server`` and ``at_host`` arguments, if given.

    ``server``: whether the call takes a server to narrow to.
    """
    narrowed = ''
    if server and args.get('server') is not None:
        narrowed += ', server=%r' % args['server']
    if args.get('at_host') is not None:
        # A host name (the loader's check): the passes on that compute.
        narrowed += ', at_host=%r' % args['at_host']
    return narrowed


def _inject_request(args):
    action, server = args['do']
    if action not in _REQUESTS:
        raise Unsupported('do %r' % action)
    if action == 'delete_service' and not args.get('refused'):
        # Deleted there: the service's records go with it, which the
        # later steps would have to know of.
        raise Unsupported('refused %r (a service deleted at a point)'
                          % args.get('refused'))
    if point_kind(args['point']) == 'record':
        # A delete's end is waited for once the tracker's lock is free
        # (_changes_armed); a service's delete is answered within the
        # request (no cast, no lock of the compute's), as the harness
        # sends it. A live migration's or an abort's casts would run
        # while the saving thread may hold the tracker's lock.
        if action not in ('delete', 'delete_service'):
            raise Unsupported('do %r at a record\'s change' % action)
        point = args['point']
    else:
        point = _point(args)
    return ['self._inject_request(%r, %r,' % (args['when'], point),
            '                     %r, %r%s)' % (action, server,
                                                _narrowed(args))]


def _inject_death(args):
    point = _point(args, compute_only=True, changes=True)
    if point_kind(point) == 'task':
        raise Unsupported('stop at %r (a compute\'s death while the '
                          'conductor runs a task)' % point)
    if point_kind(point) == 'record' and point not in _CAST_SAVES:
        raise Unsupported('stop at %r (a compute\'s death at a record '
                          'change not known to be made only in a method '
                          'cast to it)' % point)
    if point_kind(point) == 'method' and point not in _CAST_METHODS:
        raise Unsupported('stop at %r (a compute\'s death at a method '
                          'that is not cast to it)' % point)
    if args.get('server') is not None:
        raise Unsupported('field %r' % 'server')
    # The loader resolved a role to the host that dies.
    return ['self._inject_death(%r, %r, %r%s)'
            % (args['when'], point, args['host'] or args['stop'],
               _narrowed(args, server=False))]


def inject_check(args, number, lines):
    """An injection that checks expectations at its point (``check``).

    ``lines``: the expectations' assertions (the expectation units'),
    made a function the point calls; ``number``: the step's, which
    ``_assertChecked`` names after the step that passes the point.
    """
    if args.get('times') != 1:
        raise Unsupported('times %r' % args.get('times'))
    point = _point(args, compute_only=True, changes=True)
    return (['def check():'] + ['    ' + line for line in lines]
            + ['self._inject_check(%d, %r, %r, check%s)'
               % (number, args['when'], point, _narrowed(args))])


@translates('shelve')
def shelve(args):
    # Offloaded in the same call: the exporter refuses a scenario whose
    # [DEFAULT] shelved_offload_time is not Nova's default, 0.
    _only(args, ('server',))
    return ['self.servers[%r] = self._shelve_server(' % args['server'],
            '    %s, expected_state=%r)'
            % (_server(args['server']), 'SHELVED_OFFLOADED')]


def _post_action(name, body):
    return ['self.api.post_server_action(',
            '    %s[%r], %s)' % (_server(name), 'id', body)]


def _unshelve_body(args):
    # A host (microversion 2.91) is a requested destination.
    return "{'unshelve': %r}" % (
        {'host': args['host']} if args.get('host') else None,)


@translates('unshelve')
def unshelve(args):
    _only(args, ('server', 'host'))
    return _post_action(args['server'], _unshelve_body(args)) + [
        'self.servers[%r] = self._wait_for_state_change(' % args['server'],
        '    %s, %r)' % (_server(args['server']), 'ACTIVE')]


@translates('fault')
def fault(args):
    # A compute's driver method or its claims, Placement's answer to a
    # request, or a call to Neutron (the fixture's method, as Nova's
    # test of LP#1862633 patches update_port); armed now, or as a
    # service passes a point (``at``: its method wrapped, as an
    # injection's; on one host, the passes of that compute).
    at = args.get('at')
    if at is not None:
        point = _point({'point': at['point']})
        armed = fault(dict((key, value) for key, value in args.items()
                           if key != 'at'))
        if len(armed) != 1:
            raise Unsupported('field %r' % 'at')
        if at.get('host') is None:
            return ['self._arm(%r, %r,' % (at['when'], point),
                    '          lambda manager, passed: %s)' % armed[0]]
        return ['self._arm(%r, %r,' % (at['when'], point),
                '          lambda manager, passed: %s,' % armed[0],
                '          host=%r)' % at['host']]
    if args.get('network') is not None:
        _only(args, ('network', 'times'))
        if not args['network'].isidentifier():
            raise Unsupported('network %r' % args['network'])
        return ['self._network_fault(%r, %r)'
                % (args['network'], args['times'])]
    if args.get('placement') is not None:
        _only(args, ('placement', 'status', 'times'))
        return ['self._placement_fault(%r, %r, %r)'
                % (args['placement'], args['status'], args['times'])]
    _only(args, ('host', 'method', 'times'))
    if args.get('host') is None:
        raise Unsupported('a fault of another service than a compute')
    if args.get('times') is None or not args['method'].isidentifier():
        raise Unsupported('times %r' % args.get('times'))
    return ['self._fault(%r, %r, %r)'
            % (args['host'], args['method'], args['times'])]


# A migration's statuses after which Nova does nothing more for it.
_FINAL = ('confirmed', 'reverted', 'completed', 'error', 'failed',
          'cancelled', 'done')


# The harness's words for an operation that ended short of its resting
# state (harness.cloud.servers): Nova put the server somewhere else.
_UNRESTED = re.compile(r'^(did not reach its resting state'
                       r'|status is [A-Z_]+, not [A-Z_]+)$')


# A failing driver's error (a fault step's, or a fail: host's), which
# Nova records as the server's fault.
_FAULTED = re.compile(r'^injected hypervisor fault: \w+ failed on [\w-]+$')


# The scheduler's answer to a request no host fits, which Nova records
# as the server's fault when it puts the server in ERROR.
_NO_HOST = re.compile(r'^No valid host( was found\.?)?$')


def _unrested(name, error, expect, ending=None, fault_key=True):
    """Wait for where the step's expectations say the server ended.

    ``ending``: (action, event), the one compute event in which the
    operation can fail, waited for in error where no status is expected.
    ``fault_key``: whether Nova records an instance fault with an ERROR
    (which the wait then waits for too).
    """
    status = ((expect.get('servers') or {}).get(name) or {}).get('status')
    # The failing driver's whole error, the scheduler's answer, or the
    # failing method's name in the ERROR server's fault (the harness
    # matches a step's error in its report of the server).
    faulted = _FAULTED.match(error) or (status == 'ERROR' and (
        _NO_HOST.match(error) or error in core_names.DRIVER_FAULTS))
    driver = _FAULTED.match(error) or error in core_names.DRIVER_FAULTS
    if status is None and ending and (_UNRESTED.match(error) or driver):
        # The compute's handler failed (its event in error): the
        # operation ends there, the server where Nova left it; a failing
        # driver's error is the server's fault, as the harness reads it
        # in its report of the server.
        lines = ['self._wait_for_instance_action_event(',
                 '    %s, %r, %r, %r)' % ((_server(name),) + ending
                                          + ('Error',))]
        if driver:
            lines += ['self.assertIn(%r, self.api.get_server(' % error,
                      "    %s['id'])['fault']['message'])" % _server(name)]
        return lines
    if not (_UNRESTED.match(error) or faulted):
        raise Unsupported('error %r (not an operation that ended short of '
                          'its resting state)' % error)
    migration = (expect.get('migrations') or {}).get(name)
    if status is None and migration in _FINAL and _UNRESTED.match(error):
        # Nova sets a move's final status last, as its rollback ends
        # (errors_out_migration, _rollback_live_migration).
        return ['self._wait_for_migration_status(%s, [%r])'
                % (_server(name), migration)]
    if status is None:
        raise Unsupported("error: no status expected for %s (the state "
                          "to wait for)" % name)
    lines = []
    if migration:
        lines.append('self._wait_for_migration_status(%s, [%r])'
                     % (_server(name), migration))
    lines += [
        'self.servers[%r] = self._wait_for_server_parameter(' % name,
        '    %s, {%r: %r, %r: None}%s)' % (
            _server(name), 'status', status, 'OS-EXT-STS:task_state',
            '' if fault_key else ',\n    wait_for_fault_key=False')]
    if faulted:
        # The failing driver's or the scheduler's error, recorded as the
        # server's fault.
        lines.append("self.assertIn(%r, %s['fault']['message'])"
                     % (error, _server(name)))
    return lines


@_FAILING.translates('boot')
def boot_unrested(args, error, expect):
    _only(args, _BOOT_FIELDS)
    name = args['server']
    if _NO_HOST.match(error) and not ((expect.get('servers') or {}).get(
            name) or {}).get('status'):
        # A boot no host fits: Nova's conductor puts the server in ERROR
        # with the scheduler's answer as its fault, where the harness
        # read the error (its report of the server).
        expect = dict(expect, servers=dict(
            expect.get('servers') or {}, **{name: {'status': 'ERROR'}}))
    if not (_UNRESTED.match(error) or _FAULTED.match(error)
            or _NO_HOST.match(error) or error in core_names.DRIVER_FAULTS):
        return _boot_refused(args, error)
    waits = _unrested(name, error, expect)
    status = [line for line in waits if "'status': " in line][0].split(
        "'status': ")[1].split(',')[0]
    return _port_built(args, [
        'self.servers[%r] = self._create_server(' % args['server'],
        '    name=%r, flavor_id=self.flavors[%r],%s'
        % (args['server'], args['flavor'], _image(args)),
        "    %s, networks=%s, expected_state=%s)"
        % (_where(args), _networks(args), status)] + waits)


def _boot_refused(args, error):
    """A boot the API refuses, the error in its answer (over a limit).

    The harness reads the step's error in the API's answer; no server is
    made (a port of its own is, before the request, as the harness makes
    it). Any other answer fails the test.
    """
    return ['exc = self.assertRaises(',
            '    client.OpenStackApiException, self._create_server,',
            '    name=%r, flavor_id=self.flavors[%r],%s'
            % (args['server'], args['flavor'], _image(args)),
            '    %s, networks=%s)' % (_where(args), _networks(args)),
            'self.assertIn(%r, exc.response.text)' % error]


def _action_unrested(name, body, error, expect, ending=None):
    return _post_action(name, body) + _unrested(name, error, expect,
                                                ending)


@_FAILING.translates('confirm')
def confirm_unrested(args, error, expect, stopped=()):
    # The API answers a confirm before the source compute's
    # confirm_resize, where it can fail (nova.compute.api.confirm_resize).
    _only(args, ('server',))
    name = args['server']
    if confirm_held(args, error, expect, stopped):
        return _confirm_held(name, stopped)
    return _action_unrested(name, "{'confirmResize': None}",
                            error, expect,
                            ending=('confirmResize', 'compute_confirm_resize'))


def confirm_held(args, error, expect, stopped):
    """Whether a failing confirm is one held on a stopped compute's bus.

    One compute stopped, the step short of its resting state with the
    migration confirming and no server state expected.
    """
    return (len(stopped) == 1 and bool(_UNRESTED.match(error))
            and (expect.get('migrations') or {}).get(
                args['server']) == 'confirming'
            and not (expect.get('servers') or {}).get(args['server']))


def held_confirm_ends(name):
    """The start of the compute a confirm of ``name`` waits for.

    The cast waiting on its bus runs now: the test waits for its end
    (its event's, whatever its result), as the harness waits for the
    start's resting state; the step's checks then say what it left.
    """
    return ['# The confirm of %s held on its bus runs now: wait for its '
            'end.' % name,
            'self._wait_for_event_end(',
            "    %s, 'confirmResize', 'compute_confirm_resize')"
            % _server(name)]


#: The helper ``held_confirm_ends``'s lines call.
EVENT_END_HELPER = '''
    def _wait_for_event_end(self, server, action_name, event_name):
        """Wait for the event of the server's latest such action to end.

        Whatever its result: integrated_helpers' own wait for an action
        event asks for one.
        """
        def ended():
            actions = [action for action in self.api.get_instance_actions(
                server['id']) if action['action'] == action_name]
            # The API lists the newest action first.
            events = actions and self.api.get_instance_action_details(
                server['id'], actions[0]['request_id'])['events']
            self.assertTrue(
                any(event['event'] == event_name and event['result']
                    for event in events),
                'no end of %s of %s' % (event_name, action_name))

        self._wait_for_assert(ended)
'''


def _confirm_held(name, stopped):
    """A confirm cast to a stopped source compute (``stopped``: hosts).

    The API sets the migration confirming and casts confirm_resize to
    the source; with its compute stopped the cast waits on the bus for
    its start, and nothing of the confirm runs: the step rests there,
    short of its resting state, which its expectations check. The test
    checks that the source is one of the stopped computes, else the
    confirm would run as the step's checks do.
    """
    return _post_action(name, "{'confirmResize': None}") + [
        '# Cast to the source compute, stopped: it waits on the bus for '
        'its start.',
        'self.assertIn(objects.Migration.get_by_id(',
        "    self.context, self._migrations_of(%r)[-1]['id']" % name,
        ').source_compute, %r)' % (sorted(stopped),)]


@_FAILING.translates('revert')
def revert_unrested(args, error, expect):
    _only(args, ('server',))
    return _action_unrested(args['server'], "{'revertResize': None}",
                            error, expect)


@_FAILING.translates('resize')
def resize_unrested(args, error, expect):
    return resize_sent(args) + _unrested(args['server'], error, expect)


@_FAILING.translates('migrate')
def migrate_unrested(args, error, expect):
    return migrate_sent(args) + _unrested(args['server'], error, expect)


@_FAILING.translates('live_migrate')
def live_migrate_unrested(args, error, expect):
    if _FAULTED.match(error):
        # The source's driver fails in its executor, after the RPC
        # handler that records an instance fault has returned.
        raise Unsupported('error %r (a live migration\'s driver error is '
                          'no instance fault)' % error)
    # Nor does its rollback record one (_do_live_migration).
    return live_migrate_sent(args) + _unrested(args['server'], error,
                                               expect, fault_key=False)


@_FAILING.translates('evacuate')
def evacuate_unrested(args, error, expect):
    _only(args, ('server', 'host'))
    return _action_unrested(args['server'], "{'evacuate': %r}" % (
        {'host': args['host']} if args.get('host') else {},), error, expect)


@_FAILING.translates('unshelve')
def unshelve_unrested(args, error, expect):
    return unshelve_sent(args) + _unrested(args['server'], error, expect)


# The request of a step, sent without waiting for the server's rest (a
# step expected to fail, one a compute dies in or whose server a delete
# removed): kind -> (args -> lines).
_SENT = registry.Registry()
get_sent = _SENT.get


def dying(kind, args, error, host):
    """A step whose operation ends with ``host``'s compute dying in it.

    The request is sent and the test waits for the death (the armed
    ``_inject_death`` firing); the operation then rests where the death
    left it, which the step's expectations check: Nova's clean-up does
    not run, so no status settles to wait for.
    """
    send = _SENT.get(kind)
    if send is None:
        raise Unsupported('a %s that a compute dies in' % kind)
    if not _UNRESTED.match(error):
        raise Unsupported('error %r (not an operation that ended short of '
                          'its resting state)' % error)
    return send(args) + ['self._wait_for_death(%r)' % host]


@_SENT.translates('boot')
def boot_sent(args):
    _only(args, _BOOT_FIELDS)
    if args.get('port'):
        # Not waited for: the build's network thread (_port_built) would
        # run after the test has made it synchronous again.
        raise Unsupported('port %r (a boot not waited for)' % (
            args['port'],))
    # BUILD at once: the API answers before the build is cast.
    return ['self.servers[%r] = self._create_server(' % args['server'],
            '    name=%r, flavor_id=self.flavors[%r],%s'
            % (args['server'], args['flavor'], _image(args)),
            "    %s, networks=%s, expected_state='BUILD')"
            % (_where(args), _networks(args))]


@_SENT.translates('resize')
def resize_sent(args):
    _only(args, ('server', 'flavor'))
    return _post_action(args['server'], "{'resize': {'flavorRef': "
                        "self.flavors[%r]}}" % args['flavor'])


@_SENT.translates('migrate')
def migrate_sent(args):
    _only(args, ('server', 'host'))
    return _post_action(args['server'], "{'migrate': %r}" % (
        {'host': args['host']} if args.get('host') else None,))


@_SENT.translates('live_migrate')
def live_migrate_sent(args):
    _only(args, ('server', 'host'))
    return _post_action(args['server'], "{'os-migrateLive': %r}" % (
        {'host': args.get('host'), 'block_migration': 'auto'},))


@_SENT.translates('unshelve')
def unshelve_sent(args):
    _only(args, ('server', 'host'))
    return _post_action(args['server'], _unshelve_body(args))


# The instance action of a step kind, as Nova records it.
_ACTIONS = {'migrate': 'migrate', 'resize': 'resize',
            'live_migrate': 'live-migration'}

# (step kind, point) -> the event of the method in which an operation
# whose server was deleted at the point fails and rolls back, as Nova's
# tests of LP#1848343 wait for it: the conductor's, for a delete while
# the scheduler runs; the destination's prep_resize. Elsewhere the
# rollback runs past any event (a live migration's, in the source's
# executor after pre_live_migration failed): refused.
_GONE_EVENTS = {
    ('migrate', 'scheduler.select_destinations'): 'conductor_migrate_server',
    ('resize', 'scheduler.select_destinations'): 'conductor_migrate_server',
    ('live_migrate', 'scheduler.select_destinations'):
        'conductor_live_migrate_instance',
    ('migrate', 'prep_resize'): 'compute_prep_resize',
    ('resize', 'prep_resize'): 'compute_prep_resize',
    ('migrate', 'finish_resize'): 'compute_finish_resize',
    ('resize', 'finish_resize'): 'compute_finish_resize',
    # The destination's claim goes on and casts resize_instance, in
    # which the source finds the server deleting and reverts the
    # allocations (its handler's _revert_allocation).
    ('migrate', 'migration.status=pre-migrating'): 'compute_resize_instance',
    ('resize', 'migration.status=pre-migrating'): 'compute_resize_instance',
}


# (step kind, point): where an operation whose server a delete sent at
# the point removed goes on in a task a compute spawned, past any event,
# until that task ends: a live migration, in the source's executor
# (_do_live_migration), which sets its migration to error last (a
# deleted server's migration the API no longer lists). Nova's computes
# record such a task until it ends (Manager._in_progress_tasks): the
# test waits for that, as the harness waits for Nova's threads to rest.
_GONE_TASKS = (('live_migrate', 'pre_live_migration'),)


def gone(kind, args, error, point):
    """A step whose server a delete sent at ``point`` removed.

    The request is sent; the delete runs inside it (``_inject_request``);
    the test waits for the event in which the operation then fails, or
    for the end of the task it goes on in.
    """
    if error != 'is gone':
        raise Unsupported('error %r (the server is gone: say "is gone")'
                          % error)
    event = _GONE_EVENTS.get((kind, point))
    send = _SENT.get(kind)
    if (kind, point) in _GONE_TASKS:
        # Gone once the delete has run (in the task, which has then
        # started), then the task's end.
        return send(args) + [
            'self._wait_until_deleted(%s)' % _server(args['server']),
            'self._wait_for_tasks_of(%r)' % args['server']]
    if event is None or send is None:
        raise Unsupported('error %r after a delete at %r (no event of '
                          'Nova ends the %s there)' % (error, point, kind))
    return send(args) + [
        'self._wait_for_instance_action_event(',
        '    %s, %r, %r, %r)' % (_server(args['server']), _ACTIONS[kind],
                                 event, 'Error')]
