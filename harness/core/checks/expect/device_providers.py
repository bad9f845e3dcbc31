"""``device_providers``: each host's device providers in Placement."""

import re

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod

#: What one device provider may be checked for.
PROVIDER_KEYS = ('class', 'total', 'reserved', 'used', 'traits')
#: The traits Nova puts on every device provider it makes, left out of
#: ``traits`` as Nova's own tests leave them out
#: (``assert_placement_pci_inventory`` adds them to what it expects):
#: ``COMPUTE_MANAGED_PCI_DEVICE`` (pci_placement_translator) and, from
#: Nova 34, ``OWNER_NOVA`` (on PCI and GPU providers alike).
NOVA_OWN_TRAITS = frozenset(('COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'))
_ADDRESS = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')


class DeviceProviders(base.Expectation):
    """Each host's device providers in Placement: class, amounts, traits.

    The child providers Nova makes under a host's compute node for its
    devices, named here by the device's PCI address (lower case): one per
    PCI device with ``[pci] report_in_placement`` (Nova names it
    ``<host>_<ADDRESS>``, with one unit of ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``
    or of its ``device_spec``'s ``resource_class``) and one per GPU offering
    vGPUs (``<host>_pci_<domain>_<bus>_<slot>_<function>``, class
    ``VGPU``). Per provider, what is named: ``class`` (its one resource
    class), ``total`` and ``reserved`` (its inventory), ``used`` (its
    usage) and ``traits`` (exactly, less the ones Nova puts on every
    device provider, ``COMPUTE_MANAGED_PCI_DEVICE`` and ``OWNER_NOVA``, as
    Nova's own tests leave them out: a device_spec's ``traits`` show here
    as Nova names them, ``CUSTOM_...``). The providers are exact per host
    named: one not named is
    a problem, ``{}`` says the host has none. Hosts not named are not
    checked.
    """

    name = 'device_providers'
    order = 85
    summary = ("Each host's device providers in Placement: resource "
               "class, inventory, usage and traits.")
    shape = ('{host: {PCI address: {class: RC, total: int, reserved: int, '
             'used: int, traits: [trait, ...]}}}')
    example = ("device_providers: {dst: {'0000:81:00.0': {class: "
               "CUSTOM_NVME, total: 1, used: 1}}}")

    def parse(self, check, value, scenario, state):
        parsed = {}
        for host, providers in reading.by_host(check, value, scenario):
            parsed[host] = {}
            for address, want in check.mapping(providers, host).items():
                field = '%s.%s' % (host, address)
                if not isinstance(address, str) or \
                        not _ADDRESS.match(address):
                    check.fail(field, 'expected a PCI address in lower case '
                               '(0000:81:00.0)')
                check.mapping(want, field)
                check.keys(want, PROVIDER_KEYS, field=field)
                if 'class' in want:
                    check.resource_class(want['class'], field + '.class')
                for key in ('total', 'reserved', 'used'):
                    if key in want:
                        check.integer(want[key], '%s.%s' % (field, key),
                                      minimum=0)
                wanted = dict(want)
                if 'traits' in want:
                    wanted['traits'] = sorted(
                        check.string(trait, field + '.traits')
                        for trait in check.sequence(want['traits'],
                                                    field + '.traits'))
                parsed[host][address] = wanted
        return parsed

    def check(self, want, snap, scenario):
        problems = []
        for host, wanted in sorted(want.items()):
            got = providers_of(snap, host)
            wrong = []
            for address in sorted(set(wanted) | set(got)):
                if address not in got:
                    wrong.append('%s has no provider' % address)
                elif address not in wanted:
                    wrong.append('%s has a provider not expected (%s)' % (
                        address, shown(got[address])))
                else:
                    wrong += ['%s %s expected %s, got %s' % (
                        address, key, wanted[address][key],
                        got[address][key])
                        for key in PROVIDER_KEYS if key in wanted[address]
                        and wanted[address][key] != got[address][key]]
            if wrong:
                problems.append(Problem(
                    self.name, host, wanted, got,
                    'device providers of %s: %s' % (host, ', '.join(wrong))))
        return problems


def providers_of(snap, host):
    """PCI address -> what its device provider on ``host`` holds."""
    found = {}
    for rp in snap.providers.values():
        if rp.root != host:
            continue
        if snapshot_mod.is_device_provider(rp):
            address = rp.name[len(host) + 1:].lower()
        elif snapshot_mod.is_gpu_provider(rp):
            _, domain, bus, slot, function = rp.name[len(host) + 1:].split(
                '_')
            address = '%s:%s:%s.%s' % (domain, bus, slot, function)
        else:
            continue
        classes = sorted(rp.inventories)
        found[address] = {
            'class': classes[0] if len(classes) == 1 else classes,
            'total': sum(inv['total'] for inv in rp.inventories.values()),
            'reserved': sum(inv['reserved']
                            for inv in rp.inventories.values()),
            'used': sum(rp.usages.values()),
            'traits': sorted(set(rp.traits) - NOVA_OWN_TRAITS)}
    return found


def shown(provider):
    return '%s %d/%d used' % (provider['class'], provider['used'],
                              provider['total'])


CHECK = DeviceProviders()
