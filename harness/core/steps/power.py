"""Power operations: ``stop``, ``start``, ``reboot``, ``pause``, ``unpause``,
``suspend``, ``resume``; each ``server`` or ``{server}`` (``reboot`` also
takes ``hard: true``).

The API casts one RPC method to the server's compute, which acts on the
guest and saves the new vm_state; no claim, no scheduler, no Placement
call: the allocations, the tracker and the pinned CPUs stay as they are (a
stopped or suspended guest keeps its resources, and a pinned guest its
CPUs, in ``instance.numa_topology``, which the tracker keeps counting).

The states each accepts are those of its ``@check_instance_state`` in
nova/compute/api.py (Nova 34):

- ``stop``: ACTIVE, ERROR (ERROR is a server a step said fails: Nova
  stops it if it has a host, else refuses; say ``error:`` then);
- ``start``: STOPPED;
- ``reboot``: soft ACTIVE (``ALLOW_SOFT_REBOOT``); hard ACTIVE, STOPPED,
  PAUSED, SUSPENDED, ERROR (``ALLOW_HARD_REBOOT``); either ends ACTIVE;
- ``pause``: ACTIVE; ``unpause``: PAUSED;
- ``suspend``: ACTIVE; ``resume``: SUSPENDED.
"""

from harness.core import errors
from harness.core.steps import base


class PowerOperation(base.ServerOperation):
    """One RPC cast to the server's compute; see the module docstring."""

    #: SERVER_STATES keys Nova's API accepts.
    accepts = ()
    #: The SERVER_STATES key it leaves the server in.
    becomes = None

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        base.needs(check, state, args['server'], self.allowed(args),
                   self.name)
        if not error:
            state.servers[args['server']] = self.becomes
        return args

    def allowed(self, args):
        return self.accepts

    def run(self, cloud, args):
        getattr(cloud.servers, self.name)(args['server'])


class Stop(PowerOperation):
    name = 'stop'
    summary = 'Power a server off; wait until it is SHUTOFF.'
    fields = base.server_field(
        'an ACTIVE server, or one in ERROR that has a host')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop: vm1
  expect: {servers: {vm1: SHUTOFF}, pinned_cpus: {src: 2}}
'''
    accepts = ('active', 'error')
    becomes = 'shutoff'
    resting = {'status': 'SHUTOFF'}
    points = frozenset(('stop_instance',))


class Start(PowerOperation):
    name = 'start'
    summary = 'Power a stopped server on; wait until it is ACTIVE.'
    fields = base.server_field('a SHUTOFF server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop: vm1
- start: vm1
  expect: {servers: {vm1: ACTIVE}}
'''
    accepts = ('shutoff',)
    becomes = 'active'
    resting = {'status': 'ACTIVE'}
    points = frozenset(('start_instance',))


class Reboot(PowerOperation):
    name = 'reboot'
    summary = 'Reboot a server, soft or hard; wait until it is ACTIVE.'
    fields = {
        'server': ('server name', 'soft: an ACTIVE server; hard: ACTIVE, '
                   'SHUTOFF, PAUSED, SUSPENDED or in ERROR; the step may be '
                   'just the name (a soft reboot)'),
        'hard': ('true or false', 'a hard reboot (default false)'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop: vm1
- reboot: {server: vm1, hard: true}
  expect: {servers: {vm1: ACTIVE}, pinned_cpus: {src: 2}}
'''
    becomes = 'active'
    resting = {'status': 'ACTIVE'}
    points = frozenset(('reboot_instance',))

    def parse(self, check, value, scenario, state, error):
        if isinstance(value, dict) and 'hard' in value and \
                not isinstance(value['hard'], bool):
            check.fail('hard', 'expected true or false, got %s'
                       % errors.show(value['hard']))
        return super().parse(check, value, scenario, state, error)

    def allowed(self, args):
        if args.get('hard'):
            return ('active', 'shutoff', 'paused', 'suspended', 'error')
        return ('active',)

    def label(self, args):
        return '%s reboot %s' % ('hard' if args.get('hard') else 'soft',
                                 args['server'])

    def run(self, cloud, args):
        cloud.servers.reboot(args['server'], hard=bool(args.get('hard')))


class Pause(PowerOperation):
    name = 'pause'
    summary = 'Pause a server; wait until it is PAUSED.'
    fields = base.server_field('an ACTIVE server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- pause: vm1
  expect: {servers: {vm1: PAUSED}, allocations: {vm1: {src: pin2}}}
'''
    accepts = ('active',)
    becomes = 'paused'
    resting = {'status': 'PAUSED'}
    points = frozenset(('pause_instance',))


class Unpause(PowerOperation):
    name = 'unpause'
    summary = 'Unpause a paused server; wait until it is ACTIVE.'
    fields = base.server_field('a PAUSED server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- pause: vm1
- unpause: vm1
  expect: {servers: {vm1: ACTIVE}}
'''
    accepts = ('paused',)
    becomes = 'active'
    resting = {'status': 'ACTIVE'}
    points = frozenset(('unpause_instance',))


class Suspend(PowerOperation):
    name = 'suspend'
    summary = 'Suspend a server; wait until it is SUSPENDED.'
    fields = base.server_field('an ACTIVE server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- suspend: vm1
  expect: {servers: {vm1: SUSPENDED}, pinned_cpus: {src: 2}}
'''
    accepts = ('active',)
    becomes = 'suspended'
    resting = {'status': 'SUSPENDED'}
    points = frozenset(('suspend_instance',))


class Resume(PowerOperation):
    name = 'resume'
    summary = 'Resume a suspended server; wait until it is ACTIVE.'
    fields = base.server_field('a SUSPENDED server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- suspend: vm1
- resume: vm1
  expect: {servers: {vm1: ACTIVE}}
'''
    accepts = ('suspended',)
    becomes = 'active'
    resting = {'status': 'ACTIVE'}
    points = frozenset(('resume_instance',))


KINDS = (Stop(), Start(), Reboot(), Pause(), Unpause(), Suspend(),
         Resume())
