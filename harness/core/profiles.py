"""Host profiles: real servers as data, checked before any service starts.

A profile is a YAML file in ``fixtures/hosts`` (or anywhere, by path) that
describes one real machine as the host's libvirt would report it: sockets,
NUMA cells with their CPUs and SMT sibling sets, memory and page pools per
cell, local disk, and the Nova config the host runs with. Top-level keys:

``description`` (required)
    Which real machine this models, and why it is shaped the way it is.
``sockets``, ``disk_gb`` (required)
    Physical sockets; size of the instances filesystem in GiB.
``layout`` (optional)
    A generator for the cells' CPUs: ``cores_per_cell``,
    ``threads_per_core`` and ``numbering``. ``linux`` numbering is what the
    Linux kernel shows on Intel and AMD servers: thread *t* of core *c*
    (counting cores across all cells) is CPU ``t * cores + c``, so the
    siblings of CPU 0 on a 40-core host are 0 and 40. ``consecutive`` puts
    siblings next to each other (0,1), as some firmware does.
``cells`` (required)
    One entry per NUMA cell, in cell-id order: ``socket``, ``memory_mb``,
    ``pages`` (``{2M: count, 1G: count}``; the 4K pool is the rest of the
    cell's memory unless given), and, without ``layout``, ``cpus`` (a CPU
    spec such as ``0-7,16-23``) and ``siblings`` (a list of CPU lists, one
    per core; omit it on a host without SMT).
``nova`` (optional)
    The host's own ``nova.conf``, by section: ``compute`` takes
    ``cpu_dedicated_set`` and ``cpu_shared_set``; ``DEFAULT`` takes
    ``reserved_host_memory_mb``, ``reserved_host_disk_mb``,
    ``reserved_huge_pages`` (a list of ``{node, size, count}``), the
    ``cpu``/``ram``/``disk`` ``_allocation_ratio`` and their ``initial_``
    forms (what a compute node record is made with: it takes the plain
    ratio only at its compute's next pass, Nova's
    ``ResourceTracker._copy_resources``); ``pci`` takes
    ``device_spec`` and ``report_in_placement``, ``devices`` takes
    ``enabled_mdev_types`` (see ``harness.core.profile_devices``).
``devices`` (optional)
    The host's PCI devices: SR-IOV NICs, passthrough devices and vGPU
    capable GPUs, each on a NUMA cell (``harness.core.profile_devices``).
``hypervisor`` (optional)
    The versions the host's libvirt reports: ``libvirt`` and ``qemu``
    (``"10.0.0"``). Each defaults to the oldest the Nova under test
    supports (its libvirt driver's ``MIN_LIBVIRT_VERSION`` and
    ``MIN_QEMU_VERSION``, what Nova's fake libvirt reports); features Nova
    gates on newer versions (``live_migratable`` devices) need them said.
    A version older than Nova supports is refused before any service
    starts (``harness.cloud.host_config``), naming the field.

``load_profile`` returns a validated, expanded ``HostProfile``; every
problem is a ``ProfileError`` naming the file and the field. Nothing here
imports Nova, so checks run in a fraction of a second.
"""

import dataclasses
import glob
import importlib.util
import os
import re

from harness.core import errors
from harness.core import profile_devices
from harness.core import snapshot
from harness.core import yamlsafe

#: The package the build makes of the checkout's ``fixtures/hosts``
#: (pyproject.toml maps ``harness._fixtures`` to ``fixtures``): an
#: installed wheel holds the profiles there.
PROFILE_PACKAGE = 'harness._fixtures.hosts'
# The harness package's folder: in a checkout, ``fixtures/`` is beside it.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _profile_dir():
    """The folder of the shipped profiles, or None if there is none.

    An installed wheel holds them in ``PROFILE_PACKAGE``. Where the
    harness runs from a checkout (an editable install, whose finder
    cannot map a folder with no ``__init__.py`` under a package, or the
    checkout on ``sys.path``) they are the checkout's ``fixtures/hosts``,
    beside the ``harness/`` imported.
    """
    try:
        spec = importlib.util.find_spec(PROFILE_PACKAGE)
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    checkout = os.path.join(os.path.dirname(_PACKAGE_DIR), 'fixtures',
                            'hosts')
    if os.path.isdir(checkout):
        return checkout
    return None


PROFILE_DIR = _profile_dir()

# Page sizes as profiles write them -> KiB, as libvirt and Nova count them.
PAGE_SIZES = {'4K': 4, '2M': 2048, '1G': 1024 * 1024}
# Bounds on what a profile may say, so that bad input fails fast instead of
# building a billion CPUs: the largest real hosts have a few thousand CPUs
# and some TiB per cell (counts are in pages, MiB or GB).
MAX_CPU_ID = 16383
MAX_COUNT = 10 ** 12
MAX_RATIO = 10000
PAGE_NAMES = {kib: name for name, kib in PAGE_SIZES.items()}

TOP_KEYS = {'description': True, 'sockets': True, 'disk_gb': True,
            'cells': True, 'layout': False, 'nova': False,
            'devices': False, 'hypervisor': False}
HYPERVISOR_KEYS = {'libvirt': False, 'qemu': False}
_VERSION = re.compile(r'^(\d+)\.(\d+)(?:\.(\d+))?$')
LAYOUT_KEYS = {'cores_per_cell': True, 'threads_per_core': True,
               'numbering': True}
NUMBERINGS = ('linux', 'consecutive')
CELL_KEYS = {'socket': True, 'memory_mb': True, 'pages': False,
             'cpus': False, 'siblings': False}
# The options a host may set for itself (see harness.perhost), by section.
NOVA_KEYS = {
    'compute': ('cpu_dedicated_set', 'cpu_shared_set'),
    'DEFAULT': ('reserved_host_memory_mb', 'reserved_host_disk_mb',
                'reserved_huge_pages', 'cpu_allocation_ratio',
                'ram_allocation_ratio', 'disk_allocation_ratio',
                'initial_cpu_allocation_ratio',
                'initial_ram_allocation_ratio',
                'initial_disk_allocation_ratio'),
}
NOVA_KEYS.update(profile_devices.NOVA_KEYS)
RESERVED_PAGE_KEYS = {'node': True, 'size': True, 'count': True}


@dataclasses.dataclass(frozen=True)
class CellSpec(object):
    """One NUMA cell of a profile, expanded."""
    id: int
    socket: int
    cpus: frozenset
    # One frozenset per core: the CPUs that share it.
    siblings: tuple
    memory_mb: int
    # Page size in KiB -> number of pages, the 4K pool included.
    pages: dict


@dataclasses.dataclass(frozen=True)
class HostProfile(object):
    """A validated host profile with its CPUs expanded cell by cell."""
    name: str
    path: str
    description: str
    sockets: int
    disk_gb: int
    cells: tuple
    # Section ('DEFAULT', 'compute', 'pci', 'devices') -> option -> value,
    # as checked.
    nova: dict
    # ``profile_devices.DeviceSpec``s by address, VFs included.
    devices: tuple = ()
    # 'libvirt' / 'qemu' -> (major, minor, micro) the host reports; a
    # missing one: the oldest Nova supports.
    hypervisor: dict = dataclasses.field(default_factory=dict)

    @property
    def cpus(self):
        """Every CPU ID of the host."""
        return frozenset().union(*(cell.cpus for cell in self.cells))

    @property
    def memory_mb(self):
        """The host's memory: the sum of its cells'."""
        return sum(cell.memory_mb for cell in self.cells)

    @property
    def threads_per_core(self):
        return max(len(core) for cell in self.cells for core in cell.siblings)

    def option(self, name, section='DEFAULT', default=None):
        """The value the profile gives a Nova option, or ``default``."""
        return self.nova.get(section, {}).get(name, default)

    @property
    def dedicated_cpus(self):
        """``[compute] cpu_dedicated_set`` as a set (empty when unset)."""
        return parse_cpu_spec(self.option('cpu_dedicated_set', 'compute'))

    @property
    def shared_cpus(self):
        """``[compute] cpu_shared_set`` as a set (empty when unset)."""
        return parse_cpu_spec(self.option('cpu_shared_set', 'compute'))

    def cell_of(self, cpu):
        """The id of the cell holding ``cpu``."""
        for cell in self.cells:
            if cpu in cell.cpus:
                return cell.id
        raise KeyError(cpu)

    def core_of(self, cpu):
        """The sibling set (one physical core) holding ``cpu``."""
        for cell in self.cells:
            for core in cell.siblings:
                if cpu in core:
                    return core
        raise KeyError(cpu)

    def reserved_pages(self, cell_id, size_kb):
        """Pages of ``size_kb`` that ``reserved_huge_pages`` holds back."""
        for entry in self.option('reserved_huge_pages', default=()):
            if (entry['node'] == cell_id
                    and PAGE_SIZES[entry['size']] == size_kb):
                return entry['count']
        return 0

    def conf_overrides(self):
        """The profile's options as ``{(group, name): value}`` for Nova.

        The group is ``None`` for ``[DEFAULT]``; values have the types
        Nova's config gives them (``reserved_huge_pages`` as the list of
        string dicts oslo.config parses ``node:0,size:1048576,count:2``
        into, the size in KiB).
        """
        result = {}
        for section, options in self.nova.items():
            group = None if section == 'DEFAULT' else section
            for name, value in options.items():
                if name == 'reserved_huge_pages':
                    value = [{'node': str(e['node']),
                              'size': str(PAGE_SIZES[e['size']]),
                              'count': str(e['count'])} for e in value]
                elif group in profile_devices.NOVA_KEYS:
                    value = profile_devices.conf_value(name, value)
                result[(group, name)] = value
        return result


# -- loading ------------------------------------------------------------


def known_profiles():
    """Names of the profiles shipped in ``fixtures/hosts``, sorted."""
    if PROFILE_DIR is None:
        return []
    return sorted(os.path.splitext(os.path.basename(path))[0]
                  for path in glob.glob(os.path.join(PROFILE_DIR, '*.yaml')))


def profile_path(name_or_path):
    """The file a profile name or path means; unknown names are errors."""
    if name_or_path.endswith(('.yaml', '.yml')) or os.sep in name_or_path:
        if not os.path.isfile(name_or_path):
            raise errors.ProfileError(
                '%s: no such host profile file' % name_or_path)
        return name_or_path
    if PROFILE_DIR is None:
        raise errors.ProfileError(
            'unknown host profile %r: no profiles are installed (package '
            '%s not found, nor a checkout\'s fixtures/hosts beside %s)'
            % (name_or_path, PROFILE_PACKAGE, _PACKAGE_DIR))
    path = os.path.join(PROFILE_DIR, name_or_path + '.yaml')
    if not os.path.isfile(path):
        raise errors.ProfileError(
            'unknown host profile %r; known profiles: %s (in %s)'
            % (name_or_path, ', '.join(known_profiles()) or 'none',
               PROFILE_DIR))
    return path


def load_profile(name_or_path):
    """Load, validate and expand a profile, by name or by path.

    A name is a file in ``fixtures/hosts``; a ``HostProfile`` is returned
    as it is.
    """
    if isinstance(name_or_path, HostProfile):
        return name_or_path
    path = profile_path(name_or_path)
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise errors.ProfileError('%s: not UTF-8 text (byte %d)'
                                  % (path, exc.start))
    except OSError as exc:
        raise errors.ProfileError('%s: cannot be read: %s'
                                  % (path, exc.strerror))
    doc = yamlsafe.load(text, path, errors.ProfileError)
    name = os.path.splitext(os.path.basename(path))[0]
    return _Validator(path).profile(name, doc)


# -- CPU specs ------------------------------------------------------------

_SPEC_ITEM = re.compile(r'^\s*(\^)?\s*(\d+)\s*(?:-\s*(\d+)\s*)?$')


def parse_cpu_spec(spec):
    """A CPU spec as Nova writes it (``0-3,^2,8``) -> set of CPU IDs.

    Raises ``ValueError`` on bad syntax; ``None`` or ``''`` is the empty set.
    """
    if spec is None or spec == '':
        return frozenset()
    if isinstance(spec, int) and not isinstance(spec, bool):
        if not 0 <= spec <= MAX_CPU_ID:
            raise ValueError('CPU IDs go from 0 to %d' % MAX_CPU_ID)
        return frozenset([spec])
    if not isinstance(spec, str):
        raise ValueError('a CPU spec is a string like "0-3,8"')
    include, exclude = set(), set()
    for item in spec.split(','):
        match = _SPEC_ITEM.match(item)
        if not match:
            raise ValueError('bad CPU spec item %r in %r'
                             % (item[:40], spec[:80]))
        neg, first, last = match.groups()
        if len(first) > 6 or (last is not None and len(last) > 6):
            raise ValueError('CPU IDs go up to %d' % MAX_CPU_ID)
        first = int(first)
        last = int(last) if last is not None else first
        if last < first:
            raise ValueError('bad CPU range %r in %r'
                             % (item[:40], spec[:80]))
        if last > MAX_CPU_ID:
            raise ValueError('CPU %d is beyond the largest CPU ID a host '
                             'here may have (%d)' % (last, MAX_CPU_ID))
        (exclude if neg else include).update(range(first, last + 1))
    return frozenset(include - exclude)


def format_cpu_set(cpus):
    """CPU IDs as a compact spec: 0-3,8."""
    return snapshot.format_cpus(cpus)


# -- validation -----------------------------------------------------------


class _Validator(object):
    """Check one profile document; every error names file and field."""

    def __init__(self, path):
        self.path = path

    def fail(self, field, problem):
        raise errors.ProfileError('%s: %s: %s' % (self.path, field, problem))

    def mapping(self, field, value, keys):
        if not isinstance(value, dict):
            self.fail(field, 'must be a mapping, not %s'
                      % type(value).__name__)
        unknown = sorted(str(k) for k in value if k not in keys)
        if unknown:
            self.fail('%s.%s' % (field, unknown[0]) if field != '(top)'
                      else unknown[0],
                      'unknown key; allowed: %s' % ', '.join(keys))
        for key, required in keys.items():
            if required and key not in value:
                self.fail(field, 'missing required key %r' % key)
        return value

    def integer(self, field, value, minimum=0, maximum=MAX_COUNT):
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, 'must be an integer, not %s'
                      % errors.show(value))
        if value < minimum:
            self.fail(field, 'must be at least %d, not %s'
                      % (minimum, errors.show(value)))
        if value > maximum:
            self.fail(field, 'must be at most %d, not %s'
                      % (maximum, errors.show(value)))
        return value

    def number(self, field, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, 'must be a number, not %s' % errors.show(value))
        if not 0 < value <= MAX_RATIO:
            self.fail(field, 'must be greater than 0 and at most %d, not %s'
                      % (MAX_RATIO, errors.show(value)))
        return float(value)

    def cpu_spec(self, field, value):
        try:
            return parse_cpu_spec(value)
        except ValueError as exc:
            self.fail(field, str(exc))

    def page_size(self, field, value):
        if not isinstance(value, (str, int)) or value not in PAGE_SIZES:
            self.fail(field, 'unknown page size %s; use one of %s'
                      % (errors.show(value), ', '.join(PAGE_SIZES)))
        return PAGE_SIZES[value]

    # -- the document -----------------------------------------------------

    def profile(self, name, doc):
        doc = self.mapping('(top)', doc, TOP_KEYS)
        description = doc['description']
        if not isinstance(description, str) or not description.strip():
            self.fail('description', 'must say which machine this models')
        sockets = self.integer('sockets', doc['sockets'], 1)
        disk_gb = self.integer('disk_gb', doc['disk_gb'], 1)
        raw_cells = doc['cells']
        if not isinstance(raw_cells, list) or not raw_cells:
            self.fail('cells', 'must be a non-empty list of cells')
        layout = None
        if 'layout' in doc:
            layout = self.mapping('layout', doc['layout'], LAYOUT_KEYS)
            self.integer('layout.cores_per_cell', layout['cores_per_cell'], 1,
                         maximum=MAX_CPU_ID + 1)
            self.integer('layout.threads_per_core',
                         layout['threads_per_core'], 1, maximum=8)
            if layout['cores_per_cell'] * layout['threads_per_core'] * len(
                    doc['cells'] if isinstance(doc['cells'], list) else ()
            ) > MAX_CPU_ID + 1:
                self.fail('layout', 'more than %d CPUs in all'
                          % (MAX_CPU_ID + 1))
            if layout['numbering'] not in NUMBERINGS:
                self.fail('layout.numbering', 'must be one of %s, not %r'
                          % (', '.join(NUMBERINGS), layout['numbering']))
        cells = self.cells(raw_cells, sockets, layout)
        devices = profile_devices.DeviceValidator(self).devices(
            doc.get('devices') or [], len(cells))
        profile = HostProfile(
            name=name, path=self.path, description=description.strip(),
            sockets=sockets, disk_gb=disk_gb, cells=cells,
            nova=self.nova(doc.get('nova') or {}, cells, devices),
            devices=devices,
            hypervisor=self.hypervisor(doc.get('hypervisor') or {}))
        return profile

    def hypervisor(self, raw):
        raw = self.mapping('hypervisor', raw, HYPERVISOR_KEYS)
        versions = {}
        for name, value in raw.items():
            match = _VERSION.match(value) if isinstance(value, str) else None
            if match is None:
                self.fail('hypervisor.%s' % name, 'must be a version as a '
                          'text, "major.minor.micro" (e.g. "10.0.0"), not %s'
                          % errors.show(value))
            versions[name] = tuple(int(part or 0) for part in match.groups())
        return versions

    def cells(self, raw_cells, sockets, layout):
        generated = generate_cpus(layout, len(raw_cells)) if layout else None
        cells, owner = [], {}
        for index, raw in enumerate(raw_cells):
            field = 'cells[%d]' % index
            raw = self.mapping(field, raw, CELL_KEYS)
            socket = self.integer(field + '.socket', raw['socket'])
            if socket >= sockets:
                self.fail(field + '.socket', 'socket %d does not exist; the '
                          'host has %d socket(s)' % (socket, sockets))
            if layout:
                for key in ('cpus', 'siblings'):
                    if key in raw:
                        self.fail('%s.%s' % (field, key),
                                  'not allowed with layout (the layout '
                                  'generates it)')
                cpus, siblings = generated[index]
            else:
                if 'cpus' not in raw:
                    self.fail(field, "missing required key 'cpus' (or give "
                              "a top-level 'layout')")
                cpus = self.cpu_spec(field + '.cpus', raw['cpus'])
                if not cpus:
                    self.fail(field + '.cpus', 'a cell needs CPUs')
                siblings = self.siblings(field + '.siblings',
                                         raw.get('siblings'), cpus)
            for cpu in sorted(cpus):
                if cpu in owner:
                    self.fail(field + '.cpus', 'CPU %d is also in cells[%d]'
                              % (cpu, owner[cpu]))
                owner[cpu] = index
            memory_mb = self.integer(field + '.memory_mb', raw['memory_mb'],
                                     1)
            pages = self.pages(field + '.pages', raw.get('pages') or {},
                               memory_mb)
            cells.append(CellSpec(id=index, socket=socket,
                                  cpus=frozenset(cpus),
                                  siblings=tuple(siblings),
                                  memory_mb=memory_mb, pages=pages))
        missing = sorted(set(range(len(owner))) - set(owner))
        if missing:
            # libvirt reports CPUs 0..N-1 online; a gap would be a CPU that
            # the host has but no cell holds.
            self.fail('cells', 'CPU IDs must run from 0 to %d without gaps;'
                      ' missing: %s' % (len(owner) - 1,
                                        format_cpu_set(missing)))
        used = {cell.socket for cell in cells}
        for socket in range(sockets):
            if socket not in used:
                self.fail('sockets', 'socket %d has no cell' % socket)
        return tuple(cells)

    def siblings(self, field, raw, cpus):
        if raw is None:
            return [frozenset([cpu]) for cpu in sorted(cpus)]
        if not isinstance(raw, list):
            self.fail(field, 'must be a list of CPU lists, one per core')
        seen, cores = {}, []
        for index, entry in enumerate(raw):
            where = '%s[%d]' % (field, index)
            if isinstance(entry, list):
                core = {self.integer(where, cpu) for cpu in entry}
            else:
                core = self.cpu_spec(where, entry)
            outside = sorted(core - cpus)
            if outside:
                self.fail(where, 'sibling set %s names CPU(s) %s that are '
                          'not in this cell (a core cannot span cells)'
                          % (format_cpu_set(core), format_cpu_set(outside)))
            for cpu in core:
                if cpu in seen:
                    self.fail(where, 'CPU %d is also in %s'
                              % (cpu, seen[cpu]))
                seen[cpu] = where
            cores.append(frozenset(core))
        alone = sorted(cpus - set(seen))
        if alone:
            self.fail(field, 'CPU(s) %s of the cell are in no sibling set'
                      % format_cpu_set(alone))
        return cores

    def pages(self, field, raw, memory_mb):
        if not isinstance(raw, dict):
            self.fail(field, 'must be a mapping of page size to count')
        pages = {}
        for name, count in raw.items():
            size = self.page_size('%s.%s' % (field, name), name)
            pages[size] = self.integer('%s.%s' % (field, name), count)
        memory_kb = memory_mb * 1024
        huge_kb = sum(size * count for size, count in pages.items()
                      if size != 4)
        if 4 in pages:
            if huge_kb + 4 * pages[4] != memory_kb:
                self.fail(field, 'pools add up to %d MiB but the cell has '
                          'memory_mb %d' % ((huge_kb + 4 * pages[4]) // 1024,
                                            memory_mb))
        elif huge_kb > memory_kb:
            self.fail(field, 'huge pages add up to %d MiB, more than the '
                      "cell's memory_mb %d" % (huge_kb // 1024, memory_mb))
        else:
            pages[4] = (memory_kb - huge_kb) // 4
        return dict(sorted(pages.items()))

    def nova(self, raw, cells, devices=None):
        """Check a ``nova:`` mapping; ``devices`` None skips matching."""
        raw = self.mapping('nova', raw, dict.fromkeys(NOVA_KEYS, False))
        device_options = profile_devices.DeviceValidator(self)
        host_cpus = frozenset().union(*(cell.cpus for cell in cells))
        result = {}
        for section, options in raw.items():
            field = 'nova.%s' % section
            options = self.mapping(
                field, options or {},
                dict.fromkeys(NOVA_KEYS[section], False))
            checked = {}
            for name, value in options.items():
                where = '%s.%s' % (field, name)
                if section in profile_devices.NOVA_KEYS:
                    checked[name] = device_options.option(
                        section, name, value, devices)
                elif name in ('cpu_dedicated_set', 'cpu_shared_set'):
                    cpus = self.cpu_spec(where, value)
                    unknown = sorted(cpus - host_cpus)
                    if unknown:
                        self.fail(where, 'names CPU(s) %s that the host does '
                                  'not have (it has %s)'
                                  % (format_cpu_set(unknown),
                                     format_cpu_set(host_cpus)))
                    if not cpus:
                        self.fail(where, 'names no CPU')
                    checked[name] = format_cpu_set(cpus)
                elif name.endswith('_allocation_ratio'):
                    checked[name] = self.number(where, value)
                elif name == 'reserved_huge_pages':
                    checked[name] = self.reserved_pages(where, value, cells)
                else:
                    checked[name] = self.integer(where, value)
            result[section] = checked
        compute = result.get('compute', {})
        both = (parse_cpu_spec(compute.get('cpu_dedicated_set'))
                & parse_cpu_spec(compute.get('cpu_shared_set')))
        if both:
            self.fail('nova.compute.cpu_shared_set', 'CPU(s) %s are also in '
                      'cpu_dedicated_set' % format_cpu_set(both))
        reserved = result.get('DEFAULT', {}).get('reserved_host_memory_mb')
        total = sum(cell.memory_mb for cell in cells)
        if reserved is not None and reserved >= total:
            self.fail('nova.DEFAULT.reserved_host_memory_mb',
                      '%d MiB is not less than the host memory %d MiB'
                      % (reserved, total))
        return result

    def reserved_pages(self, field, raw, cells):
        if not isinstance(raw, list):
            self.fail(field, 'must be a list of {node, size, count}')
        entries = []
        for index, entry in enumerate(raw):
            where = '%s[%d]' % (field, index)
            entry = self.mapping(where, entry, RESERVED_PAGE_KEYS)
            node = self.integer(where + '.node', entry['node'])
            if node >= len(cells):
                self.fail(where + '.node', 'cell %d does not exist; the '
                          'host has %d cell(s)' % (node, len(cells)))
            size = self.page_size(where + '.size', entry['size'])
            count = self.integer(where + '.count', entry['count'])
            pool = cells[node].pages.get(size)
            if pool is None:
                self.fail(where + '.size', 'cell %d has no %s pool'
                          % (node, entry['size']))
            if count > pool:
                self.fail(where + '.count', 'reserves %d %s pages but cell '
                          '%d has only %d' % (count, entry['size'], node,
                                              pool))
            entries.append({'node': node, 'size': entry['size'],
                            'count': count})
        return entries


def generate_cpus(layout, n_cells):
    """Expand ``layout`` into ``[(cpus, sibling sets)]``, one per cell."""
    per_cell = layout['cores_per_cell']
    threads = layout['threads_per_core']
    cores = per_cell * n_cells
    result = []
    for cell in range(n_cells):
        siblings = []
        for core in range(cell * per_cell, (cell + 1) * per_cell):
            if layout['numbering'] == 'linux':
                ids = [t * cores + core for t in range(threads)]
            else:
                ids = [core * threads + t for t in range(threads)]
            siblings.append(frozenset(ids))
        result.append((frozenset().union(*siblings), siblings))
    return result
