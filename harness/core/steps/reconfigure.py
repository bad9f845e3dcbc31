"""``reconfigure: {config, restart?}``: change the whole cloud's nova.conf
mid-scenario, and restart the conductor and the scheduler with it.

``config: {group: {option: value}}`` is set for every service, as an
operator edits nova.conf everywhere and restarts the control plane: the
API reads most options at each request; the conductor and the scheduler
(``restart``, both by default, or a list of them; ``[]`` restarts
neither) start again, so that what they read once (the scheduler's
filters and weighers, ``[filter_scheduler]``) is read again; the
computes read the new values where Nova reads them at each use, and at
their next start (``stop_compute``/``start_compute``, whose ``config``
takes a host's own options). The change lasts until the scenario ends.

The options are checked against Nova's before any service starts, as the
scenario's own ``config`` is; those the loader itself reads
(``service_down_time``, ``shelved_offload_time``) count from this step
on. A cloud a scenario reconfigured is not kept for the next.
"""

from harness.core.steps import base

#: What ``restart`` may name.
CONTROLLERS = ('conductor', 'scheduler')


class Reconfigure(base.StepKind):
    name = 'reconfigure'
    summary = ("Change the whole cloud's nova.conf and restart the "
               'conductor and scheduler with it.')
    fields = {
        'config': ('{group: {option: value}}', 'the options, for every '
                   'service'),
        'restart': ('[conductor | scheduler, ...]', 'the services that '
                    'start again with them (default: both)'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- reconfigure:
    config: {filter_scheduler: {enabled_filters: [ComputeFilter]}}
    restart: [scheduler]
'''

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        check.keys(value, tuple(self.fields), required=('config',))
        config = check.mapping(value['config'], 'config')
        if not config:
            check.fail('config', 'name at least one option')
        for group, options in config.items():
            check.mapping(options, 'config.%s' % group)
            if not options:
                check.fail('config.%s' % group, 'name at least one option')
        base.check_loader_options(check, config, field='config')
        restart = value.get('restart', list(CONTROLLERS))
        for index, name in enumerate(check.sequence(restart, 'restart')):
            if name not in CONTROLLERS:
                check.fail('restart[%d]' % index, 'restarts %s, not %r' % (
                    ' or '.join(CONTROLLERS), name))
        # The options the loader reads count from here on (a copy: the
        # scenario's own config stays as its cloud starts with it).
        state.config = {
            group: dict(state.config.get(group, {}), **config.get(group, {}))
            for group in set(state.config) | set(config)}
        return {'config': {group: dict(options)
                           for group, options in config.items()},
                'restart': tuple(restart)}

    def label(self, args):
        options = ', '.join('[%s] %s' % (group, name)
                            for group, names in sorted(args['config'].items())
                            for name in sorted(names))
        restarted = (' and restart %s' % ', '.join(args['restart'])
                     if args['restart'] else '')
        return 'reconfigure %s%s' % (options, restarted)

    def run(self, cloud, args):
        cloud.reconfigure(args['config'], restart=args['restart'])


KIND = Reconfigure()
