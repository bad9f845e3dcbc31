"""``resize: {server, flavor}``: resize, wait for VERIFY_RESIZE."""

from harness.core.steps import base


class Resize(base.ColdMove):
    name = 'resize'
    fields = ('server', 'flavor')
    required = ('server', 'flavor')

    def check_target(self, check, args, scenario):
        check.known(args['flavor'], scenario.flavors, 'flavor')

    def label(self, args):
        return 'resize %s to %s' % (args['server'], args['flavor'])

    def run(self, cloud, args):
        cloud.servers.resize(args['server'], args['flavor'])


KIND = Resize()
