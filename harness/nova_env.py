"""The process-wide state a Nova test needs, as fixtures.

Nova keeps this set-up inside ``nova.test.TestCase.setUp``; we compose the
same fixtures from ``nova.tests.fixtures`` instead of inheriting that class,
so that a ``Cloud`` works in any testtools, oslotest or pytest case.
Each fixture here undoes what it does.
"""

# Nova's services must run under eventlet, as in Nova's functional suite;
# patch before anything imports threading-sensitive modules.
from nova import monkey_patch  # noqa: I100
monkey_patch.patch()

import copy  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import fixtures  # noqa: E402
from oslo_log.fixture import logging_error as log_fixture  # noqa: E402
from oslo_messaging._drivers import impl_fake  # noqa: E402
from oslo_utils.fixture import uuidsentinel  # noqa: E402
from oslo_versionedobjects import fixture as ovo_fixture  # noqa: E402
from oslotest import mock_fixture  # noqa: E402

from nova.api.openstack import wsgi_app  # noqa: E402
from nova.compute import rpcapi as compute_rpcapi  # noqa: E402
import nova.conf  # noqa: E402
from nova import context  # noqa: E402
import nova.crypto  # noqa: E402
import nova.limit.utils  # noqa: E402
from nova import objects  # noqa: E402
from nova.objects import base as objects_base  # noqa: E402
from nova.pci import request as pci_request  # noqa: E402
from nova import quota  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from nova.scheduler import utils as scheduler_utils  # noqa: E402
import nova.service_auth  # noqa: E402
# nova.test configures oslo.log, oslo.cache and mock at import time, as every
# Nova test process does; we use that, not its TestCase.
import nova.test  # noqa: E402,F401
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.virt import images  # noqa: E402
from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

from harness import install  # noqa: E402
from harness import offline  # noqa: E402

CONF = nova.conf.CONF
CELL0_NAME = 'cell0'
CELL1_NAME = 'cell1'


class TestShim(object):
    """What Nova's service-stand-in fixtures ask of "the test".

    ``NeutronFixture(test)``, ``GlanceFixture(test)``, ``CastAsCallFixture``
    and friends call ``test.stub_out``, ``test.flags``, ``test.useFixture``
    and ``test.id``; route those to the owning fixture so clean-up stays
    with it.
    """

    def __init__(self, owner, test_id):
        self._owner = owner
        self._test_id = test_id

    def id(self):
        return self._test_id

    def useFixture(self, fixture):
        return self._owner.useFixture(fixture)

    def stub_out(self, old, new):
        self._owner.useFixture(fixtures.MonkeyPatch(old, new))

    def flags(self, **kw):
        group = kw.pop('group', None)
        for name, value in kw.items():
            self._owner.useFixture(
                nova_fixtures.ConfPatcher(group=group, **{name: value}))


class NovaGlobals(fixtures.Fixture):
    """Reset Nova's module-level caches and restore the object registry.

    Nova caches cells, clients, key managers and version pins in module
    globals; a cloud from an earlier test must not leak into this one.
    """

    def _setUp(self):
        pci_request.get_alias_from_config.cache_clear()
        libvirt_driver.LibvirtDriver._get_pci_passthrough_devices.cache_clear()
        objects_base.NovaObject.indirection_api = None
        registry = objects_base.NovaObjectRegistry._registry
        saved = copy.copy(registry._obj_classes)
        self.addCleanup(setattr, registry, '_obj_classes', saved)
        objects.Service.clear_min_version_cache()
        from nova.compute import api as compute_api
        compute_api.CELLS = []
        context.reset_globals()
        images.QEMU_VERSION = None
        compute_rpcapi.reset_globals()
        quota.UID_QFD_POPULATED_CACHE_BY_PROJECT = set()
        quota.UID_QFD_POPULATED_CACHE_ALL = False
        wsgi_app.init_global_data.reset()
        wsgi_app.init_application.reset()
        report.PLACEMENTCLIENT = None
        scheduler_utils.reset_globals()
        nova.crypto._KEYMGR = None
        nova.limit.utils.IDENTITY_CLIENT = None
        nova.service_auth.reset_globals()
        self.addCleanup(compute_rpcapi.reset_globals)
        self.addCleanup(context.reset_globals)


class PromptDelivery(fixtures.Fixture):
    """Wake the fake RPC transport's listeners when a message arrives.

    oslo.messaging's fake driver polls its queues every 50 ms; each RPC hop
    of a move waited for the next poll. Here a delivery wakes the waiting
    listeners at once. A wake-up missed between a listener's look at its
    queue and its wait costs what it did before: one poll interval.
    """

    def _setUp(self):
        delivered = threading.Condition()
        real_deliver = impl_fake.FakeExchange.deliver_message

        def deliver_message(exchange, *args, **kwargs):
            real_deliver(exchange, *args, **kwargs)
            with delivered:
                delivered.notify_all()

        class WakeableTime(object):
            time = staticmethod(time.time)

            @staticmethod
            def sleep(seconds):
                with delivered:
                    delivered.wait(seconds)

        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.FakeExchange.deliver_message',
            deliver_message))
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.time', WakeableTime))


class CellsDatabase(fixtures.Fixture):
    """The API database plus cell0 and cell1, with their mappings."""

    def _setUp(self):
        self.useFixture(nova_fixtures.Database(database='api'))
        cell_dbs = nova_fixtures.CellDatabases()
        ctxt = context.get_context()
        self.cell_mappings = {}
        for name, uuid in ((CELL0_NAME, objects.CellMapping.CELL0_UUID),
                           (CELL1_NAME, uuidsentinel.cell1)):
            mapping = objects.CellMapping(
                context=ctxt, uuid=uuid, name=name,
                transport_url='fake://nowhere/', database_connection=uuid)
            mapping.create()
            self.cell_mappings[name] = mapping
            cell_dbs.add_cell_database(uuid, default=(name == CELL1_NAME))
        self.useFixture(cell_dbs)
        self.useFixture(nova_fixtures.DefaultFlavorsFixture())


class NovaEnvironment(fixtures.Fixture):
    """Config, logging, RPC, databases and poison, as a Nova test has them.

    ``test_id`` names the test for Nova's per-test executors and
    notification routing.
    """

    def __init__(self, test_id):
        super().__init__()
        self.test_id = test_id

    def _setUp(self):
        self.useFixture(offline.NoNetwork())
        self.useFixture(fixtures.EnvironmentVariable('OS_LOG_CAPTURE', '0'))
        # Logging first, so that it still captures what the executors log
        # when they shut down in clean-up.
        self.useFixture(log_fixture.get_logging_handle_error_fixture())
        self.stdlog = self.useFixture(nova_fixtures.StandardLogging())
        self.useFixture(
            nova_fixtures.PropagateTestCaseIdToChildEventlets(self.test_id))
        self.useFixture(nova_fixtures.OpenStackSDKFixture())
        self.useFixture(nova_fixtures.IsolatedExecutorFixture(self.test_id))
        self.useFixture(nova_fixtures.DelayingExecutorWrapperCleanupFixture())
        self.useFixture(nova_fixtures.ConfFixture(CONF))
        self.useFixture(nova_fixtures.ConfPatcher(
            group='wsgi', api_paste_config=install.nova_api_paste_ini()))
        self.useFixture(nova_fixtures.RPCFixture('nova.test'))
        self.useFixture(PromptDelivery())
        # Nova registers the notification options only once the RPCFixture
        # made a Notifier, so this default can only be set here.
        self.useFixture(nova_fixtures.ConfPatcher(
            group='oslo_messaging_notifications', driver=['test']))
        self.useFixture(nova_fixtures.RPCPollerCleanupFixture())
        self.useFixture(NovaGlobals())
        self.cells = self.useFixture(CellsDatabase())
        # After the databases: their migrations reset warning filters.
        self.useFixture(nova_fixtures.WarningsFixture())
        self.useFixture(ovo_fixture.StableObjectJsonFixture())
        self.useFixture(fixtures.EnvironmentVariable('http_proxy'))
        self.useFixture(nova_fixtures.PoisonFunctions())
        self.useFixture(nova_fixtures.ForbidNewLegacyNotificationFixture())
        self.useFixture(nova_fixtures.PrivsepNoHelperFixture())
        self.useFixture(mock_fixture.MockAutospecFixture())
        self.useFixture(nova_fixtures.ConfPatcher(
            group='filter_scheduler', build_failure_weight_multiplier=0.0))
        self.useFixture(nova_fixtures.GenericPoisonFixture())
        self.useFixture(nova_fixtures.SysFsPoisonFixture())
        self.useFixture(nova_fixtures.ImportModulePoisonFixture(
            {'guestfs', 'libvirt'}))
        self.useFixture(nova_fixtures.ComputeNodeIdFixture())
        self.useFixture(nova_fixtures.GreenThreadPoolShutdownWait())
