"""``fault: {host, method, times?}``: arm a fault on a running compute.

Or ``fault: {network: <call>, times?}``: the network service's call
(``names.NETWORK_FAULTS``: create_port_binding, update_port, ...) fails
at Nova's Neutron stand-in, as a failing Neutron server answers.

Or ``fault: {placement: 'METHOD /path', status?, times?}``: Placement
answers the next ``times`` such requests with ``status`` (409, a
generation conflict with Placement's ``placement.concurrent_update`` code,
the default; or 500), in front of its own WSGI app (``*`` matches one path
segment: ``PUT /allocations/*``); ``status: timeout`` answers nothing:
Placement does not handle the request and the client's read times out
(keystoneauth's ``ConnectTimeout``); ``status: unreachable`` takes no
connection: it is refused, as by a Placement that is down or that the
service is not configured to reach (keystoneauth's ``ConnectFailure``,
which Nova's report client logs and swallows where it says
``safe_connect``).

From this step on, the next ``times`` (default 1) calls of ``method`` on
``host``'s compute fail: a virt driver method (``names.DRIVER_FAULTS``:
spawn, power_off, snapshot, pre_live_migration, live_migration, ...)
raises as a failing hypervisor would, and ``claim`` makes the resource
tracker's next claim there raise ``ComputeResourcesUnavailable``, as a
host that no longer fits does. A later step must call it: a fault that
never fires fails the run, as an injection that never fires does. The
fault holds on the compute as it runs; a compute stopped and started
again starts without it.

With ``at: {before | after: point, host?}`` the fault is armed when that
race point of a later step is passed (on ``host`` only, if given)
instead of now, as ``inject`` arms a periodic there: a failure that only
the calls after that moment meet (the conductor's claim on an alternate
host, made after the first host's claim failed, when the build's first
claim went through). Both must happen: the point passed, and the fault
armed there met.
"""

from harness.core import errors
from harness.core import names
from harness.core.steps import base


class Fault(base.StepKind):
    name = 'fault'
    summary = ('Arm a failure that a later step meets: a hypervisor call or '
               'a claim on a compute, a network call, or a Placement '
               'request.')
    fields = {
        'host': ('host name', 'a running compute whose ``method`` fails'),
        'method': ('driver method or ``claim``', 'a virt driver method '
                   '(``spawn``, ``power_off``, ``pre_live_migration``, '
                   '``live_migration``, ...) that raises as a failing '
                   'hypervisor would; ``claim``: the resource tracker\'s '
                   'next claim raises ``ComputeResourcesUnavailable``'),
        'network': ('network call', 'instead of ``host``: the network '
                    'service\'s call (``create_port_binding``, '
                    '``activate_port_binding``, ``update_port``, ...) '
                    'fails as a failing Neutron server answers'),
        'placement': ("'METHOD /path'", 'instead of ``host``: Placement '
                      'answers such requests with ``status`` (``*`` '
                      'matches one path segment: ``PUT /allocations/*``)'),
        'status': ('409, 500, ``timeout`` or ``unreachable``', 'with '
                   '``placement``: the answer (default 409, a generation '
                   'conflict); ``timeout``: no answer, the client\'s read '
                   'times out; ``unreachable``: no connection, the '
                   'client\'s is refused'),
        'times': ('whole number', 'how many calls fail (default 1)'),
        'at': ('{before | after: race point, host?}', 'arm it at that '
               'race point of a later step (on ``host`` only, if given) '
               'instead of now'),
    }
    example = '''\
- fault: {host: src, method: spawn}
- boot: {server: vm1, flavor: pin2, host: src}   # no alternate host
  error: did not reach its resting state
  expect: {allocations: {}, pinned_cpus: {src: 0}, servers: {vm1: ERROR}}
'''
    arms = True

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        if 'at' not in value:
            args = self._parse_now(check, value, scenario, state)
            if args.get('status') == names.PLACEMENT_UNREACHABLE:
                method, path = args['placement'].split(' ', 1)
                state.placement_cut_off.append(
                    [method, names.placement_path(path), args['times']])
            return args
        at = base.race_point_at(check, value['at'])
        if at['host'] is not None:
            check.known(at['host'], scenario.hosts, 'at.host')
        rest = {key: field for key, field in value.items() if key != 'at'}
        return dict(self._parse_now(check, rest, scenario, state), at=at)

    def _parse_now(self, check, value, scenario, state):
        if 'placement' in value:
            return self._parse_placement(check, value)
        if 'network' in value:
            check.keys(value, ('network', 'times'), required=('network',))
            call = check.string(value['network'], 'network')
            if call not in names.NETWORK_FAULTS:
                check.fail('network', 'cannot fail network call %r; '
                           'known: %s' % (call,
                                          ', '.join(names.NETWORK_FAULTS)))
            times = value.get('times', 1)
            check.integer(times, 'times', minimum=1)
            return {'network': call, 'times': times}
        check.keys(value, ('host', 'method', 'times'),
                   required=('host', 'method'))
        host = check.known(value['host'], scenario.hosts, 'host')
        if host in state.stopped:
            check.fail('host', 'compute %r is stopped; a fault is armed on '
                       'a running compute' % host)
        method = check.string(value['method'], 'method')
        if method not in names.FAULTS:
            check.fail('method', 'cannot fail %r; a fault can be put in: %s'
                       % (method, ', '.join(names.FAULTS)))
        times = value.get('times', 1)
        check.integer(times, 'times', minimum=1)
        return {'host': host, 'method': method, 'times': times}

    @staticmethod
    def _parse_placement(check, value):
        check.keys(value, ('placement', 'status', 'times'),
                   required=('placement',))
        request = check.string(value['placement'], 'placement')
        if not names.PLACEMENT_REQUEST.match(request):
            check.fail('placement', 'expected "METHOD /path" (GET, PUT, '
                       'POST, DELETE or PATCH; * for one segment), got %r'
                       % request)
        status = value.get('status', 409)
        if status not in names.PLACEMENT_STATUSES:
            check.fail('status', 'Placement faults answer %s, not %s' % (
                ' or '.join(map(str, names.PLACEMENT_STATUSES)),
                errors.show(status)))
        times = value.get('times', 1)
        check.integer(times, 'times', minimum=1)
        return {'placement': request, 'status': status, 'times': times}

    def label(self, args):
        times = '' if args['times'] == 1 else ' (%d times)' % args['times']
        at = args.get('at')
        if at:
            times += ' %s %s%s' % (at['when'], at['point'], ' on %s' % (
                at['host']) if at['host'] else '')
        if 'network' in args:
            return 'fault: network %s%s' % (args['network'], times)
        if 'placement' in args:
            return 'fault: Placement %s on %s%s' % (
                args['status'], args['placement'], times)
        return 'fault %s on %s%s' % (args['method'], args['host'], times)

    def run(self, cloud, args):
        at = args.get('at')
        if not at:
            return self._arm(cloud, args)
        # Armed: what the runner keeps to say if it never fired.
        return base.ArmedAt(
            cloud.race.at(at['point'], when=at['when'], host=at['host']),
            lambda: self._arm(cloud, args), self.label(args))

    @staticmethod
    def _arm(cloud, args):
        if 'network' in args:
            return cloud.faults.arm_network(args['network'],
                                            times=args['times'])
        if 'placement' in args:
            return cloud.faults.arm_placement(
                args['placement'], status=args['status'],
                times=args['times'])
        return cloud.faults.arm(args['host'], args['method'],
                                times=args['times'])


KIND = Fault()
