"""A profiled host's versions and device config, as its compute will read them.

A libvirt compute refuses to start on a ``[pci] device_spec`` Nova
cannot parse, on one that asks for ``live_migratable`` devices when the
host's libvirt or QEMU is older than Nova needs for them, and on a libvirt
or QEMU older than the oldest Nova supports. Each is found here before
any service starts, by Nova's own code on the host's own values, and is
one ``ScenarioError`` naming the scenario, the host, the profile file and
the field, instead of an ``InvalidConfiguration`` from inside a starting
compute that names neither.

A spec whose address is a glob or a regex (``harness.core.profile_devices``
checks the exact forms itself) must also match a device of the host, by
Nova's own matching: a spec that matches nothing is a typo here, where
the host's devices are known.
"""

import types

import fixtures
from oslo_config import cfg

from harness.cloud import libvirt
from harness.core import checking
from harness.core import errors
from harness.core import profile_devices
from harness.core import profiles


def validate(scenario):
    """Raise ``ScenarioError`` for the first profiled host Nova refuses."""
    checked = set()
    for name, host in sorted(scenario.hosts.items()):
        if host.profile is None or host.profile in checked:
            continue
        checked.add(host.profile)
        profile = profiles.load_profile(host.profile)
        check = checking.Checker('%s, scenario %s, host %s (profile %s)' % (
            scenario.path, errors.show(scenario.name), name, profile.path))
        _versions(check, profile)
        _device_spec(check, name, profile)


def _version_text(version):
    return '.'.join(str(part) for part in version)


def _versions(check, profile):
    from nova.virt.libvirt import driver
    for name, oldest in (('libvirt', driver.MIN_LIBVIRT_VERSION),
                         ('qemu', driver.MIN_QEMU_VERSION)):
        version = profile.hypervisor.get(name)
        if version is not None and version < tuple(oldest):
            check.fail('hypervisor.%s' % name, '%s is older than the '
                       'oldest %s this Nova supports (%s): its compute '
                       'refuses to start' % (_version_text(version), name,
                                             _version_text(oldest)))


def _device_spec(check, host, profile):
    specs = profile.option('device_spec', 'pci')
    if not specs:
        return
    from nova import exception
    from nova.pci import whitelist
    from nova.virt.libvirt import driver
    from nova.virt.libvirt import host as libvirt_host
    field = 'nova.pci.device_spec'
    values = profile_devices.conf_value('device_spec', specs)
    # Nova asks sysfs whether an address is a PF; the profile answers, as
    # it does for the running compute (harness.cloud.libvirt).
    with fixtures.MonkeyPatch(
            'nova.pci.utils.is_physical_function',
            lambda *address: libvirt.is_pf_with_vfs(
                profile, '%s:%s:%s.%s' % address)):
        for index, (spec, value) in enumerate(zip(specs, values)):
            try:
                parsed = whitelist.Whitelist([value]).specs[0]
            except exception.NovaException as exc:
                check.fail('%s[%d]' % (field, index),
                           'Nova refuses it: %s' % exc)
            if not profile_devices.exact_address(spec) and not any(
                    parsed.match(_dev_dict(device))
                    for device in profile.devices):
                check.fail('%s[%d]' % (field, index), 'matches no device of '
                           'the host (by Nova\'s own matching)')
        # The libvirt driver's own check at start, on the host's versions
        # and a config of its own (a kept cloud may be alive meanwhile).
        conf = cfg.ConfigOpts()
        import nova.conf
        for group, opts in nova.conf.pci.list_opts().items():
            conf.register_opts(opts, group=group.name)
        conf.set_override('device_spec', values, 'pci')
        libvirt_version, qemu_version = libvirt.versions(profile)
        connection = types.SimpleNamespace(
            getLibVersion=lambda: libvirt_version,
            getVersion=lambda: qemu_version, getType=lambda: 'QEMU')
        nova_host = libvirt_host.Host.__new__(libvirt_host.Host)
        nova_host.get_connection = lambda: connection
        with fixtures.MonkeyPatch('nova.virt.libvirt.driver.CONF', conf):
            try:
                driver.LibvirtDriver._check_pci_whitelist(
                    types.SimpleNamespace(_host=nova_host))
            except exception.InvalidConfiguration as exc:
                check.fail('hypervisor', 'Nova refuses to start host %s on '
                           'libvirt %s and QEMU %s with this %s: %s (say '
                           'newer versions in the profile\'s hypervisor)' % (
                               host, _version_text(_said(profile, 'libvirt',
                                                         libvirt_version)),
                               _version_text(_said(profile, 'qemu',
                                                   qemu_version)),
                               field, exc))


def _said(profile, name, version_int):
    """The version as the profile says it, or as libvirt encodes it."""
    if name in profile.hypervisor:
        return profile.hypervisor[name]
    return (version_int // 1000000, version_int // 1000 % 1000,
            version_int % 1000)


def _dev_dict(device):
    """A profile device as Nova's spec matching reads a libvirt device."""
    return {'vendor_id': device.vendor, 'product_id': device.product,
            'address': device.address, 'parent_addr': device.pf}
