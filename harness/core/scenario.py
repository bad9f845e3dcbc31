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
      rack: {count: 12, profile: xeon-2s-20c-smt2}  # rack01 ... rack12
      bm: {driver: fake, nodes: [bm1, bm2]}   # one service, two nodes
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
a real hypervisor failing there would make it fail (see
``harness.cloud.faults``); everything above the driver is Nova as
installed. The methods are those of a cold move (``FAULT_METHODS``):
``migrate_disk_and_power_off`` (source, resize_instance),
``finish_migration`` (destination, finish_resize), ``confirm_migration``
(source, confirm) and ``finish_revert_migration`` (source,
finish_revert_resize).

``limits:`` gives the cloud Keystone unified limits, as registered
limits (every project's default): ``servers`` and ``class:<RESOURCE
CLASS>`` (``class:VCPU``, ``class:PCPU``, ``class:MEMORY_MB``, a PCI
device's ``class:CUSTOM_...``), and Nova's own local limits
(``server_metadata_items``, ``key_pairs``, ...). Nova then counts usage
from Placement (``nova.quota.UnifiedLimitsDriver``, which the cloud's
``[quota] driver`` is set to; a scenario whose ``config`` names another
driver is refused), and a request over a limit fails as the API's 403::

    limits: {servers: 2, "class:VCPU": 4}
    steps:
      - boot: {server: vm3, flavor: small}
        error: is over a limit

``weights:`` makes the scheduler prefer hosts by name, as Nova's own
functional tests do (``nova.tests.fixtures.HostNameWeigherFixture``):
that weigher is the scheduler's only one, each named host weighs its
number, a host not named 0; the filters still decide which hosts fit,
so a step that names no host lands on the heaviest host that fits. A
scenario that gives ``weights`` sets no ``[filter_scheduler]
weight_classes`` of its own::

    weights: {host1: 100, host2: 50, host3: 10}

A fake host given ``nodes:`` (a list of names, or a count: ``nodes: 3``
is ``<host>-n1`` to ``<host>-n3``) manages that many compute nodes, as an
Ironic compute does: each node is its own compute node record, resource
provider and tracker, named by the node; ``expect:`` then names the nodes
where it names providers (a host without ``nodes:`` is its own one node,
named by the host). See ``harness.core.steps.nodes`` for the steps that
remove, add and rebalance nodes.

Steps: each kind is a unit of the step registry (``harness.core.steps``,
one module each): ``boot``, ``resize``, ``confirm``, ``revert``,
``migrate``, ``live_migrate``, ``delete``, ``run_periodic``,
``advance_clock``, ``inject``, ``stop_compute``, ``start_compute``,
``remove_node``, ``add_node``, ``rebalance_node`` (and more). An
operation step may say ``error: <text>``: it must then fail with a
message containing the text. Any step may carry ``expect:`` (see
``harness.core.expect``). An ``inject`` must name a race point that a
later step can pass.

A file may also be a mapping with ``scenarios:`` (the list) and
file-level data such as a bug's ``bug:`` metadata (``load_file``).

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
import fnmatch
import math
import os
import re
import typing

import yaml

from harness.core import checking
from harness.core import checks
from harness.core import errors
from harness.core import expect as expect_mod
from harness.core import known_bugs
from harness.core import names
from harness.core import profiles
from harness.core import steps as steps_mod
from harness.core.steps import base as steps_base
from harness.core.steps import inject as inject_step
from harness.core.steps import nodes as nodes_step
from harness.core import yamlsafe

# What the language accepts, for the loader's tests and tools.
FAULT_METHODS = names.FAULT_METHODS
EXPECT_KEYS = expect_mod.EXPECT_KEYS
STEP_KINDS = steps_mod.names()
# A file may also be a mapping of these: ``scenarios`` (the list) and
# file-level data that is not a scenario's (a bug's metadata, read by
# harness.bugs).
FILE_KEYS = ('scenarios', 'bug')


#: The most hosts one ``hosts`` entry may ask for by ``count``.
MAX_COUNTED_HOSTS = 1000


def counted_names(name, count):
    """The hosts a ``hosts`` entry names: itself, or ``count`` numbered.

    ``rack: {count: 12, ...}`` is ``rack01`` to ``rack12``: the number is
    padded to the width of the count, so the names sort as they count.
    """
    if count is None:
        return [name]
    width = len(str(count))
    return ['%s%0*d' % (name, width, number)
            for number in range(1, count + 1)]


def safe_load(text):
    """Parse YAML text safely (see ``harness.yamlsafe``)."""
    return yamlsafe.parse(text)


@dataclasses.dataclass
class Host(object):
    name: str
    driver: typing.Optional[str] = None
    profile: typing.Optional[str] = None
    # The compute nodes of a multi-node host (``nodes:``); None: the host
    # is its own one node.
    nodes: typing.Optional[tuple] = None

    def providers(self):
        """The names of its compute nodes' providers."""
        return list(self.nodes) if self.nodes is not None else [self.name]


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

        VCPU = vcpus; MEMORY_MB = ram; DISK_GB = root + ephemeral + swap
        rounded up to whole GB. With ``hw:cpu_policy=dedicated`` the vCPUs
        are PCPU; with ``mixed``, those the dedicated mask names
        (``hw:cpu_dedicated_mask``, else the realtime mask of a realtime
        flavor) are PCPU and the rest VCPU; either way
        ``hw:emulator_threads_policy=isolate`` adds one PCPU (Nova's
        ``ResourceRequest._translate_pinning_policies``). The flavor's
        extra specs only: an image's properties are not seen here.
        ``resources:<RC>=<n>`` extra specs override a class (0 drops it).
        """
        specs = self.extra_specs
        policy = specs.get('hw:cpu_policy')
        dedicated = 0
        if policy == 'dedicated':
            dedicated = self.vcpus
        elif policy == 'mixed':
            dedicated = len(self._mask('hw:cpu_dedicated_mask')
                            or (self._realtime()
                                and self._mask('hw:cpu_realtime_mask', True))
                            or ())
        # The isolated emulator thread's PCPU is not one of the vCPUs.
        isolated = int(policy in ('dedicated', 'mixed')
                       and specs.get('hw:emulator_threads_policy')
                       == 'isolate')
        resources = {'VCPU': self.vcpus - dedicated,
                     'PCPU': dedicated + isolated, 'MEMORY_MB': self.ram,
                     'DISK_GB': (self.disk + self.ephemeral
                                 + int(math.ceil(self.swap / 1024.0)))}
        for key, value in specs.items():
            if key.startswith('resources:'):
                resources[key.split(':', 1)[1]] = int(value)
        return {rc: n for rc, n in resources.items() if n}

    def _realtime(self):
        return str(self.extra_specs.get('hw:cpu_realtime', '')).lower() in (
            '1', 't', 'true', 'on', 'y', 'yes')

    def _mask(self, key, whole_by_default=False):
        """The vCPUs a mask extra spec names (a ``^`` mask: all but those).

        Unset: none, or every vCPU with ``whole_by_default``. A mask Nova
        would refuse counts as none: the boot fails there anyway.
        """
        mask = str(self.extra_specs.get(key) or '').strip()
        if not mask:
            return set(range(self.vcpus)) if whole_by_default else set()
        if mask.startswith('^'):
            mask = '0-%d,%s' % (self.vcpus - 1, mask)
        try:
            return set(profiles.parse_cpu_spec(mask))
        except ValueError:
            return set()


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
        return steps_mod.get(self.kind).label(self.args)

    @property
    def unit(self):
        """The step kind's unit in the registry (``harness.core.steps``)."""
        return steps_mod.get(self.kind)


@dataclasses.dataclass(frozen=True)
class Break(object):
    """A break an open bug makes: an invariant's problem about a subject.

    ``subject`` is a shell pattern (``host dst, *``); ``step`` the step
    it happens at (None: at some step).
    """
    check: str
    subject: str
    step: typing.Optional[int] = None

    def matches(self, problem, step):
        """Whether ``problem``, found after step ``step``, is this."""
        return (problem.check == self.check
                and fnmatch.fnmatchcase(problem.subject, self.subject)
                and self.step in (None, step))

    def __str__(self):
        return '%s on %s' % (self.check, self.subject)


@dataclasses.dataclass(frozen=True)
class KnownOpenBug(object):
    """A Launchpad bug still open in Nova, and the breaks it makes.

    A scenario declaring one asserts the state Nova shows today: it
    passes while each break happens (at its step, if given) and every
    invariant's problem is one of them, and fails with
    ``LP#<bug> looks fixed`` once one stops (``harness.core.known_bugs``).
    """
    bug: str
    breaks: tuple

    @property
    def label(self):
        return 'LP#%s' % self.bug


@dataclasses.dataclass(frozen=True)
class KnownFinding(object):
    """A recorded finding with no Launchpad bug yet, and its breaks.

    ``findings/<finding>.yaml``; the verdict is a known open bug's,
    ``finding <finding> looks fixed`` once one stops.
    """
    finding: str
    breaks: tuple

    @property
    def label(self):
        return 'finding %s' % self.finding


@dataclasses.dataclass
class Scenario(object):
    name: str
    path: str
    hosts: dict
    flavors: dict
    steps: list
    # Image name -> its Glance properties (``images:``).
    images: dict = dataclasses.field(default_factory=dict)
    bugs: list = dataclasses.field(default_factory=list)
    config: dict = dataclasses.field(default_factory=dict)
    # The one invariant this scenario expects to break, with the bug why.
    expected_breaks: dict = dataclasses.field(default_factory=dict)
    # Unified limits (``limits:``): resource name -> registered limit.
    limits: dict = dataclasses.field(default_factory=dict)
    # The scheduler's host preference (``weights:``): host -> weight.
    weights: dict = dataclasses.field(default_factory=dict)
    # An open bug whose breaks the scenario shows (``known_open_bug:``).
    known_open_bug: typing.Optional['KnownOpenBug'] = None
    # A recorded finding whose breaks it shows (``known_finding:``).
    known_finding: typing.Optional['KnownFinding'] = None
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
        doc['hosts'] = {}
        for host, spec in self.raw['hosts'].items():
            first = self.hosts[counted_names(
                host, (spec or {}).get('count'))[0]]
            doc['hosts'][host] = dict(
                spec or {},
                **({'profile': first.profile} if first.profile else {}))
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

    def providers(self):
        """Names of the compute node providers the hosts can have.

        Each host's own name, or the names of its nodes (``nodes:``).
        """
        return {name for host in self.hosts.values()
                for name in host.providers()}

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
    return load_file(path)[1]


def load_file(path, text=None):
    """``(header, scenarios)`` of a scenario file.

    ``header`` holds the file-level keys of a file written as a mapping
    with ``scenarios:`` (e.g. a bug's ``bug:`` metadata), unchecked here;
    ``{}`` for a file that is one scenario or a list of them.
    """
    if text is None:
        if not os.path.isfile(path):
            raise errors.ScenarioError('%s: no such scenario file' % path)
        try:
            with open(path, encoding='utf-8') as source:
                text = source.read()
        except UnicodeDecodeError as exc:
            raise errors.ScenarioError(
                '%s: not UTF-8 text (byte %d)' % (path, exc.start))
    document = yamlsafe.load(text, path, errors.ScenarioError)
    header = {}
    if isinstance(document, dict) and 'scenarios' in document:
        check = checking.Checker(path)
        check.keys(document, FILE_KEYS)
        header = {k: v for k, v in document.items() if k != 'scenarios'}
        document = check.sequence(document['scenarios'], 'scenarios')
        if not document:
            check.fail('scenarios', 'list at least one scenario')
    if isinstance(document, dict):
        documents = [document]
    elif isinstance(document, list) and document:
        documents = document
    else:
        raise errors.ScenarioError(
            '%s: a scenario file holds a mapping (one scenario) or a list '
            'of them, not %s' % (path, checking.kind(document)))
    scenarios = []
    seen = set()
    for number, doc in enumerate(documents, 1):
        where = path if len(documents) == 1 else '%s[%d]' % (path, number)
        scenario = parse(doc, where, path)
        if scenario.name in seen:
            raise errors.ScenarioError(
                '%s: field "name": %r is used twice in this file'
                % (where, scenario.name))
        seen.add(scenario.name)
        scenarios.append(scenario)
    return header, scenarios


#: The quota driver that reads Keystone's unified limits (``limits:``).
UNIFIED_LIMITS_DRIVER = 'nova.quota.UnifiedLimitsDriver'
#: Nova's limits that are not a resource class (nova/limit/local.py, and
#: ``servers``, counted by nova/limit/placement.py).
NAMED_LIMITS = ('servers', 'server_metadata_items', 'injected_files',
                'injected_file_content_bytes', 'injected_file_path_bytes',
                'key_pairs', 'server_groups', 'server_group_members')
# A standard or custom resource class, as Placement names them.
_RESOURCE_CLASS = re.compile(r'^[A-Z][A-Z0-9_]*$')


def _parse_limits(check, raw, config):
    """``limits:`` checked, and the config with ``[quota] driver`` set."""
    limits = {}
    for name, value in check.mapping(raw, 'limits').items():
        field = 'limits.%s' % name
        resource_class = (name[len('class:'):]
                          if str(name).startswith('class:') else None)
        if name not in NAMED_LIMITS and not (
                resource_class and _RESOURCE_CLASS.match(resource_class)):
            check.fail(field, 'not a limit Nova reads: %s, or class:<a '
                       'resource class> (class:VCPU, class:CUSTOM_NVME)'
                       % ', '.join(NAMED_LIMITS))
        limits[name] = check.integer(value, field)
        if limits[name] < 0:
            check.fail(field, 'a limit is 0 or more, not %d' % limits[name])
    if limits:
        driver = config.get('quota', {}).get('driver', UNIFIED_LIMITS_DRIVER)
        if driver != UNIFIED_LIMITS_DRIVER:
            check.fail('config.quota.driver', 'limits: are Keystone\'s '
                       'unified limits, read by %s, not %s'
                       % (UNIFIED_LIMITS_DRIVER, errors.show(driver)))
        # A copy: the scenario as written (``raw``) stays as written.
        config = dict(config, quota=dict(config.get('quota', {}),
                                         driver=UNIFIED_LIMITS_DRIVER))
    return limits, config


#: The most a host may weigh (``weights:``); any order of hosts fits.
MAX_WEIGHT = 10 ** 6


def _parse_weights(check, raw, hosts, config):
    """``weights: {host: n}``: the scheduler's preference, checked."""
    weights = {}
    for host, value in check.mapping(raw, 'weights').items():
        field = 'weights.%s' % host
        check.known(host, hosts, field, noun='host')
        weights[host] = check.integer(value, field, minimum=-MAX_WEIGHT,
                                      maximum=MAX_WEIGHT)
    if weights and 'weight_classes' in config.get('filter_scheduler', {}):
        check.fail('config.filter_scheduler.weight_classes', 'weights: makes'
                   " Nova's HostNameWeigher the scheduler's only weigher; "
                   'give weights or weight_classes, not both')
    return weights


def parse(doc, where, path=None):
    """Check one scenario mapping; ``where`` names it in errors."""
    check = checking.Checker(where)
    check.mapping(doc, 'the scenario')
    check.keys(doc, ('name', 'bugs', 'config', 'hosts', 'flavors', 'images',
                     'steps', 'expected_breaks', 'known_open_bug',
                     'known_finding', 'description', 'limits', 'weights'),
               required=('name', 'hosts', 'steps'))
    name = check.string(doc['name'], 'name')
    bugs = [str(check.integer(bug, 'bugs')) for bug in
            check.sequence(doc.get('bugs', []), 'bugs')]
    config = doc.get('config', {})
    check.mapping(config, 'config')
    for group, options in config.items():
        check.mapping(options, 'config.%s' % group)
    # Options the loader itself reads to check steps (when a compute is
    # seen down, when a shelved server is offloaded): whole numbers, as
    # Nova's IntOpts, checked here before a step reads them.
    steps_base.check_loader_options(check, config)

    hosts = {}
    for host_name, spec in check.mapping(doc['hosts'], 'hosts').items():
        field = 'hosts.%s' % host_name
        check.string(host_name, 'hosts')
        spec = {} if spec is None else spec
        check.mapping(spec, field)
        check.keys(spec, ('profile', 'driver', 'fail', 'count', 'nodes'),
                   field=field)
        count = spec.get('count')
        if count is not None:
            check.integer(count, field + '.count', minimum=1,
                          maximum=MAX_COUNTED_HOSTS)
        driver = spec.get('driver')
        if driver is not None:
            check.string(driver, field + '.driver')
        if driver is not None and driver not in names.DRIVERS:
            check.fail(field + '.driver', 'unknown driver %r; known: %s'
                       % (driver, ', '.join(sorted(names.DRIVERS))))
        compute_driver = names.DRIVERS.get(driver)
        if spec.get('fail') is not None:
            compute_driver = _fault_driver(check, spec, field)
        profile = spec.get('profile')
        if profile is not None:
            check.string(profile, field + '.profile')
            if driver is not None:
                check.fail(field, 'a host has a profile (libvirt) or a '
                           'driver, not both')
            _check_profile(check, profile, field + '.profile', path)
        if 'nodes' in spec:
            _check_multi_node(check, spec, field, count)
        for counted in counted_names(host_name, count):
            if counted in hosts:
                check.fail(field, 'host %s is named twice (hosts by count '
                           'are named <name><number>)' % counted)
            nodes = None
            driver_name = compute_driver
            if 'nodes' in spec:
                nodes = tuple(nodes_step.check_nodes(
                    check, counted, spec['nodes'], field + '.nodes'))
                driver_name = nodes_step.driver_name(nodes)
            hosts[counted] = Host(counted, driver_name,
                                  _resolve_relative(profile, path)
                                  if profile else None, nodes)
    if not hosts:
        check.fail('hosts', 'name at least one host')
    _check_node_names(check, hosts)

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

    images = {}
    for image_name, spec in check.mapping(doc.get('images', {}),
                                          'images').items():
        check.string(image_name, 'images')
        field = 'images.%s' % image_name
        spec = {} if spec is None else spec
        check.mapping(spec, field)
        check.keys(spec, ('properties',), field=field)
        properties = check.mapping(spec.get('properties', {}),
                                   field + '.properties')
        for key, value in properties.items():
            check.string(key, field + '.properties')
            if not isinstance(value, (str, int, bool)):
                check.fail('%s.properties.%s' % (field, key),
                           'expected a text or number, got %s'
                           % errors.show(value))
        images[image_name] = {key: str(value).lower()
                              if isinstance(value, bool) else str(value)
                              for key, value in properties.items()}

    limits, config = _parse_limits(check, doc.get('limits', {}), config)
    weights = _parse_weights(check, doc.get('weights', {}), hosts, config)
    scenario = Scenario(name=name, path=path or where, hosts=hosts,
                        flavors=flavors, steps=[], images=images, bugs=bugs,
                        config=config, raw=doc, limits=limits,
                        weights=weights)
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

    state = steps_base.State(hosts, config)
    for index, raw in enumerate(check.sequence(doc['steps'], 'steps'), 1):
        step = _parse_step(check.at_step(index), raw, index, scenario, state)
        scenario.steps.append(step)
    if not scenario.steps:
        check.fail('steps', 'a scenario needs at least one step')
    inject_step.check_points(check, scenario.steps, steps_mod.registry())
    nodes_step.check_points(check, scenario.steps, steps_mod.registry())
    if 'known_open_bug' in doc:
        scenario.known_open_bug = _known_open_bug(
            check, doc['known_open_bug'], scenario)
    if 'known_finding' in doc:
        scenario.known_finding = _known_finding(
            check, doc['known_finding'], scenario)
    return scenario


def _known_open_bug(check, value, scenario):
    """``known_open_bug: {bug: N, breaks: [{check, subject, step?}]}``."""
    field = 'known_open_bug'
    check.mapping(value, field)
    check.keys(value, ('bug', 'breaks'), required=('bug', 'breaks'),
               field=field)
    bug = str(check.integer(value['bug'], field + '.bug', minimum=1))
    if bug not in scenario.bugs:
        check.fail(field + '.bug', "bug %s is not among this scenario's "
                   "bugs" % bug)
    return KnownOpenBug(bug, _breaks(check, value, field, scenario))


def _known_finding(check, value, scenario):
    """``known_finding: {finding: NAME, breaks: [...]}``.

    ``NAME``: a ``findings/NAME.yaml`` of this checkout.
    """
    field = 'known_finding'
    check.mapping(value, field)
    check.keys(value, ('finding', 'breaks'), required=('finding', 'breaks'),
               field=field)
    finding = check.string(value['finding'], field + '.finding')
    if not known_bugs.finding_exists(finding):
        check.fail(field + '.finding', 'no finding %s: expected %s' % (
            finding, known_bugs.finding_path(finding)))
    return KnownFinding(finding, _breaks(check, value, field, scenario))


def _breaks(check, value, field, scenario):
    """The ``breaks`` of a known open bug or finding, checked."""
    invariants = checks.invariants()
    breaks = []
    listed = check.sequence(value['breaks'], field + '.breaks')
    if not listed:
        check.fail(field + '.breaks', 'name at least one break: '
                   '{check: <invariant>, subject: <pattern>, step: <n>}')
    for number, item in enumerate(listed, 1):
        where = '%s.breaks.%d' % (field, number)
        check.mapping(item, where)
        check.keys(item, ('check', 'subject', 'step'),
                   required=('check', 'subject'), field=where)
        name = check.known(item['check'], invariants, where + '.check',
                           noun='invariant')
        if name in scenario.expected_breaks:
            check.fail(where + '.check', 'expected_breaks lets every '
                       'problem of %s through already: name its breaks '
                       'here or there, not both' % name)
        subject = check.string(item['subject'], where + '.subject')
        step = item.get('step')
        if step is not None:
            check.integer(step, where + '.step', minimum=1,
                          maximum=len(scenario.steps))
        found = Break(name, subject, step)
        if found in breaks:
            check.fail(where, 'the same break is named twice')
        breaks.append(found)
    return tuple(breaks)


def _check_multi_node(check, spec, field, count):
    # Only Nova's fake driver is made to manage several nodes here; a
    # profiled host is a libvirt host, one node.
    if spec.get('profile') is not None:
        check.fail(field + '.nodes', 'a profiled host runs the libvirt '
                   'driver, which manages one node; only a "driver: fake" '
                   'host can be given nodes')
    if spec.get('driver') != 'fake':
        check.fail(field + '.nodes', 'only a host with "driver: fake" can '
                   'be given nodes')
    if spec.get('fail') is not None:
        check.fail(field + '.nodes', 'a host with nodes cannot also be '
                   'given a hypervisor fault ("fail")')
    if count is not None and not isinstance(spec['nodes'], int):
        check.fail(field + '.nodes', 'hosts by count share no node names: '
                   'give them a number of nodes (nodes: 2)')


def _check_node_names(check, hosts):
    """Each node on one host only, and no node named like a host."""
    seen = {}
    for name, host in sorted(hosts.items()):
        for node in host.nodes or ():
            field = 'hosts.%s.nodes' % name
            if node in hosts:
                check.fail(field, 'node %s is named like a host (their '
                           'providers would share a name)' % node)
            if node in seen:
                check.fail(field, 'node %s is on %s already: a node starts '
                           'on one host (rebalance_node moves it)'
                           % (node, seen[node]))
            seen[node] = name


def _fault_driver(check, spec, field):
    """The compute driver of a fake host whose ``fail:`` method fails."""
    method = check.string(spec['fail'], field + '.fail')
    if spec.get('driver') != 'fake':
        check.fail(field + '.fail', 'only a host with "driver: fake" can '
                   'be given a hypervisor fault')
    if method not in names.FAULT_METHODS:
        check.fail(field + '.fail', 'unknown driver method %s; a fault can '
                   'be put in: %s' % (errors.show(method),
                                      ', '.join(names.FAULT_METHODS)))
    return names.fault_driver_name(method)


def _check_profile(check, profile, field, path):
    # Profiles are validated by their own loader; here we only need to know
    # the name or file exists, so bad input fails before anything starts.
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


def _parse_step(check, raw, index, scenario, state):
    check.mapping(raw, 'the step')
    known = steps_mod.names()
    kinds = [key for key in raw if key in known]
    unknown = [key for key in raw
               if key not in known and key not in ('expect', 'error')]
    if unknown:
        check.fail(unknown[0], 'unknown step or field; steps are: %s'
                   % ', '.join(known))
    if len(kinds) != 1:
        check.fail('the step', 'each step does exactly one of: %s (found %s)'
                   % (', '.join(known), ', '.join(kinds) or 'none'))
    kind = kinds[0]
    unit = steps_mod.get(kind)
    error = raw.get('error')
    if error is not None:
        check.string(error, 'error')
        if not unit.operation:
            check.fail('error', 'only server operations can be expected to '
                       'fail')
    args = unit.parse(check.field(kind), raw[kind], scenario, state, error)
    expect = expect_mod.parse(check.field('expect'),
                              raw.get('expect', {}) or {}, scenario, state)
    return Step(index, kind, args, expect, error, raw=raw)
