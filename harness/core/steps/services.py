"""Compute service state through Nova's API (``/os-services``).

``disable_compute: {host, reason?}`` and ``enable_compute: host``: the
scheduler's ComputeFilter skips a disabled compute; Nova's API also asks an
up compute (``set_host_enabled``, an RPC call) to add or remove the
``COMPUTE_STATUS_DISABLED`` trait on its resource provider.
``force_down: host`` and ``force_up: host``: the API counts a forced-down
compute down at once (evacuation, local deletes, the scheduler skips it).
``delete_service: host``: Nova deletes the service, its compute node
records and their resource providers; it refuses (409) while the host has
instances or migrations in progress.

They are operations only so that a step may say ``error:`` (Nova's 409);
they move no server and the explorer injects nothing at their points.

The loader refuses what would be a no-op or a mistake: disabling a
disabled compute, enabling an enabled one, forcing down twice, forcing up
one not forced down, anything on a host whose service was deleted,
deleting the service of a running compute (Nova's API reference: stop it
first, or its next periodic re-creates the compute node and provider), and
enabling or disabling a stopped compute Nova still sees up (the API's
``set_host_enabled`` RPC call would wait for its timeout). A step with
``error:`` leaves the state as it was.
"""

from harness.core.steps import base


class _ServiceStep(base.StepKind):
    operation = True
    fields = base.host_field('the compute')

    def parse(self, check, value, scenario, state, error):
        if isinstance(value, dict):
            check.keys(value, self.fields, required=('host',))
            args = dict(value)
        else:
            args = {'host': value}
        host = check.known(args['host'], scenario.hosts, 'host')
        if 'reason' in args:
            check.string(args['reason'], 'reason')
        if host in state.service_deleted:
            check.fail('host', 'the compute service of %r was deleted'
                       % host)
        self.check_state(check, host, state)
        if not error:
            self.change_state(host, state)
        return args

    def check_state(self, check, host, state):
        pass

    def change_state(self, host, state):
        pass

    def label(self, args):
        return '%s %s' % (self.name.replace('_', ' '), args['host'])


class _Status(_ServiceStep):
    # The API calls the compute's set_host_enabled only while it sees the
    # compute up (it logs and goes on otherwise).
    points = frozenset(('set_host_enabled',))

    def check_state(self, check, host, state):
        if host in state.stopped and not state.seen_down(host):
            # A call to it would wait for the RPC timeout (casts queue).
            check.fail('host', 'compute %r is stopped but Nova still sees '
                       'it up: the API would call its set_host_enabled and '
                       'wait for the RPC timeout; force it down or '
                       'advance_clock past service_down_time first' % host)


class DisableCompute(_Status):
    name = 'disable_compute'
    summary = ('Disable a compute service through the API: the scheduler '
               'skips it.')
    fields = {
        'host': ('host name', 'an enabled compute; the step may be just the '
                 'name'),
        'reason': ('text', 'the disabled reason the API records'),
    }
    example = '''\
- disable_compute: {host: dst, reason: maintenance}
- boot: {server: vm1, flavor: pin2}
  expect: {allocations: {vm1: {src: pin2}}}
'''

    def check_state(self, check, host, state):
        if host in state.disabled:
            check.fail('host', 'compute %r is already disabled' % host)
        super().check_state(check, host, state)

    def change_state(self, host, state):
        state.disabled.add(host)

    def run(self, cloud, args):
        cloud.services.disable(args['host'], args.get('reason'))


class EnableCompute(_Status):
    name = 'enable_compute'
    summary = 'Enable a disabled compute service through the API.'
    fields = base.host_field('a disabled compute')
    example = '''\
- disable_compute: dst
- enable_compute: dst
'''

    def check_state(self, check, host, state):
        if host not in state.disabled:
            check.fail('host', 'compute %r is enabled already' % host)
        super().check_state(check, host, state)

    def change_state(self, host, state):
        state.disabled.discard(host)

    def run(self, cloud, args):
        cloud.services.enable(args['host'])


class ForceDown(_ServiceStep):
    name = 'force_down'
    summary = ('Force a compute service down through the API: Nova counts '
               'it down at once.')
    fields = base.host_field('a compute not forced down')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop_compute: src
- force_down: src            # no need to wait for service_down_time
- evacuate: vm1
'''

    def check_state(self, check, host, state):
        if host in state.forced_down:
            check.fail('host', 'compute %r is already forced down' % host)

    def change_state(self, host, state):
        state.forced_down.add(host)

    def run(self, cloud, args):
        cloud.services.force_down(args['host'])


class ForceUp(_ServiceStep):
    name = 'force_up'
    summary = 'Undo a ``force_down`` through the API.'
    fields = base.host_field('a compute forced down')
    example = '''\
- force_down: dst
- force_up: dst
'''

    def check_state(self, check, host, state):
        if host not in state.forced_down:
            check.fail('host', 'compute %r is not forced down' % host)

    def change_state(self, host, state):
        state.forced_down.discard(host)

    def run(self, cloud, args):
        cloud.services.force_up(args['host'])


class DeleteService(_ServiceStep):
    name = 'delete_service'
    summary = ('Delete a stopped compute\'s service: its compute nodes and '
               'their resource providers go too (Nova refuses while the '
               'host has instances or migrations in progress).')
    fields = base.host_field('a stopped compute')
    example = '''\
- stop_compute: dst
- delete_service: dst
  expect: {providers: [src, n1, n2, n3]}
'''

    def check_state(self, check, host, state):
        if host not in state.stopped:
            # Nova's API reference: stop nova-compute first; a running one
            # re-creates the compute node and provider at its next
            # periodic, for a service that no longer exists.
            check.fail('host', 'compute %r is running; stop it first '
                       '(stop_compute): a running compute re-creates the '
                       'records the delete removes' % host)

    def change_state(self, host, state):
        # A deleted service is neither disabled nor forced down any more:
        # a compute started again registers a new, enabled one.
        state.service_deleted.add(host)
        state.disabled.discard(host)
        state.forced_down.discard(host)

    def run(self, cloud, args):
        cloud.services.delete(args['host'])


KINDS = (DisableCompute(), EnableCompute(), ForceDown(), ForceUp(),
         DeleteService())
