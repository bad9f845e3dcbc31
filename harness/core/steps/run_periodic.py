"""``run_periodic: task`` or ``{task, host | hosts}``: run a periodic task
on the named computes (all, in name order, when none is named)."""

from harness.core import names
from harness.core.steps import base


class RunPeriodic(base.StepKind):
    name = 'run_periodic'
    summary = ('Run a periodic task on the named computes, or on all of '
               'them in name order.')
    fields = {
        'task': ('periodic task name', 'one of the compute manager\'s '
                 'periodic tasks (``update_available_resource``, '
                 '``_poll_shelved_instances``, ...); the step may be just '
                 'the name'),
        'host': ('host name', 'run it on this compute only'),
        'hosts': ('list of host names', 'run it on these computes, in '
                  'this order'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- run_periodic: {task: update_available_resource, host: src}
  expect: {pinned_cpus: {src: 2, dst: 0}}
- run_periodic: update_available_resource
'''
    # A periodic may start operations (confirm a resize, delete a server).
    points = base.ANY_POINT

    def parse(self, check, value, scenario, state, error):
        if isinstance(value, str):
            value = {'task': value}
        check.mapping(value, 'the step')
        check.keys(value, ('task', 'host', 'hosts'), required=('task',))
        task = check.string(value['task'], 'task')
        if task not in names.PERIODICS:
            check.fail('task', 'unknown periodic task %r; known: %s'
                       % (task, ', '.join(names.PERIODICS)))
        hosts = value.get('hosts', value.get('host', []))
        hosts = [hosts] if isinstance(hosts, str) else list(
            check.sequence(hosts, 'hosts'))
        for host in hosts:
            check.known(host, scenario.hosts, 'host')
        return {'task': task, 'hosts': hosts}

    def label(self, args):
        return 'run %s on %s' % (args['task'],
                                 ', '.join(args['hosts']) or 'all')

    def run(self, cloud, args):
        for host in args['hosts'] or sorted(cloud.computes):
            cloud.run_periodic(args['task'], host)

    def reconciles(self, args, running):
        # The periodic that reconciles ran after everything else the step
        # did, so it closes those hosts' windows.
        if args['task'] != names.RECONCILE:
            return set()
        return set(args['hosts'] or running)


KIND = RunPeriodic()
