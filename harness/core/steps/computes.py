"""``stop_compute: host`` and ``start_compute: host | {host, guests, config}``.

A stopped compute still looks up to Nova until ``service_down_time`` has
passed since its last heartbeat; casts to it wait in its queue and run
when it starts again. Starting a compute runs Nova's start-up pass
(``init_host``: the driver's ``process_instances_at_startup`` and
``_init_instance`` of each guest; then ``update_available_resource``, which
reconciles its tracker and reports its inventory to Placement).

``guests: gone`` starts it with an empty hypervisor (the machine rebooted
or was rebuilt while its compute was down); ``kept`` (the default) keeps
the guests defined there, as a restart of nova-compute alone does.

``config: {group: {option: value}}`` starts it with its ``nova.conf``
changed (``null`` removes ``cpu_dedicated_set`` or ``cpu_shared_set``):
the host-local options a host profile's ``nova:`` takes
(``profiles.NOVA_KEYS``: ``[compute] cpu_dedicated_set``/``cpu_shared_set``;
``[DEFAULT]`` reserved memory, disk and huge pages, the three allocation
ratios), on top of what the host ran with. The change persists, as an
edit of the config file does: later starts of the host keep it. A fake
host takes the ``[DEFAULT]`` ratios and reserved memory and disk (it has
no NUMA topology, CPU sets or pages). Checked here, before anything
starts, against the host's profile as changed by the earlier starts: the
CPUs exist, the two sets do not overlap, the reserved memory is less than
the host has. Options outside that set are refused (a per-host option is
what one compute of the cloud can have on its own).

A start Nova refuses (``InvalidConfiguration`` from ``init_host``, e.g.
unpinned guests on a host left without ``cpu_shared_set``) fails the step;
``error: <text>`` expects that, and the compute stays stopped.
"""

from harness.core import errors
from harness.core import profiles
from harness.core.steps import base


GUESTS = ('kept', 'gone')
# What a fake host (fake.MediumFakeDriver) has, to bound its reserved
# amounts as a profile's memory bounds a profiled host's.
FAKE_MEMORY_MB = 8192
FAKE_DISK_MB = 1028 * 1024
# Options a start may remove (``null``), so that a host is left with one
# of the two CPU sets.
UNSETTABLE = (('compute', 'cpu_dedicated_set'), ('compute', 'cpu_shared_set'))
FAKE_OPTIONS = {'DEFAULT': ('cpu_allocation_ratio', 'ram_allocation_ratio',
                            'disk_allocation_ratio', 'reserved_host_memory_mb',
                            'reserved_host_disk_mb')}


class _Compute(base.StepKind):
    stopping = None
    fields = base.host_field('the compute')

    def parse(self, check, value, scenario, state, error):
        extra = {}
        if isinstance(value, dict):
            check.keys(value, self.fields, required=('host',))
            extra = {key: value[key] for key in value if key != 'host'}
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
            if extra.get('mapped', True) is not True:
                if not isinstance(extra['mapped'], bool):
                    check.fail('mapped', 'expected true or false, got %s'
                               % errors.show(extra['mapped']))
                if host not in state.service_deleted:
                    check.fail('mapped', 'compute %r has its host mapping: '
                               'only one whose service was deleted starts '
                               'unmapped' % host)
            if not error:
                # A start Nova refuses leaves the compute stopped.
                state.start(host)
                # A compute whose service was deleted registers a new one
                # (enabled, not forced down) as it starts.
                state.service_deleted.discard(host)
        args = {'host': host}
        if 'guests' in extra:
            guests = extra['guests']
            if guests not in GUESTS:
                check.fail('guests', 'expected one of %s, not %s' % (
                    ', '.join(GUESTS), errors.show(guests)))
            args['guests'] = guests
        if 'config' in extra:
            args['config'] = host_config(check, extra['config'], scenario,
                                         host)
        if extra.get('mapped') is False:
            args['mapped'] = False
        return args

    def label(self, args):
        return '%s %s' % (self.name.replace('_', ' '), args['host'])


class _ConfigValidator(profiles._Validator):
    """The profile loader's checks of ``nova:``, failing as a step field."""

    def __init__(self, check):
        super().__init__(None)
        self.check = check

    def fail(self, field, problem):
        # The profile's sections are the config's groups.
        if field.startswith('nova'):
            field = 'config' + field[len('nova'):]
        self.check.fail(field, problem)


def _apply(config, changes):
    """``config`` with ``changes`` made (``None`` removes an option)."""
    for group, options in changes.items():
        for name, value in options.items():
            if value is None:
                config.get(group, {}).pop(name, None)
            else:
                config.setdefault(group, {})[name] = value
    return config


def effective_config(scenario, host, base):
    """``base`` (the profile's ``nova:``) as the host's starts so far left it.

    A start Nova refused counts too: its config file was changed.
    """
    config = {group: dict(options) for group, options in base.items()}
    for step in scenario.steps:
        if step.kind == StartCompute.name and step.args['host'] == host:
            _apply(config, step.args.get('config', {}))
    return config


def host_config(check, raw, scenario, host):
    """Check a start's ``config``; return it with values as Nova reads them.

    Checked alone (known per-host options, their types) and then merged
    with the host's profile and earlier starts (CPUs of the host, sets
    apart, reserved memory below the host's).
    """
    validator = _ConfigValidator(check)
    check.mapping(raw, 'config')
    if not raw:
        check.fail('config', 'name at least one option to change')
    profile_name = scenario.hosts[host].profile
    if profile_name is None:
        return _fake_config(check, validator, raw)
    profile = profiles.load_profile(profile_name)
    validator.mapping('nova', raw, dict.fromkeys(profiles.NOVA_KEYS, False))
    for group, options in raw.items():
        validator.mapping('nova.%s' % group, options,
                          dict.fromkeys(profiles.NOVA_KEYS[group], False))
        if not options:
            check.fail('config.%s' % group, 'name at least one option')
    # null removes a CPU set from the host's config (the line deleted).
    unset = {(group, name) for group, options in raw.items()
             for name, value in options.items()
             if value is None and (group, name) in UNSETTABLE}
    alone = validator.nova(
        {group: {name: value for name, value in options.items()
                 if (group, name) not in unset}
         for group, options in raw.items()}, profile.cells, profile.devices)
    for group, name in sorted(unset):
        alone.setdefault(group, {})[name] = None
    validator.nova(_apply(effective_config(scenario, host, profile.nova),
                          alone), profile.cells, profile.devices)
    return alone


def _fake_config(check, validator, raw):
    validator.mapping('nova', raw, dict.fromkeys(FAKE_OPTIONS, False))
    result = {}
    for group, options in raw.items():
        field = 'config.%s' % group
        check.mapping(options, field)
        if not options:
            check.fail(field, 'name at least one option')
        validator.mapping('nova.%s' % group, options,
                          dict.fromkeys(FAKE_OPTIONS[group], False))
        checked = {}
        for name, value in options.items():
            where = 'nova.%s.%s' % (group, name)
            if name.endswith('_allocation_ratio'):
                checked[name] = validator.number(where, value)
            elif name == 'reserved_host_memory_mb':
                checked[name] = validator.integer(where, value,
                                                  maximum=FAKE_MEMORY_MB - 1)
            else:
                checked[name] = validator.integer(where, value,
                                                  maximum=FAKE_DISK_MB - 1)
        result[group] = checked
    return result


class StopCompute(_Compute):
    name = 'stop_compute'
    summary = ('Stop a host\'s nova-compute; Nova sees it down once '
               '``service_down_time`` has passed.')
    fields = base.host_field('a running compute')
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop_compute: src
- advance_clock: 61
'''
    stopping = True

    def run(self, cloud, args):
        cloud.stop_compute(args['host'])


class StartCompute(_Compute):
    name = 'start_compute'
    summary = ('Start a stopped compute again: Nova\'s start-up pass, then '
               'its queued casts.')
    stopping = False
    fields = {
        'host': ('host name', 'a stopped compute; the step may be just the '
                 'name'),
        'guests': ('``kept`` or ``gone``', 'kept (default): the guests '
                   'defined there stay, as a restart of nova-compute '
                   'alone; gone: an empty hypervisor, as after a reboot '
                   'or rebuild of the machine'),
        'config': ('{group: {option: value}}', 'start with this host\'s '
                   '``nova.conf`` changed, for this and later starts: the '
                   'CPU sets (``null`` removes one), reserved memory, disk '
                   'and huge pages, the allocation ratios'),
        'mapped': ('true or false', 'for a compute whose service was '
                   'deleted (its host mapping with it): true (default), '
                   'the run maps it again as it starts, as ``nova-manage '
                   'cell_v2 discover_hosts`` would; false, it stays '
                   'unmapped until a ``discover_hosts`` step'),
    }
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop_compute: src
- start_compute:
    host: src
    config: {DEFAULT: {reserved_host_memory_mb: 1024}}
  expect: {allocations: {vm1: {src: pin2}}, pinned_cpus: {src: 2}}
'''
    # Only so that a start Nova refuses may say error:; it acts on no
    # server.
    operation = True
    # The casts queued while it was down run when it starts.
    points = base.ANY_POINT

    def run(self, cloud, args):
        more = {'config': args['config']} if 'config' in args else {}
        if args.get('mapped') is False:
            more['map_host'] = False
        cloud.restart_compute(
            args['host'],
            keep_hypervisor_state=args.get('guests', 'kept') == 'kept',
            **more)

    def label(self, args):
        gone = ' (guests gone)' if args.get('guests') == 'gone' else ''
        config = ' with %s' % ', '.join(
            '%s=%s' % (name, value)
            for group in sorted(args['config'])
            for name, value in sorted(args['config'][group].items())
        ) if args.get('config') else ''
        unmapped = ' (unmapped)' if args.get('mapped') is False else ''
        return 'start compute %s%s%s%s' % (args['host'], gone, config,
                                           unmapped)

    def reconciles(self, args, running):
        # pre_start_hook runs update_available_resource at start-up.
        return {args['host']}


KINDS = (StopCompute(), StartCompute())
