"""``domain``: each named guest's domain as its hypervisor holds it."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import records
from harness.core import snapshot as snapshot_mod

CPU_SETS = ('emulatorpin', 'iothreadpin')
FIELDS = ('host', 'vcpus', 'vcpupin', 'memnodes', 'hugepages', 'hostdevs',
          'mdevs') + CPU_SETS
PAGE_SIZES_KB = {'4K': 4, '2M': 2048, '1G': 1024 * 1024}


class DomainXml(base.Expectation):
    """Each named guest's domain XML, on its host's hypervisor.

    What whitebox-tempest-plugin checks on a real host, read from the
    domain Nova defined on the guest's current host (a profiled host's
    libvirt; ``host`` names another host's hypervisor): ``vcpus``,
    ``vcpupin`` (``{vCPU: host CPUs}``), ``emulatorpin`` and
    ``iothreadpin`` (host CPUs), ``memnodes`` (``{guest cell: host
    NUMA nodes}``, from ``<numatune>``), ``hugepages`` (``{page size:
    guest cells}`` it backs, from ``<memoryBacking>``; sizes ``2M``,
    ``1G`` or KiB), ``hostdevs`` (the PCI addresses of its ``<hostdev>``
    and ``<interface type='hostdev'>``) and ``mdevs`` (how many mediated
    devices it has). CPU and node sets are a number, a list or libvirt's
    syntax (``2-3,10``). Only the fields named are compared, each
    exactly; ``null`` says the hypervisor holds no domain of the guest.
    """

    name = 'domain'
    order = 95
    accounting = False
    summary = ("Each named guest's domain XML on its host: vCPU, emulator "
               "and IO thread pins, NUMA memory, huge pages, host devices.")
    shape = ('{server: null | {host: host, vcpus: int, vcpupin: {vcpu: '
             'cpus}, emulatorpin: cpus, iothreadpin: cpus, memnodes: '
             '{cell: nodes}, hugepages: {2M | 1G | KiB: cells}, hostdevs: '
             '[PCI address, ...], mdevs: int}}')
    example = ('domain: {vm1: {host: src, vcpupin: {0: 2, 1: 10}, '
               'emulatorpin: [2, 10], memnodes: {0: 0}}}')

    def parse(self, check, value, scenario, state):
        parsed = {}
        for server, want in reading.by_server(check, value, state):
            field = str(server)
            if want is None:
                parsed[server] = None
                continue
            check.mapping(want, field)
            check.keys(want, FIELDS, field=field)
            parsed[server] = _read(check, want, field, scenario)
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for server, wanted in sorted(want.items()):
            host = (wanted or {}).get('host')
            if host is None:
                instance = snap.instances.get(server)
                host = instance.host if instance else None
            domain = snap.domains.get(host, {}).get(server)
            if wanted is None or domain is None:
                if wanted is not None or domain is not None:
                    problems.append(Problem(
                        self.name, server, wanted, domain,
                        'guest %s: expected %s on %s, got %s' % (
                            server, 'no domain' if wanted is None else
                            'a domain', host or 'no host',
                            'one' if domain else 'none')))
                continue
            wrong = ['%s expected %s, got %s' % (
                key, _show(wanted[key]), _show(getattr(domain, key)))
                for key in FIELDS if key in wanted and key != 'host'
                and wanted[key] != _got(domain, key)]
            if wrong:
                problems.append(Problem(
                    self.name, server, wanted, domain,
                    'domain of %s on %s: %s' % (server, host,
                                                ', '.join(wrong))))
        return problems


def _got(domain, key):
    value = getattr(domain, key)
    if key == 'mdevs':
        return len(value)
    if key == 'hostdevs':
        return list(value)
    return value


def _read(check, want, field, scenario):
    parsed = {}
    sub = '%s.%%s' % field
    if 'host' in want:
        parsed['host'] = check.known(want['host'], scenario.hosts,
                                     sub % 'host')
    for key in ('vcpus', 'mdevs'):
        if key in want:
            parsed[key] = check.integer(want[key], sub % key, minimum=0)
    for key in CPU_SETS:
        if key in want:
            parsed[key] = cpus(check, want[key], sub % key)
    for key, keys in (('vcpupin', 'vcpu'), ('memnodes', 'cell'),
                      ('hugepages', 'size')):
        if key in want:
            check.mapping(want[key], sub % key)
            parsed[key] = {
                (page_size(check, k, '%s.%s' % (sub % key, k))
                 if key == 'hugepages' else
                 check.integer(k, '%s.%s' % (sub % key, keys), minimum=0)):
                cpus(check, v, '%s.%s' % (sub % key, k))
                for k, v in want[key].items()}
    if 'hostdevs' in want:
        check.sequence(want['hostdevs'], sub % 'hostdevs')
        for address in want['hostdevs']:
            check.string(address, sub % 'hostdevs')
            if not snapshot_mod.is_pci_address(address):
                check.fail(sub % 'hostdevs', 'expected a PCI address '
                           '(0000:02:00.0), got %r' % (address,))
        parsed['hostdevs'] = sorted(a.lower() for a in want['hostdevs'])
    return parsed


def cpus(check, value, field):
    """A CPU (or NUMA node) set: a number, a list, or ``2-3,10``."""
    if isinstance(value, str):
        try:
            return records.parse_cpuset(value)
        except ValueError:
            check.fail(field, 'expected CPU ids like 2-3,10, got %r'
                       % (value,))
    if isinstance(value, list):
        return tuple(sorted(check.integer(cpu, field, minimum=0)
                            for cpu in value))
    return (check.integer(value, field, minimum=0),)


def page_size(check, value, field):
    if isinstance(value, str) and value.upper() in PAGE_SIZES_KB:
        return PAGE_SIZES_KB[value.upper()]
    if isinstance(value, str) or isinstance(value, bool):
        check.fail(field, 'expected a page size (4K, 2M, 1G or KiB), got '
                   '%r' % (value,))
    return check.integer(value, field, minimum=1)


def _show(value):
    if isinstance(value, tuple):
        return '[%s]' % snapshot_mod.format_cpus(value)
    if isinstance(value, dict):
        return '{%s}' % ', '.join('%s: %s' % (k, _show(v))
                                  for k, v in sorted(value.items()))
    return str(value)


CHECK = DomainXml()
