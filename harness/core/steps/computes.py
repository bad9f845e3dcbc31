"""``stop_compute: host`` and ``start_compute: host``.

A stopped compute still looks up to Nova until ``service_down_time`` has
passed since its last heartbeat; casts to it wait in its queue and run
when it starts again. Starting a compute runs Nova's start-up pass
(``update_available_resource``), which reconciles its tracker.
"""

from harness.core.steps import base


class _Compute(base.StepKind):
    stopping = None

    def parse(self, check, value, scenario, state, error):
        if isinstance(value, dict):
            check.keys(value, ('host',), required=('host',))
            value = value['host']
        host = check.known(value, scenario.hosts, 'host')
        if self.stopping:
            if host in state.stopped:
                check.fail('host', 'compute %r is already stopped' % host)
            state.stop(host)
        else:
            if host not in state.stopped:
                check.fail('host', 'compute %r is running; stop it first'
                           % host)
            state.start(host)
        return {'host': host}

    def label(self, args):
        return '%s %s' % (self.name.replace('_', ' '), args['host'])


class StopCompute(_Compute):
    name = 'stop_compute'
    stopping = True

    def run(self, cloud, args):
        cloud.stop_compute(args['host'])


class StartCompute(_Compute):
    name = 'start_compute'
    stopping = False
    # The casts queued while it was down run when it starts.
    points = base.ANY_POINT

    def run(self, cloud, args):
        cloud.restart_compute(args['host'])

    def reconciles(self, args, running):
        # pre_start_hook runs update_available_resource at start-up.
        return {args['host']}


KINDS = (StopCompute(), StartCompute())
