"""The ``devices:`` of a host profile: PCI devices as the host's libvirt lists
them, and the per-host device options of its ``nova:`` section.

Each entry of ``devices`` is one PCI function (``kind``):

``pci``
    A device passed through whole (an NVMe drive, a GPU without vGPU).
``pf``
    An SR-IOV physical function (one port of a NIC). ``vfs: n`` adds its
    ``n`` virtual functions at the next functions after it (function 1 up,
    wrapping to the next slot after function 7), as the kernel numbers an
    Intel E810's; ``vf_product`` is their product ID. ``vdpa: true`` makes
    its VFs vDPA devices (a vhost-vdpa device on each, as on a Mellanox
    ConnectX-6 Dx in switchdev mode): Nova tracks them as ``vdpa`` and
    gives them to ``vnic_type: vdpa`` ports (a boot's ``port: vdpa``).
    ``serial`` is the card's serial number in its PCI VPD (a SmartNIC/DPU
    such as a BlueField shows one on the PF and its VFs): Nova reads it
    for remote-managed ports (``[pci] device_spec`` ``remote_managed:
    "true"`` on the VFs, a boot's ``port: remote-managed``), which need
    libvirt 7.9.0 or newer (the profile's ``hypervisor``).
``vf``
    A virtual function written out; ``pf`` names its physical function's
    address. It must be on its PF's bus, at or after its slot (how a VF's
    parent is shown through Nova's fake libvirt).
``mdev_gpu``
    A GPU whose driver offers mediated-device (vGPU) types
    (``mdev_types``). Nova's fake libvirt presents ``nvidia-11`` (16
    instances per GPU) and, with it, ``nvidia-12`` (8).

Every entry has ``address`` (``0000:bb:ss.f``, PCI domain 0, as Nova's
fake libvirt builds them), ``cell`` (the NUMA cell the device hangs off),
``vendor`` and ``product`` (four hex digits, as ``lspci -nn`` shows them)
and, optionally, ``name`` (what it is).

The ``nova:`` sections these devices add: ``pci`` takes ``device_spec``
(a list of mappings, each one JSON ``[pci] device_spec`` entry; each must
match at least one device of the profile) and ``report_in_placement``
(true/false); ``devices`` takes ``enabled_mdev_types`` (types some
``mdev_gpu`` of the profile offers). A spec's ``address`` takes every
form Nova reads: one address, a glob (``"0000:3b:*.*"``,
``"*:3b:00.*"``) or a mapping of regular expressions (``{domain: ".*",
bus: "3b", slot: "00", function: "[1-4]"}``). An exact address is
matched against the devices here; a glob or regex is parsed and matched
by Nova's own ``nova.pci.devspec`` before any service starts
(``harness.cloud.host_config``). ``[pci] alias`` is not a host's own:
Nova's API, scheduler and computes must agree on it, so it goes in a
scenario's ``config:``.
"""

import dataclasses
import json
import re

from harness.core import errors

KINDS = ('pci', 'pf', 'vf', 'mdev_gpu')
DEVICE_KEYS = {'kind': True, 'address': True, 'cell': True, 'vendor': True,
               'product': True, 'name': False, 'vfs': False,
               'vf_product': False, 'pf': False, 'mdev_types': False,
               'vdpa': False, 'serial': False}
# Keys only some kinds take.
KIND_KEYS = {'vfs': ('pf',), 'vf_product': ('pf',), 'pf': ('vf',),
             'mdev_types': ('mdev_gpu',), 'vdpa': ('pf',), 'serial': ('pf',)}
# What Nova's fake libvirt can present, in the order it presents them.
MDEV_TYPES = ('nvidia-11', 'nvidia-12')
MDEV_INSTANCES = {'nvidia-11': 16, 'nvidia-12': 8}
# The most VFs a PF may have here (an E810 port has up to 256; a test
# host needs a handful).
MAX_VFS = 64
NOVA_KEYS = {
    'pci': ('device_spec', 'report_in_placement'),
    'devices': ('enabled_mdev_types',),
}
# Keys of one [pci] device_spec entry (nova/pci/devspec.py and the
# documented tags).
SPEC_KEYS = ('vendor_id', 'product_id', 'address', 'devname',
             'physical_network', 'remote_managed', 'resource_class',
             'traits', 'managed', 'live_migratable', 'one_time_use',
             'trusted')

_ADDRESS = re.compile(r'^0000:([0-9a-f]{2}):([01][0-9a-f])\.([0-7])$')
# What Nova's glob form may hold (nova.pci.devspec.PciAddressGlobSpec);
# Nova checks each field's range itself.
_ADDRESS_GLOB = re.compile(r'^[0-9a-f*:.]+$')
# The fields of Nova's regex form (PciAddressRegexSpec).
REGEX_ADDRESS_KEYS = ('domain', 'bus', 'slot', 'function')
_HEX4 = re.compile(r'^[0-9a-f]{4}$')
_SERIAL = re.compile(r'^[A-Za-z0-9-]{1,32}$')


@dataclasses.dataclass(frozen=True)
class DeviceSpec(object):
    """One PCI function of a profile, VFs of ``vfs:`` included."""
    address: str
    kind: str
    cell: int
    vendor: str
    product: str
    name: str = ''
    # A VF's PF address.
    pf: str = None
    mdev_types: tuple = ()
    # A PF whose VFs are vDPA devices, or such a VF (``vdpa: true``).
    vdpa: bool = False
    # The card's serial number in its VPD (``serial``), PF and VFs alike.
    serial: str = ''

    @property
    def bus_slot_function(self):
        bus, slot, function = _ADDRESS.match(self.address).groups()
        return int(bus, 16), int(slot, 16), int(function)

    @property
    def nova_type(self):
        """Nova's ``dev_type`` for it (what the PCI tracker records)."""
        if self.kind == 'vf' and self.vdpa:
            return 'vdpa'
        return {'pci': 'type-PCI', 'pf': 'type-PF', 'vf': 'type-VF',
                'mdev_gpu': 'type-PCI'}[self.kind]


def address_of(bus, slot, function):
    return '0000:%02x:%02x.%d' % (bus, slot, function)


def vf_addresses(pf_address, count):
    """Where ``count`` VFs of the PF at ``pf_address`` sit (functions 1 up)."""
    bus, slot, _ = (int(part, 16) for part in
                    _ADDRESS.match(pf_address).groups())
    return [address_of(bus, slot + n // 8, n % 8)
            for n in range(1, count + 1)]


def vf_counts(devices):
    """How many of ``devices`` are VFs of each PF, by the PF's address.

    Nova's fake ``HostPCIDevicesInfo`` takes it as a PF's ``vf_ratio``.
    """
    counts = {}
    for device in devices:
        if device.kind == 'vf':
            counts[device.pf] = counts.get(device.pf, 0) + 1
    return counts


def exact_address(spec):
    """Whether the spec names no address, or one exact address."""
    address = spec.get('address')
    return address is None or (isinstance(address, str)
                               and _ADDRESS.match(address) is not None)


def spec_matches(spec, device):
    """Whether a ``[pci] device_spec`` entry names ``device``.

    For the vendor/product and exact address forms, enough to tell a typo
    from a device; a glob or regex address is Nova's to match
    (``harness.cloud.host_config``): None.
    """
    if not exact_address(spec):
        return None
    for key, value in (('vendor_id', device.vendor),
                       ('product_id', device.product)):
        if key in spec and spec[key] not in ('*', value):
            return False
    if 'address' in spec and spec['address'] != device.address:
        return False
    return True


class DeviceValidator(object):
    """Check ``devices:`` and the device options; errors name the field.

    ``base`` is the profile's validator (its ``fail``, ``mapping``,
    ``integer``).
    """

    def __init__(self, base):
        self.base = base

    def fail(self, field, problem):
        self.base.fail(field, problem)

    def hex4(self, field, value):
        if isinstance(value, int) and not isinstance(value, bool):
            value = '%04d' % value
        if not isinstance(value, str) or not _HEX4.match(value.lower()):
            self.fail(field, 'must be four hex digits as lspci -nn shows '
                      'them (e.g. "8086"), not %s' % errors.show(value))
        return value.lower()

    def spec_address(self, field, value):
        """A device spec's address in one of Nova's three forms."""
        if isinstance(value, dict):
            for key, part in value.items():
                if key not in REGEX_ADDRESS_KEYS:
                    self.fail('%s.%s' % (field, key), 'unknown field; the '
                              'regex form takes %s'
                              % ', '.join(REGEX_ADDRESS_KEYS))
                if not isinstance(part, str):
                    self.fail('%s.%s' % (field, key), 'must be a regular '
                              'expression (a text), not %s'
                              % errors.show(part))
            return dict(value)
        if isinstance(value, str) and _ADDRESS_GLOB.match(value.lower()):
            return value.lower()
        self.fail(field, 'must be a PCI address ("0000:3b:00.0"), a glob '
                  '("0000:3b:*.*", "*:3b:00.*") or a mapping of regular '
                  'expressions (domain, bus, slot, function), not %s'
                  % errors.show(value))

    def address(self, field, value):
        if not isinstance(value, str) or not _ADDRESS.match(value.lower()):
            self.fail(field, 'must be a PCI address 0000:bus:slot.function '
                      '(e.g. "0000:3b:00.0", slot 00-1f, function 0-7), '
                      'not %s' % errors.show(value))
        return value.lower()

    def devices(self, raw, n_cells):
        if not isinstance(raw, list):
            self.fail('devices', 'must be a list of PCI devices')
        devices, where = [], {}

        def add(device, field):
            if device.address in where:
                self.fail(field, 'address %s is also %s'
                          % (device.address, where[device.address]))
            where[device.address] = field
            devices.append(device)

        for index, entry in enumerate(raw):
            field = 'devices[%d]' % index
            entry = self.base.mapping(field, entry, DEVICE_KEYS)
            kind = entry['kind']
            if kind not in KINDS:
                self.fail(field + '.kind', 'unknown device kind %s; kinds: '
                          '%s' % (errors.show(kind), ', '.join(KINDS)))
            for key, kinds in KIND_KEYS.items():
                if key in entry and kind not in kinds:
                    self.fail('%s.%s' % (field, key), 'only a %s device '
                              'takes %s' % (' or '.join(kinds), key))
            cell = self.base.integer(field + '.cell', entry['cell'])
            if cell >= n_cells:
                self.fail(field + '.cell', 'cell %d does not exist; the '
                          'host has %d cell(s)' % (cell, n_cells))
            name = entry.get('name', '')
            if not isinstance(name, str):
                self.fail(field + '.name', 'must be a text')
            device = DeviceSpec(
                address=self.address(field + '.address', entry['address']),
                kind=kind, cell=cell,
                vendor=self.hex4(field + '.vendor', entry['vendor']),
                product=self.hex4(field + '.product', entry['product']),
                name=name)
            if kind == 'vf':
                if 'pf' not in entry:
                    self.fail(field, "a VF needs 'pf', the address of its "
                              'physical function')
                device = dataclasses.replace(device, pf=self.address(
                    field + '.pf', entry['pf']))
            if kind == 'mdev_gpu':
                device = dataclasses.replace(
                    device, mdev_types=self.mdev_types(
                        field + '.mdev_types', entry.get('mdev_types')))
            if 'vdpa' in entry:
                if not isinstance(entry['vdpa'], bool):
                    self.fail(field + '.vdpa', 'must be true or false, not '
                              '%s' % errors.show(entry['vdpa']))
                device = dataclasses.replace(device, vdpa=entry['vdpa'])
            if 'serial' in entry:
                if not isinstance(entry['serial'], str) or \
                        not _SERIAL.match(entry['serial']):
                    self.fail(field + '.serial', 'must be a serial number '
                              '(letters, digits, dashes), not %s'
                              % errors.show(entry['serial']))
                device = dataclasses.replace(device, serial=entry['serial'])
            add(device, field)
            if kind == 'pf' and entry.get('vfs'):
                count = self.base.integer(field + '.vfs', entry['vfs'],
                                          maximum=MAX_VFS)
                if 'vf_product' not in entry:
                    self.fail(field, "a PF with vfs needs 'vf_product', "
                              'the product ID of its VFs')
                vf_product = self.hex4(field + '.vf_product',
                                       entry['vf_product'])
                if device.bus_slot_function[1] + count // 8 > 0x1f:
                    self.fail(field + '.vfs', '%d VFs do not fit on bus '
                              '%02x after slot %02x' % (
                                  count, device.bus_slot_function[0],
                                  device.bus_slot_function[1]))
                for address in vf_addresses(device.address, count):
                    add(DeviceSpec(address=address, kind='vf', cell=cell,
                                   vendor=device.vendor, product=vf_product,
                                   name='VF of %s' % device.address,
                                   pf=device.address, serial=device.serial),
                        field + '.vfs')
        by_address = {device.address: device for device in devices}
        # A vDPA PF's VFs, written out or not, are its vDPA devices; a
        # card's VPD (its serial) shows on every function of it.
        devices[:] = [dataclasses.replace(
            device, vdpa=by_address[device.pf].vdpa,
            serial=by_address[device.pf].serial)
            if device.kind == 'vf' and device.pf in by_address
            else device for device in devices]
        by_address = {device.address: device for device in devices}
        for device in devices:
            if device.kind != 'vf':
                continue
            field = where[device.address]
            pf = by_address.get(device.pf)
            if pf is None or pf.kind != 'pf':
                self.fail(field + ('.pf' if field.endswith(']') else ''),
                          'VF %s names %s as its PF, but the profile has no '
                          'PF there' % (device.address, device.pf))
            if pf.cell != device.cell:
                self.fail(field + '.cell', 'VF %s is on cell %d but its PF '
                          '%s is on cell %d (a VF is on its PF\'s cell)'
                          % (device.address, device.cell, pf.address,
                             pf.cell))
            vf_bus, vf_slot, _ = device.bus_slot_function
            pf_bus, pf_slot, _ = pf.bus_slot_function
            if vf_bus != pf_bus or vf_slot < pf_slot or (
                    pf.bus_slot_function[2] != 0):
                self.fail(field + '.address', 'VF %s must be on its PF %s\'s '
                          'bus, at or after its slot, and the PF function 0'
                          % (device.address, pf.address))
        return tuple(sorted(devices, key=lambda d: d.address))

    def mdev_types(self, field, raw):
        if not isinstance(raw, list) or not raw:
            self.fail(field, 'list the vGPU types the GPU offers (%s)'
                      % ', '.join(MDEV_TYPES))
        for value in raw:
            if value not in MDEV_TYPES:
                self.fail(field, 'unknown vGPU type %s; Nova\'s fake '
                          'libvirt presents %s' % (errors.show(value),
                                                   ', '.join(MDEV_TYPES)))
        if list(raw) not in ([MDEV_TYPES[0]], list(MDEV_TYPES)):
            self.fail(field, 'Nova\'s fake libvirt presents [nvidia-11] or '
                      '[nvidia-11, nvidia-12], not %s' % errors.show(raw))
        return tuple(raw)

    # -- the nova: sections ---------------------------------------------

    def option(self, section, name, value, devices):
        """One device option checked; ``devices`` None skips matching."""
        where = 'nova.%s.%s' % (section, name)
        if name == 'report_in_placement':
            if not isinstance(value, bool):
                self.fail(where, 'must be true or false, not %s'
                          % errors.show(value))
            return value
        if name == 'device_spec':
            return self.device_spec(where, value, devices)
        if not isinstance(value, list) or not all(
                isinstance(v, str) for v in value):
            self.fail(where, 'must be a list of vGPU type names')
        if devices is not None:
            offered = {t for d in devices for t in d.mdev_types}
            for value_type in value:
                if value_type not in offered:
                    self.fail(where, 'no GPU of the host offers %s (offered: '
                              '%s)' % (errors.show(value_type),
                                       ', '.join(sorted(offered)) or 'none'))
        return list(value)

    def device_spec(self, where, raw, devices):
        if not isinstance(raw, list):
            self.fail(where, 'must be a list of device specs (mappings)')
        specs = []
        for index, entry in enumerate(raw):
            field = '%s[%d]' % (where, index)
            entry = self.base.mapping(field, entry, dict.fromkeys(SPEC_KEYS,
                                                                  False))
            spec = {}
            for key, value in entry.items():
                if key in ('vendor_id', 'product_id'):
                    value = ('*' if value == '*' else
                             self.hex4('%s.%s' % (field, key), value))
                elif key == 'address':
                    value = self.spec_address(field + '.address', value)
                elif key == 'traits':
                    if not isinstance(value, str):
                        self.fail(field + '.traits', 'a comma-separated '
                                  'text, as Nova reads it')
                elif isinstance(value, bool):
                    value = 'true' if value else 'false'
                elif not isinstance(value, str):
                    self.fail('%s.%s' % (field, key), 'must be a text, not '
                              '%s' % errors.show(value))
                spec[key] = value
            if not spec:
                self.fail(field, 'an empty spec would match every device')
            if devices is not None and exact_address(spec) and not any(
                    spec_matches(spec, device) for device in devices):
                self.fail(field, 'matches no device of the host')
            specs.append(spec)
        return specs


def conf_value(name, value):
    """A device option's value as Nova's config holds it."""
    if name == 'device_spec':
        # A MultiStrOpt of JSON objects.
        return [json.dumps(spec, sort_keys=True) for spec in value]
    return value
