"""Scenario files: hosts, flavors and steps as YAML data, checked up front.

A scenario file holds one scenario (a mapping) or several (a list of
mappings)::

    name: resize across hosts, then confirm
    bugs: [1707071]                      # optional Launchpad bug IDs
    config: {DEFAULT: {resize_confirm_window: 60}}   # optional, whole cloud
    hosts:
      src: {profile: dev-1s-8c-smt2}     # libvirt over a profiled host
      dst: {driver: fake}                # or Nova's fake driver
      bad: {driver: fake, fail: confirm_migration}  # a hypervisor fault
    flavors:
      small: {vcpus: 1, ram: 512, disk: 1}
      pin2: {vcpus: 2, ram: 512, disk: 1,
             extra_specs: {"hw:cpu_policy": dedicated}}
    steps:
      - boot: {server: vm1, flavor: small, host: src}
        expect: {allocations: {vm1: {src: small}}}
      - resize: {server: vm1, flavor: pin2}
      - confirm: vm1
      - delete: vm1

A fake host may be given a hypervisor fault: ``fail: <method>`` makes that
driver method raise on that host, so the step that calls it fails the way
a real hypervisor failing there would make it fail (see ``harness.faults``);
everything above the driver is Nova as installed. The methods are those of
a cold move (``FAULT_METHODS``): ``migrate_disk_and_power_off`` (source,
resize_instance), ``finish_migration`` (destination, finish_resize),
``confirm_migration`` (source, confirm) and ``finish_revert_migration``
(source, finish_revert_resize).

Steps: ``boot``, ``resize``, ``confirm``, ``revert``, ``migrate``,
``live_migrate``, ``delete``, ``run_periodic``, ``advance_clock``,
``inject``, ``stop_compute``, ``start_compute``. An operation step may say
``error: <text>``: it must then fail with a message containing the text.
Any step may carry ``expect:`` (see ``harness.expect``).

A stopped compute still looks up to Nova until ``service_down_time`` (60 s
of the cloud's clock) has passed since its last heartbeat
(``advance_clock`` moves that on). Until then Nova casts to it; the casts
wait in its queue, as on a real message bus, and run when
``start_compute`` brings it back. An operation that needs such a cast
fails at once with the server's state and the queued casts
(``tests/functional/scenarios/stopped_compute.yaml``).

Everything is checked before any service starts: names, types, resource
classes, and whether each step makes sense where it stands (a confirm
needs a resize or migration waiting for it). A problem is one
``ScenarioError`` naming the file, the step and the field.
"""

import dataclasses
import math
import os
import re
import typing

import os_resource_classes
import yaml

from harness.core import errors
from harness.core import yamlsafe

OPERATIONS = ('boot', 'resize', 'confirm', 'revert', 'migrate',
              'live_migrate', 'delete')
STEP_KINDS = OPERATIONS + ('run_periodic', 'advance_clock', 'inject',
                           'stop_compute', 'start_compute')
EXPECT_KEYS = ('allocations', 'usages', 'tracker', 'pinned_cpus', 'servers',
               'migrations')
ROLES = ('source', 'dest')
DRIVERS = {'fake': 'fake.MediumFakeDriver'}
# Driver methods a fake host may be made to fail in (harness.faults): the
# hypervisor steps of a cold move, each reached by an RPC cast (from the
# API, or from the other compute). The cloud's casts wait for what they
# cast but keep its failure on the receiving compute
# (harness.nova_env.CastsWaited), so the failure takes the path it takes in
# a deployment: the sender's flow goes on as if the cast had succeeded.
FAULT_METHODS = ('migrate_disk_and_power_off', 'finish_migration',
                 'confirm_migration', 'finish_revert_migration')
PERIODICS = ('update_available_resource', '_poll_unconfirmed_resizes',
             '_cleanup_incomplete_migrations', '_run_pending_deletes',
             '_reclaim_queued_deletes', '_heal_instance_info_cache',
             '_sync_power_states', '_poll_shelved_instances',
             '_cleanup_running_deleted_instances',
             '_check_instance_build_time',
             '_instance_usage_audit', '_poll_rebooting_instances',
             '_poll_rescued_instances', '_poll_volume_usage',
             '_sync_scheduler_instance_info', '_run_image_cache_manager_pass',
             '_cleanup_expired_console_auth_tokens', 'report_state')
CUSTOM_RC = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
MIGRATION_CONSUMER = re.compile(r'^migration\((?P<server>[^)]+)\)$')
POINT_NAME = re.compile(r'^((conductor|scheduler)\.)?[A-Za-z_][A-Za-z0-9_]*$'
                        r'|^instance\.host$|^migration\.status=[a-z-]+$')


def safe_load(text):
    """Parse YAML text safely (see ``harness.yamlsafe``)."""
    return yamlsafe.parse(text)


@dataclasses.dataclass
class Host(object):
    name: str
    driver: typing.Optional[str] = None
    profile: typing.Optional[str] = None


@dataclasses.dataclass
class Flavor(object):
    name: str
    vcpus: int
    ram: int
    disk: int
    ephemeral: int = 0
    swap: int = 0
    extra_specs: dict = dataclasses.field(default_factory=dict)

    def resources(self):
        """What Placement allocates for this flavor, as Nova computes it.

        VCPU (PCPU with ``hw:cpu_policy=dedicated``) = vcpus; MEMORY_MB =
        ram; DISK_GB = root + ephemeral + swap rounded up to whole GB;
        ``resources:<RC>=<n>`` extra specs override a class (0 drops it).
        """
        cpu = ('PCPU' if self.extra_specs.get('hw:cpu_policy') == 'dedicated'
               else 'VCPU')
        resources = {cpu: self.vcpus, 'MEMORY_MB': self.ram,
                     'DISK_GB': (self.disk + self.ephemeral
                                 + int(math.ceil(self.swap / 1024.0)))}
        for key, value in self.extra_specs.items():
            if key.startswith('resources:'):
                resources[key.split(':', 1)[1]] = int(value)
        return {rc: n for rc, n in resources.items() if n}


@dataclasses.dataclass
class Step(object):
    index: int          # 1-based, as the error messages and reports count
    kind: str
    args: dict
    expect: dict
    error: typing.Optional[str] = None
    # The step as written, so a scenario can be written back out.
    raw: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def label(self):
        args = self.args
        if self.kind == 'boot':
            where = ' on %s' % args['host'] if args.get('host') else ''
            return 'boot %s (%s)%s' % (args['server'], args['flavor'], where)
        if self.kind == 'resize':
            return 'resize %s to %s' % (args['server'], args['flavor'])
        if self.kind in ('migrate', 'live_migrate'):
            where = ' to %s' % args['host'] if args.get('host') else ''
            return '%s %s%s' % (self.kind.replace('_', ' '), args['server'],
                                where)
        if self.kind in OPERATIONS:
            return '%s %s' % (self.kind, args['server'])
        if self.kind == 'run_periodic':
            return 'run %s on %s' % (args['task'],
                                     ', '.join(args['hosts']) or 'all')
        if self.kind == 'advance_clock':
            return 'advance clock %ss' % args['seconds']
        if self.kind == 'inject':
            return 'inject %s %s: %s on %s' % (
                args['when'], args['point'], args['run'], args['on'])
        return '%s %s' % (self.kind.replace('_', ' '), args['host'])


@dataclasses.dataclass
class Scenario(object):
    name: str
    path: str
    hosts: dict
    flavors: dict
    steps: list
    bugs: list = dataclasses.field(default_factory=list)
    config: dict = dataclasses.field(default_factory=dict)
    # The one invariant this scenario expects to break, with the bug why.
    expected_breaks: dict = dataclasses.field(default_factory=dict)
    # The scenario as written, so it can be changed and written back out.
    raw: dict = dataclasses.field(default_factory=dict, repr=False)

    def document(self, steps=None, name=None):
        """The scenario as a YAML-ready mapping, with other steps if given.

        ``steps`` are raw step mappings; the result loads with ``parse``.
        """
        doc = {key: value for key, value in self.raw.items()
               if key != 'steps'}
        # Profiles given by a path relative to this file, made absolute so
        # the document loads from anywhere.
        doc['hosts'] = {
            name: dict(spec or {}, **({'profile': self.hosts[name].profile}
                                      if self.hosts[name].profile else {}))
            for name, spec in self.raw['hosts'].items()}
        doc['steps'] = [dict(step.raw) for step in self.steps] \
            if steps is None else steps
        if name:
            doc['name'] = name
        return doc

    def dump(self, steps=None, name=None):
        """The scenario as YAML text (see ``document``)."""
        return yaml.safe_dump(self.document(steps, name),
                              default_flow_style=None, sort_keys=False,
                              width=100)

    @property
    def id(self):
        """A test-ID-friendly name: file, scenario name, bug IDs."""
        stem = os.path.splitext(os.path.basename(self.path))[0]
        slug = re.sub(r'[^a-z0-9]+', '_', self.name.lower()).strip('_')
        bugs = ''.join('_bug_%s' % bug for bug in self.bugs)
        return '%s__%s%s' % (stem, slug, bugs)


# -- loading ----------------------------------------------------------------

def load(path):
    """Load and check the scenarios in ``path``; return a list."""
    if not os.path.isfile(path):
        raise errors.ScenarioError('%s: no such scenario file' % path)
    try:
        with open(path, encoding='utf-8') as source:
            text = source.read()
    except UnicodeDecodeError as exc:
        raise errors.ScenarioError(
            '%s: not UTF-8 text (byte %d)' % (path, exc.start))
    document = yamlsafe.load(text, path, errors.ScenarioError)
    if isinstance(document, dict):
        documents = [document]
    elif isinstance(document, list) and document:
        documents = document
    else:
        raise errors.ScenarioError(
            '%s: a scenario file holds a mapping (one scenario) or a list '
            'of them, not %s' % (path, _kind(document)))
    scenarios = []
    names = set()
    for number, doc in enumerate(documents, 1):
        where = path if len(documents) == 1 else '%s[%d]' % (path, number)
        scenario = parse(doc, where, path)
        if scenario.name in names:
            raise errors.ScenarioError(
                '%s: field "name": %r is used twice in this file'
                % (where, scenario.name))
        names.add(scenario.name)
        scenarios.append(scenario)
    return scenarios


def parse(doc, where, path=None):
    """Check one scenario mapping; ``where`` names it in errors."""
    check = _Checker(where)
    check.mapping(doc, 'the scenario')
    check.keys(doc, ('name', 'bugs', 'config', 'hosts', 'flavors', 'steps',
                     'expected_breaks', 'description'),
               required=('name', 'hosts', 'steps'))
    name = check.string(doc['name'], 'name')
    bugs = [str(check.integer(bug, 'bugs')) for bug in
            check.sequence(doc.get('bugs', []), 'bugs')]
    config = doc.get('config', {})
    check.mapping(config, 'config')
    for group, options in config.items():
        check.mapping(options, 'config.%s' % group)

    hosts = {}
    for host_name, spec in check.mapping(doc['hosts'], 'hosts').items():
        field = 'hosts.%s' % host_name
        check.string(host_name, 'hosts')
        spec = {} if spec is None else spec
        check.mapping(spec, field)
        check.keys(spec, ('profile', 'driver', 'fail'), field=field)
        driver = spec.get('driver')
        if driver is not None:
            check.string(driver, field + '.driver')
        if driver is not None and driver not in DRIVERS:
            check.fail(field + '.driver', 'unknown driver %r; known: %s'
                       % (driver, ', '.join(sorted(DRIVERS))))
        compute_driver = DRIVERS.get(driver)
        if spec.get('fail') is not None:
            compute_driver = _fault_driver(check, spec, field)
        profile = spec.get('profile')
        if profile is not None:
            check.string(profile, field + '.profile')
            if driver is not None:
                check.fail(field, 'a host has a profile (libvirt) or a '
                           'driver, not both')
            _check_profile(check, profile, field + '.profile', path)
        hosts[host_name] = Host(host_name, compute_driver,
                                _resolve_relative(profile, path)
                                if profile else None)
    if not hosts:
        check.fail('hosts', 'name at least one host')

    flavors = {}
    for flavor_name, spec in check.mapping(doc.get('flavors', {}),
                                           'flavors').items():
        check.string(flavor_name, 'flavors')
        field = 'flavors.%s' % flavor_name
        check.mapping(spec, field)
        check.keys(spec, ('vcpus', 'ram', 'disk', 'ephemeral', 'swap',
                          'extra_specs'), required=('vcpus', 'ram', 'disk'),
                   field=field)
        values = {key: check.integer(spec[key], '%s.%s' % (field, key),
                                     minimum=0 if key != 'vcpus' else 1)
                  for key in ('vcpus', 'ram', 'disk', 'ephemeral', 'swap')
                  if key in spec}
        extra = check.mapping(spec.get('extra_specs', {}),
                              field + '.extra_specs')
        for key, value in extra.items():
            if not isinstance(value, (str, int, float, bool)) or \
                    isinstance(value, int) and abs(value) > 10 ** 12:
                check.fail('%s.extra_specs.%s' % (field, errors.show(key)),
                           'expected a short text or number, got %s'
                           % errors.show(value))
        extra = {str(k): str(v) for k, v in extra.items()}
        for key, value in extra.items():
            if key.startswith('resources:'):
                check.resource_class(key.split(':', 1)[1],
                                     field + '.extra_specs.' + key)
                if not re.match(r'^\d{1,12}$', value):
                    check.fail(field + '.extra_specs.' + key,
                               'expected a whole number, got %s'
                               % errors.show(value))
        flavors[flavor_name] = Flavor(flavor_name, extra_specs=extra,
                                      **values)

    scenario = Scenario(name=name, path=path or where, hosts=hosts,
                        flavors=flavors, steps=[], bugs=bugs, config=config,
                        raw=doc)
    breaks = check.mapping(doc.get('expected_breaks', {}), 'expected_breaks')
    for invariant, bug in breaks.items():
        if str(check.integer(bug, 'expected_breaks.%s' % invariant)) \
                not in bugs:
            check.fail('expected_breaks.%s' % invariant,
                       'bug %s is not among this scenario\'s bugs' % bug)
    if len(breaks) > 1:
        check.fail('expected_breaks', 'at most one invariant may be '
                   'expected to break')
    scenario.expected_breaks = {k: str(v) for k, v in breaks.items()}

    state = _State(hosts)
    for index, raw in enumerate(check.sequence(doc['steps'], 'steps'), 1):
        step = _parse_step(check.at_step(index), raw, index, scenario, state)
        scenario.steps.append(step)
    if not scenario.steps:
        check.fail('steps', 'a scenario needs at least one step')
    return scenario


def _fault_driver(check, spec, field):
    """The compute driver of a fake host whose ``fail:`` method fails."""
    method = check.string(spec['fail'], field + '.fail')
    if spec.get('driver') != 'fake':
        check.fail(field + '.fail', 'only a host with "driver: fake" can '
                   'be given a hypervisor fault')
    if method not in FAULT_METHODS:
        check.fail(field + '.fail', 'unknown driver method %s; a fault can '
                   'be put in: %s' % (errors.show(method),
                                      ', '.join(FAULT_METHODS)))
    from harness.cloud import faults
    return faults.driver_name(method)


def _check_profile(check, profile, field, path):
    # Profiles are validated by their own loader; here we only need to know
    # the name or file exists, so bad input fails before anything starts.
    from harness.core import profiles
    try:
        profiles.load_profile(_resolve_relative(profile, path))
    except errors.ProfileError as exc:
        check.fail(field, str(exc))


def _resolve_relative(profile, path):
    """A profile path relative to the scenario file, made absolute."""
    if path and (os.sep in profile or profile.endswith('.yaml')):
        candidate = os.path.join(os.path.dirname(path), profile)
        if os.path.exists(candidate):
            return os.path.abspath(candidate)
    return profile


class _State(object):
    """What the steps so far have done, to check the next one."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.servers = {}      # name -> 'active' | 'verify' | 'error'
        self.deleted = set()
        self.stopped = set()
        self.moved = set()     # servers that have had a migration


def _parse_step(check, raw, index, scenario, state):
    check.mapping(raw, 'the step')
    kinds = [key for key in raw if key in STEP_KINDS]
    unknown = [key for key in raw
               if key not in STEP_KINDS and key not in ('expect', 'error')]
    if unknown:
        check.fail(unknown[0], 'unknown step or field; steps are: %s'
                   % ', '.join(STEP_KINDS))
    if len(kinds) != 1:
        check.fail('the step', 'each step does exactly one of: %s (found %s)'
                   % (', '.join(STEP_KINDS), ', '.join(kinds) or 'none'))
    kind = kinds[0]
    value = raw[kind]
    error = raw.get('error')
    if error is not None:
        check.string(error, 'error')
        if kind not in OPERATIONS:
            check.fail('error', 'only server operations can be expected to '
                       'fail')
    parse_args = _STEP_PARSERS[kind]
    args = parse_args(check.field(kind), value, scenario, state, error)
    expect = raw.get('expect', {}) or {}
    from harness.core import expect as expect_mod
    expect = expect_mod.parse(check.field('expect'), expect, scenario, state)
    return Step(index, kind, args, expect, error, raw=raw)


def _server_arg(check, value, keys=('server',), required=('server',)):
    if isinstance(value, str):
        value = {'server': value}
    check.mapping(value, 'the step')
    check.keys(value, keys, required=required)
    check.string(value['server'], 'server')
    return dict(value)


def _parse_boot(check, value, scenario, state, error):
    args = _server_arg(check, value, ('server', 'flavor', 'host'),
                       ('server', 'flavor'))
    server = check.string(args['server'], 'server')
    if server in state.servers or server in state.deleted:
        check.fail('server', 'a server named %r was booted already' % server)
    if MIGRATION_CONSUMER.match(server):
        check.fail('server', '%r is reserved for migrations' % server)
    check.known(args['flavor'], scenario.flavors, 'flavor')
    if args.get('host') is not None:
        check.known(args['host'], scenario.hosts, 'host')
    state.servers[server] = 'error' if error else 'active'
    return args


def _needs(check, state, server, wanted, doing):
    if server not in state.servers:
        check.fail('server', 'no server %r to %s (booted: %s)' % (
            server, doing, ', '.join(sorted(state.servers)) or 'none'))
    current = state.servers[server]
    if current not in wanted:
        reason = {'verify': 'it is waiting for confirm or revert',
                  'active': 'nothing is waiting to be confirmed or reverted',
                  'error': 'its boot was expected to fail'}[current]
        check.fail('server', 'cannot %s %s: %s' % (doing, server, reason))


def _parse_resize(check, value, scenario, state, error):
    args = _server_arg(check, value, ('server', 'flavor'),
                       ('server', 'flavor'))
    _needs(check, state, args['server'], ('active',), 'resize')
    check.known(args['flavor'], scenario.flavors, 'flavor')
    if not error:
        state.servers[args['server']] = 'verify'
    # A resize that fails on a compute has a migration (in error) too.
    state.moved.add(args['server'])
    return args


def _parse_move(doing, waits_for_confirm):
    """A cold or live migration to an optional host."""
    def parse(check, value, scenario, state, error):
        args = _server_arg(check, value, ('server', 'host'))
        _needs(check, state, args['server'], ('active',), doing)
        if args.get('host') is not None:
            check.known(args['host'], scenario.hosts, 'host')
        if waits_for_confirm and not error:
            state.servers[args['server']] = 'verify'
        state.moved.add(args['server'])
        return args
    return parse


def _parse_finish_move(doing):
    def parse(check, value, scenario, state, error):
        args = _server_arg(check, value)
        _needs(check, state, args['server'], ('verify',), doing)
        if not error:
            state.servers[args['server']] = 'active'
        return args
    return parse


def _parse_delete(check, value, scenario, state, error):
    args = _server_arg(check, value)
    _needs(check, state, args['server'], ('active', 'verify', 'error'),
           'delete')
    if not error:
        del state.servers[args['server']]
        state.deleted.add(args['server'])
    return args


def _parse_run_periodic(check, value, scenario, state, error):
    if isinstance(value, str):
        value = {'task': value}
    check.mapping(value, 'the step')
    check.keys(value, ('task', 'host', 'hosts'), required=('task',))
    task = check.string(value['task'], 'task')
    if task not in PERIODICS:
        check.fail('task', 'unknown periodic task %r; known: %s'
                   % (task, ', '.join(PERIODICS)))
    hosts = value.get('hosts', value.get('host', []))
    hosts = [hosts] if isinstance(hosts, str) else list(
        check.sequence(hosts, 'hosts'))
    for host in hosts:
        check.known(host, scenario.hosts, 'host')
    return {'task': task, 'hosts': hosts}


def _parse_advance(check, value, scenario, state, error):
    if isinstance(value, dict):
        check.keys(value, ('seconds',), required=('seconds',))
        value = value['seconds']
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value <= 10 ** 9:
        check.fail('', 'seconds as a number from 0 to 10**9, not %s'
                   % errors.show(value))
    return {'seconds': value}


def _parse_inject(check, value, scenario, state, error):
    check.mapping(value, 'the step')
    check.keys(value, ('before', 'after', 'run', 'on', 'times', 'server',
                       'at_host'), required=('run', 'on'))
    whens = [when for when in ('before', 'after') if when in value]
    if len(whens) != 1:
        check.fail('the step', 'say "before: <point>" or "after: <point>"')
    point = check.string(value[whens[0]], whens[0])
    if not POINT_NAME.match(point):
        check.fail(whens[0], '%r is not a race point name (a compute RPC '
                   'method such as finish_resize, conductor.<...>, '
                   'scheduler.<...>, instance.host or '
                   'migration.status=<status>)' % point)
    task = check.string(value['run'], 'run')
    if task not in PERIODICS:
        check.fail('run', 'unknown periodic task %r; known: %s'
                   % (task, ', '.join(PERIODICS)))
    on = check.string(value['on'], 'on')
    if on not in ROLES:
        check.known(on, scenario.hosts, 'on')
    times = value.get('times', 1)
    if times is not None:
        check.integer(times, 'times', minimum=1)
    if value.get('server') is not None:
        check.string(value['server'], 'server')
    if value.get('at_host') is not None:
        check.known(value['at_host'], scenario.hosts, 'at_host')
    return {'when': whens[0], 'point': point, 'run': task, 'on': on,
            'times': times, 'server': value.get('server'),
            'at_host': value.get('at_host')}


def _parse_compute(doing):
    def parse(check, value, scenario, state, error):
        if isinstance(value, dict):
            check.keys(value, ('host',), required=('host',))
            value = value['host']
        host = check.known(value, scenario.hosts, 'host')
        if doing == 'stop':
            if host in state.stopped:
                check.fail('host', 'compute %r is already stopped' % host)
            state.stopped.add(host)
        else:
            if host not in state.stopped:
                check.fail('host', 'compute %r is running; stop it first'
                           % host)
            state.stopped.discard(host)
        return {'host': host}
    return parse


_STEP_PARSERS = {
    'boot': _parse_boot,
    'resize': _parse_resize,
    'migrate': _parse_move('migrate', waits_for_confirm=True),
    'live_migrate': _parse_move('live-migrate', waits_for_confirm=False),
    'confirm': _parse_finish_move('confirm'),
    'revert': _parse_finish_move('revert'),
    'delete': _parse_delete,
    'run_periodic': _parse_run_periodic,
    'advance_clock': _parse_advance,
    'inject': _parse_inject,
    'stop_compute': _parse_compute('stop'),
    'start_compute': _parse_compute('start'),
}


# -- checking helpers --------------------------------------------------------

def _kind(value):
    return {dict: 'a mapping', list: 'a list', str: 'a string',
            type(None): 'nothing'}.get(type(value), type(value).__name__)


class _Checker(object):
    """Raises ScenarioError naming the file, the step and the field."""

    def __init__(self, where, step=None, prefix=''):
        self.where = where
        self.step = step
        self.prefix = prefix

    def at_step(self, index):
        return _Checker(self.where, index)

    def field(self, name):
        return _Checker(self.where, self.step, self._name(name) + '.')

    def _name(self, field):
        field = str(field) if isinstance(field, (str, int, float, bool)) \
            else errors.show(field)
        if field in ('', 'the step'):
            # A problem with the whole value: name the value itself.
            return self.prefix.rstrip('.') or field
        return self.prefix + field

    def fail(self, field, message):
        step = ', step %d' % self.step if self.step else ''
        raise errors.ScenarioError('%s%s, field "%s": %s' % (
            self.where, step, self._name(field), message))

    def mapping(self, value, field):
        if not isinstance(value, dict):
            self.fail(field, 'expected a mapping, got %s' % _kind(value))
        return value

    def sequence(self, value, field):
        if not isinstance(value, list):
            self.fail(field, 'expected a list, got %s' % _kind(value))
        return value

    def string(self, value, field):
        if not isinstance(value, str) or not value:
            self.fail(field, 'expected a name, got %s' % _kind(value))
        return value

    def integer(self, value, field, minimum=None, maximum=10 ** 12):
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, 'expected a whole number, got %s'
                      % _kind(value))
        if minimum is not None and value < minimum:
            self.fail(field, 'must be at least %d, got %s'
                      % (minimum, errors.show(value)))
        if value > maximum:
            self.fail(field, 'must be at most %d, got %s'
                      % (maximum, errors.show(value)))
        return value

    def keys(self, value, allowed, required=(), field=''):
        for key in value:
            if key not in allowed:
                self.fail((field + '.' if field else '') + errors.show(key)
                          if not isinstance(key, str) else
                          (field + '.' if field else '') + key,
                          'unknown field; expected one of: %s'
                          % ', '.join(allowed))
        for key in required:
            if key not in value:
                self.fail((field + '.' if field else '') + key,
                          'missing')

    def known(self, value, names, field, noun=None):
        self.string(value, field)
        if value not in names:
            self.fail(field, 'unknown %s %s; known: %s' % (
                noun or field.rsplit('.', 1)[-1], errors.show(value),
                ', '.join(sorted(str(name) for name in names)) or 'none'))
        return value

    def resource_class(self, value, field):
        if not isinstance(value, str) or (
                value not in os_resource_classes.STANDARDS
                and not CUSTOM_RC.match(value)):
            self.fail(field, 'unknown resource class %s'
                      % errors.show(value))
        return value
