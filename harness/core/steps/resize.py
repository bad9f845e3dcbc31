"""``resize: {server, flavor}``: resize, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Resize(base.ColdMove):
    name = 'resize'
    summary = 'Resize a server to another flavor; wait for VERIFY_RESIZE.'
    fields = {
        'server': ('server name', 'an ACTIVE or SHUTOFF server'),
        'flavor': ('flavor name', "the new flavor, one of the scenario's "
                   '``flavors:``'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- resize: {server: vm1, flavor: pin4}
  expect:
    allocations: {vm1: {dst: pin4}, migration(vm1): {src: pin2}}
    pinned_cpus: {src: 2, dst: 4}
    servers: {vm1: {status: VERIFY_RESIZE, host: dst}}
'''
    required = ('server', 'flavor')

    def check_target(self, check, args, scenario):
        check.known(args['flavor'], scenario.flavors, 'flavor')

    def label(self, args):
        return 'resize %s to %s' % (args['server'], args['flavor'])

    def run(self, cloud, args):
        cloud.servers.resize(args['server'], args['flavor'])


KIND = Resize()
