"""``rebuild: {server, image?}``: rebuild a server in place, wait for ACTIVE.

``image`` names one of the scenario's ``images:`` (the image the stand-in
boots by default otherwise). Nova rebuilds on the server's own host with
no new claim (``rebuild_claim`` is a no-op unless evacuating): the
allocation and the pinned CPUs stay as they are. With the same image the
conductor casts ``rebuild_instance`` straight to the host; a new image
goes through the scheduler first, restricted to the same host and to the
rebuild filters, which allocates nothing. A new image that would change
the server's NUMA constraints (``hw_cpu_policy``, ``hw_numa_nodes``,
``hw_mem_page_size``, ...) is refused by the API
(``ImageNUMATopologyRebuildConflict``, 400): say ``error:``.
"""

from harness.core.steps import base


class Rebuild(base.ServerOperation):
    name = 'rebuild'
    summary = 'Rebuild a server on its own host; wait until it is ACTIVE.'
    fields = {
        'server': ('server name', 'an ACTIVE or SHUTOFF server'),
        'image': ('image name', "one of the scenario's ``images:`` (through "
                  "the scheduler, restricted to the server's host); the "
                  'same image otherwise'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- rebuild: {server: vm1, image: other}
  expect: {allocations: {vm1: {src: pin2}}, pinned_cpus: {src: 2}}
'''
    # The explorer injects periodics at its points on the server's host
    # (no migration names one).
    moves = True
    roles = ('server_host',)
    resting = {'status': 'ACTIVE'}
    # The compute saves instance.host (to the same host) as it rebuilds,
    # and tells the scheduler of the instance.
    points = frozenset((
        'conductor.rebuild_instance', 'scheduler.select_destinations',
        'scheduler.update_instance_info', 'rebuild_instance',
        'instance.host',
        # Every rebuild ends there, on its own host, with no migration
        # (ComputeManager._do_rebuild_instance).
        'tracker.finish_evacuation'))

    def parse(self, check, value, scenario, state, error):
        args = self.server_args(check, value)
        # Nova rebuilds ACTIVE, STOPPED and ERROR servers. ERROR is left
        # out: a step said it fails, it may be on no host. A stopped one
        # stays SHUTOFF; but Nova's answer to its rebuild fails Nova's own
        # response schema (findings/rebuild_stopped_server_*.yaml).
        base.needs(check, state, args['server'], ('active', 'shutoff'),
                   'rebuild')
        if args.get('image') is not None:
            check.known(args['image'], scenario.images, 'image',
                        noun='image')
        return args

    def label(self, args):
        image = ' from %s' % args['image'] if args.get('image') else ''
        return 'rebuild %s%s' % (args['server'], image)

    def run(self, cloud, args):
        cloud.servers.rebuild(args['server'], image=args.get('image'))


KIND = Rebuild()
