"""``discover_hosts: {maps: [host, ...]}``: what ``nova-manage cell_v2
discover_hosts`` does.

Nova looks for compute node records not flagged ``mapped``, maps each of
their hosts that has no host mapping yet to the cell, and flags the
records it saw (``nova.objects.host_mapping.discover_hosts``). The run
maps every host itself as its compute first starts, as a deployment's
``discover_hosts`` would, and flags its records; a compute whose service
was deleted may be started unmapped (``start_compute: {host, mapped:
false}``), which this step then finds. ``maps`` names the hosts Nova
must map, exactly (``[]``: none); another answer fails the step.
"""

from harness.core import errors
from harness.core.steps import base


class DiscoverHosts(base.StepKind):
    name = 'discover_hosts'
    summary = ('Map the hosts of unmapped compute node records to the '
               'cell, as ``nova-manage cell_v2 discover_hosts`` does.')
    fields = {
        'maps': ('[host name, ...]', 'the hosts Nova must map, exactly '
                 '(``[]``: none)'),
    }
    example = '''\
- stop_compute: dst
- delete_service: dst
- start_compute: {host: dst, mapped: false}
  expect: {compute_nodes: {dst: {deleted: false, mapped: false}}}
- discover_hosts: {maps: [dst]}
  expect: {compute_nodes: {dst: {mapped: true}}}
'''

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        check.keys(value, tuple(self.fields), required=('maps',))
        hosts = check.sequence(value['maps'], 'maps')
        for host in hosts:
            if not isinstance(host, str) or host not in scenario.hosts:
                check.fail('maps', 'unknown host %s; known: %s' % (
                    errors.show(host), ', '.join(sorted(scenario.hosts))))
        if len(set(hosts)) != len(hosts):
            check.fail('maps', 'a host is named twice')
        return {'maps': sorted(hosts)}

    def label(self, args):
        return 'discover hosts'

    def run(self, cloud, args):
        mapped = cloud.discover_hosts()
        if mapped != args['maps']:
            raise errors.HarnessError(
                'discover_hosts mapped %s, not %s' % (
                    ', '.join(mapped) or 'no host',
                    ', '.join(args['maps']) or 'no host'))


KIND = DiscoverHosts()
