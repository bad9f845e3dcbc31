"""Hypervisor faults: fake drivers whose one move step fails.

A scenario host may say ``{driver: fake, fail: confirm_migration}``: its
compute then runs Nova's ``fake.MediumFakeDriver`` (the same resources as
``driver: fake``) except that the named driver method raises
``InjectedFault``, as a real hypervisor failing at that step would. Nova's
own functional tests do the same (``fake.FakeFinishMigrationFailDriver``,
``mock.patch`` of ``FakeDriver.confirm_migration``); only the hypervisor
fails, every line of Nova above the driver runs as installed.

Which methods a scenario may name is ``names.FAULT_METHODS``: the
hypervisor steps of a cold move. Each is reached by an RPC cast
(``migrate_disk_and_power_off`` in the source's ``resize_instance``, cast
from the destination's ``prep_resize``; ``finish_migration`` in the
destination's ``finish_resize``, cast from the source's
``resize_instance``; ``confirm_migration`` and ``finish_revert_migration``
on the source, cast from the API and from the destination's
``revert_resize``). The cloud's casts wait for what they cast but leave
its failure on the compute that raised it
(``harness.nova_env.CastsWaited``), as a real cast does: the sender's
error handling never sees it, and an API request that cast answers as it
would in a deployment.

Nova loads a compute driver by a name under ``nova.virt``
(``compute_driver = fake.MediumFakeDriver``), so this module makes itself
importable as ``nova.virt.harness_faults``: ``driver_name(method)`` is the
``compute_driver`` value for a host whose ``method`` fails.
"""

import sys

from nova import exception
from nova.virt import fake

from harness.core import names

#: The driver methods a scenario may make fail.
METHODS = names.FAULT_METHODS
ALIAS = 'nova.virt.%s' % names.FAULT_MODULE


class InjectedFault(exception.NovaException):
    msg_fmt = 'injected hypervisor fault: %(method)s failed on %(host)s'


def _failing(method):
    def fail(self, *args, **kwargs):
        raise InjectedFault(method=method,
                            host=getattr(self, '_host', None) or '?')
    fail.__name__ = method
    # FakeDriver.init_host keeps the host name in _host.
    doc = 'MediumFakeDriver whose %s raises InjectedFault.' % method
    return type(names.fault_class_name(method), (fake.MediumFakeDriver,),
                {method: fail, '__doc__': doc})


for _method in METHODS:
    setattr(sys.modules[__name__], names.fault_class_name(_method),
            _failing(_method))
sys.modules.setdefault(ALIAS, sys.modules[__name__])


def driver_name(method):
    """The ``compute_driver`` for a fake host whose ``method`` fails."""
    return names.fault_driver_name(method)
