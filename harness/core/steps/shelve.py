"""Shelving: ``shelve: server``, ``shelve_offload: server``,
``unshelve: server`` or ``{server, host?}``.

What Nova 34 does (nova/compute/api.py, conductor/manager.py
``unshelve_instance``, compute/manager.py ``shelve_instance``,
``_shelve_offload_instance``, ``unshelve_instance``):

- ``shelve`` (ACTIVE, STOPPED, PAUSED, SUSPENDED): the API snapshots the
  image and casts ``shelve_instance`` to the host, which powers the guest
  off and leaves it SHELVED on its host: its allocation and the tracker's
  count (pinned CPUs too) stay. With ``[DEFAULT] shelved_offload_time`` 0
  (Nova's default) the same call offloads it at once; with a positive
  time the ``_poll_shelved_instances`` periodic offloads it once the time
  has passed; with a negative one, never;
- offloading (``shelve_offload``, from SHELVED; or the above): the host
  deletes the allocation in Placement, drops the guest from its tracker
  (``update_usage`` of a SHELVED_OFFLOADED guest, pinned CPUs too), nulls
  ``instance.host`` and tells the scheduler: the server holds nothing
  anywhere;
- ``unshelve`` of a SHELVED server: the conductor casts ``start_instance``
  to its host (nothing is claimed again); of a SHELVED_OFFLOADED one: the
  conductor asks the scheduler (which allocates on the chosen host), and
  that host's ``unshelve_instance`` claims (``instance_claim``: counted,
  NUMA guests pinned anew) and spawns. ``host`` (microversion 2.91) is
  only allowed for an offloaded server (``_check_offloaded``: 409
  otherwise), a requested destination the scheduler still checks.

The loader's state after ``shelve`` follows ``shelved_offload_time``; a
periodic offload is counted when a ``run_periodic: _poll_shelved_instances``
runs, or the clock (``advance_clock``) reaches the periodic's next due
time, after the offload time has passed (``offloaded_by_now``).
"""

from harness.core.steps import base

POLL_TASK = '_poll_shelved_instances'
# The periodic's spacing: ``shelved_poll_interval``'s default, read when
# Nova's compute manager module is imported (the decorator's argument), so
# a scenario's config cannot change it. The computes start at clock 0, so
# the clock fires it at its multiples. The loader does not follow a
# compute that is stopped (runs no periodic) or restarted (starts its
# schedule over): run the periodic explicitly in such scenarios.
POLL_SPACING = 3600
# Nova's shelve accepts these (``@check_instance_state``).
SHELVABLE = ('active', 'shutoff', 'paused', 'suspended')


def offload_time(state):
    """``[DEFAULT] shelved_offload_time`` of the scenario (Nova's 0)."""
    value = state.config.get('DEFAULT', {}).get('shelved_offload_time')
    return 0 if value is None else value


def offloaded_by_now(scenario, state, server):
    """Whether ``_poll_shelved_instances`` has offloaded ``server``.

    Its test is ``timeutils.is_older_than(shelved_at, offload_time)``:
    strictly more than the offload time since the shelve.
    """
    wait = offload_time(state)
    if state.servers.get(server) != 'shelved' or wait <= 0:
        return False
    clock, shelved_at, offloaded = 0.0, None, False
    for step in scenario.steps:
        if step.kind == 'advance_clock':
            start, clock = clock, clock + step.args['seconds']
            last_due = clock // POLL_SPACING * POLL_SPACING
            if shelved_at is not None and start < last_due \
                    and last_due - shelved_at > wait:
                offloaded = True
        elif step.kind == 'run_periodic' and step.args['task'] == POLL_TASK:
            if shelved_at is not None and clock - shelved_at > wait:
                offloaded = True
        elif step.args.get('server') == server and not step.error:
            if step.kind == 'shelve':
                shelved_at, offloaded = clock, False
            elif step.kind in ('shelve_offload', 'unshelve'):
                shelved_at = None
    return offloaded


def _needs(check, scenario, state, server, wanted, doing):
    if offloaded_by_now(scenario, state, server):
        state.servers[server] = 'shelved_offloaded'
    base.needs(check, state, server, wanted, doing)


class Shelve(base.ServerOperation):
    name = 'shelve'
    summary = ('Shelve a server: SHELVED on its host, or offloaded at once '
               'when ``shelved_offload_time`` is 0 (Nova\'s default).')
    fields = base.server_field(
        'an ACTIVE, SHUTOFF, PAUSED or SUSPENDED server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- shelve: vm1                # the examples' shelved_offload_time is -1
  expect: {servers: {vm1: {status: SHELVED, host: src}},
           allocations: {vm1: {src: pin2}}}
'''
    # ServerOps.shelve waits for SHELVED_OFFLOADED when the offload is
    # immediate (shelved_offload_time 0).
    resting = {'status': 'SHELVED'}
    # With shelved_offload_time 0 the host offloads in the same call
    # (_shelve_offload_instance): the points of shelve_offload.
    points = frozenset((
        'shelve_instance', 'instance.host', 'scheduler.delete_instance_info'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        _needs(check, scenario, state, args['server'], SHELVABLE, 'shelve')
        if not error:
            state.servers[args['server']] = (
                'shelved_offloaded' if offload_time(state) == 0
                else 'shelved')
        return args

    def run(self, cloud, args):
        cloud.servers.shelve(args['server'])


class ShelveOffload(base.ServerOperation):
    name = 'shelve_offload'
    summary = ('Offload a shelved server: its host frees everything it '
               'held; wait for SHELVED_OFFLOADED.')
    fields = base.server_field('a SHELVED server')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- shelve: vm1
- shelve_offload: vm1
  expect:
    servers: {vm1: {status: SHELVED_OFFLOADED, host: null}}
    allocations: {vm1: {}}
    pinned_cpus: {src: 0}
'''
    resting = {'status': 'SHELVED_OFFLOADED'}
    points = frozenset((
        'shelve_offload_instance', 'instance.host',
        'scheduler.delete_instance_info'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        _needs(check, scenario, state, args['server'], ('shelved',),
               'shelve_offload')
        if not error:
            state.servers[args['server']] = 'shelved_offloaded'
        return args

    def run(self, cloud, args):
        cloud.servers.shelve_offload(args['server'])


class Unshelve(base.ServerOperation):
    name = 'unshelve'
    summary = ('Unshelve a server: start it on its host, or schedule and '
               'spawn an offloaded one; wait until it is ACTIVE.')
    # The explorer injects periodics at its points on the server's host
    # (no migration names one).
    moves = True
    roles = ('server_host',)
    fields = {
        'server': ('server name', 'a SHELVED or SHELVED_OFFLOADED server'),
        'host': ('host name', 'where to unshelve an offloaded server '
                 '(microversion 2.91; the scheduler still checks it)'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- shelve: vm1
- shelve_offload: vm1
- unshelve: {server: vm1, host: dst}
  expect: {allocations: {vm1: {dst: pin2}}, pinned_cpus: {src: 0, dst: 2}}
'''
    resting = {'status': 'ACTIVE'}
    # SHELVED: the conductor casts start_instance to the host; offloaded:
    # it schedules and casts unshelve_instance to the chosen host.
    points = frozenset((
        'conductor.unshelve_instance', 'start_instance',
        'scheduler.select_destinations', 'scheduler.update_instance_info',
        'unshelve_instance', 'instance.host'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        server = args['server']
        _needs(check, scenario, state, server,
               ('shelved', 'shelved_offloaded'), 'unshelve')
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
            if state.servers[server] != 'shelved_offloaded' and not error:
                check.fail('host', (
                    'cannot unshelve %s to a named host: %s; Nova takes a '
                    'host only for an offloaded server' % (
                        server, base.SERVER_STATES[state.servers[server]])))
        if not error:
            state.servers[server] = 'active'
        return args

    def label(self, args):
        where = ' to %s' % args['host'] if args.get('host') else ''
        return 'unshelve %s%s' % (args['server'], where)

    def run(self, cloud, args):
        cloud.servers.unshelve(args['server'], host=args.get('host'))


KINDS = (Shelve(), ShelveOffload(), Unshelve())
