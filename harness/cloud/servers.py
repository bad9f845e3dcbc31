"""Server operations from the test's side, through Nova's REST API.

Each operation is one API request (as an admin, at the latest
microversion), then a wait for Nova's in-flight work to finish, then a
check that the server reached the operation's resting state; it returns
the server's record as snapshots have it (``snapshot.SERVER_KEYS``). A
server is known by the name the test gave it; the UUID is Nova's business.
"""

import contextlib
import copy
import json
import uuid

from nova.tests.functional.api import client as api_client

from harness.cloud import nova_env
from harness.core import errors
from harness.core import steps
from harness.core.steps import evacuate as evacuate_step


def _rests(kind):
    """The resting state the step kind declares, as ``_settle`` takes it."""
    resting = steps.get(kind).resting
    return {'expect_status': resting['status'],
            'expect_migration': resting.get('migration')}


class ServerOps(object):
    """Every server operation a scenario can name, one method each.

    Each method's resting state is its step kind's ``resting``
    (``harness.core.steps``), so the two cannot drift apart.
    """

    def __init__(self, cloud):
        self._cloud = cloud
        self.uuids = {}
        # Every server ever named, so a leak of a deleted one keeps its name.
        self.known = {}
        # Server name -> its status before a resize or migration: a
        # stopped server is SHUTOFF again after confirm or revert.
        self._before_move = {}

    @property
    def _api(self):
        return self._cloud.api

    def uuid(self, name):
        if name not in self.uuids:
            self._learn(name)
        try:
            return self.uuids[name]
        except KeyError:
            raise errors.UnknownName(
                'no server named %r; known: %s'
                % (name, ', '.join(sorted(self.uuids)) or 'none'))

    def _learn(self, name):
        """Find ``name`` by name in Nova while its boot request runs.

        A request sent at a race point of a boot comes before the boot's
        own request has returned with the server's UUID.
        """
        found = self._api.api_get('/servers?name=^%s$' % name).body[
            'servers']
        if len(found) == 1:
            self.uuids[name] = found[0]['id']
            self.known[found[0]['id']] = name

    def names(self):
        """Server UUID -> the name the test gave it, deleted ones too."""
        return dict(self.known)

    # -- the operations ---------------------------------------------------

    def boot(self, name, flavor, host=None, image=None, port=False,
             force=False):
        """Boot ``name`` with ``flavor``, on ``host`` if given; wait ACTIVE.

        ``host`` goes in the request (microversion 2.74) so the scheduler
        still checks that the host fits, as it would for a real admin;
        with ``force`` it is forced instead (``availability_zone:
        "nova:<host>"``, the scheduler's filters skipped).
        ``port``: ``True`` for one port on the network stand-in's network,
        ``'direct'`` for one SR-IOV port (``vnic_type: direct``) on its
        VLAN network on physnet2 (a VF of the host, see ``sriov_port``),
        ``'vdpa'`` for one vDPA port there (``vnic_type: vdpa``, a vDPA
        device of the host), ``'remote-managed'`` for one port of a DPU's
        VF there; ``'bandwidth'`` for one port with a minimum-bandwidth
        request (see ``bandwidth_port``); no network otherwise.
        """
        if name in self.uuids:
            raise errors.HarnessError('a server named %r exists' % name)
        if port in ('direct', 'vdpa', 'remote-managed'):
            networks = [{'port': self.sriov_port(name, vnic_type=port)}]
        elif port == 'bandwidth':
            networks = [{'port': self.bandwidth_port(name)}]
        elif port:
            networks = [{'uuid': self._cloud.neutron.network_1['id']}]
        else:
            networks = 'none'
        body = {'server': {
            'name': name, 'flavorRef': flavor, 'networks': networks}}
        if host and force:
            body['server']['availability_zone'] = 'nova:%s' % host
        elif host:
            body['server']['host'] = host
        body['server']['imageRef'] = self._cloud.image_ref(image)
        server = self._request(
            'boot %s' % name, None, self._api.post_server, body)
        self.uuids[name] = server['id']
        self.known[server['id']] = name
        return self._settle(name, 'boot', expect_host=host,
                            **_rests('boot'))

    def bandwidth_port(self, name):
        """Create a port with a bandwidth request for ``name``; its id.

        A copy of Nova's Neutron stand-in's ``port_with_resource_request``
        (``resource_request``: 1000 kbit/s ingress and egress, physnet2,
        vnic type normal), with an id and MAC of its own.
        """
        return self._own_port(
            self._cloud.neutron.port_with_resource_request, 'bandwidth',
            name, '52:54:01', name='bandwidth-%s' % name)

    def sriov_port(self, name, vnic_type='direct'):
        """Create an SR-IOV port for server ``name``; return its id.

        A copy of Nova's Neutron stand-in's ``sriov_port`` (``vnic_type:
        direct`` on ``network_2``, a VLAN network on physnet2), with an id
        and MAC of its own; the network is added to the stand-in the first
        time, as Nova's own functional tests add networks. Nova asks the
        compute for a VF on physnet2 for it (a PCI request from the port);
        for ``vnic_type: vdpa``, a vDPA device there (as Nova's
        ``VDPAServersTest`` makes its port, on a VLAN network).
        """
        neutron = self._cloud.neutron
        network, subnet = neutron.network_2, neutron.subnet_2
        # Nova's tests add networks to the stand-in's records this way.
        neutron._networks.setdefault(network['id'], network)
        neutron._subnets.setdefault(subnet['id'], subnet)
        prefix = 'sriov' if vnic_type == 'direct' else vnic_type
        fields = {'name': '%s-%s' % (prefix, name),
                  'binding:vnic_type': vnic_type}
        if vnic_type in ('vdpa', 'remote-managed'):
            # An OVS-bound port, as Nova's VDPAServersTest and
            # RemoteManagedServersTest make them: the libvirt driver plugs
            # a vdpa vnic of an ovs VIF as a vDPA interface, a
            # remote-managed one as a hostdev (an hw_veb VIF would make a
            # vdpa one a macvtap one).
            fields.update({'binding:vif_type': 'ovs',
                           'binding:vif_details': {}})
        return self._own_port(neutron.sriov_port, 'sriov', name, '52:54:00',
                              **fields)

    def _own_port(self, template, kind, server, mac_prefix, **fields):
        """A copy of the stand-in's port ``template`` for ``server``; its id.

        Registered with the stand-in, with ``fields``, an id of its own
        (the same in every run: from ``kind`` and ``server``) and a MAC
        from that id under ``mac_prefix``.
        """
        port = copy.deepcopy(template)
        port_id = str(uuid.uuid5(uuid.NAMESPACE_URL,
                                 '%s-port/%s' % (kind, server)))
        digest = uuid.UUID(port_id).bytes
        port.update(fields, id=port_id, mac_address='%s:%02x:%02x:%02x' % (
            (mac_prefix,) + tuple(digest[:3])))
        self._cloud.neutron._ports[port_id] = port
        return port_id

    def resize(self, name, flavor):
        """Resize ``name`` to ``flavor`` and wait for VERIFY_RESIZE."""
        self._before_move[name] = self._at_rest(name)[0]['status']
        self._action(name, 'resize', {'resize': {'flavorRef': flavor}})
        return self._settle(name, 'resize', **_rests('resize'))

    def migrate(self, name, host=None):
        """Cold-migrate ``name`` (to ``host`` if given); wait VERIFY_RESIZE."""
        self._before_move[name] = self._at_rest(name)[0]['status']
        self._action(name, 'migrate', {'migrate': {'host': host}})
        return self._settle(name, 'migrate', expect_host=host,
                            **_rests('migrate'))

    def confirm(self, name):
        """Confirm the resize or migration of ``name``; wait ACTIVE."""
        self._action(name, 'confirm', {'confirmResize': None})
        resting = self._after_move(name, 'confirm')
        return self._settle(name, 'confirm', **resting)

    def revert(self, name):
        """Revert the resize or migration of ``name``; wait ACTIVE."""
        source = self.last_migration(name)['source_compute']
        self._action(name, 'revert', {'revertResize': None})
        return self._settle(name, 'revert', expect_host=source,
                            **self._after_move(name, 'revert'))

    def live_migrate(self, name, host=None, force=False, microversion=None):
        """Live-migrate ``name`` (to ``host``, or the scheduler's choice).

        ``force`` (with ``host``; microversions 2.30 to 2.67) skips the
        scheduler; ``microversion`` is the request's (the newest if None).
        """
        body = {'host': host, 'block_migration': 'auto'}
        if force:
            body['force'] = True
        with self.at_microversion(microversion):
            self._action(name, 'live migrate', {'os-migrateLive': body})
        return self._settle(name, 'live migrate', expect_host=host,
                            **_rests('live_migrate'))

    @contextlib.contextmanager
    def at_microversion(self, microversion):
        """The client's requests in the block at ``microversion``, if given.

        Nova's test client takes it as an attribute only. The operation
        runs inside its request (casts wait for their work), so a request
        sent at one of its race points goes at that version too.
        """
        if microversion is None:
            yield
            return
        newest, self._api.microversion = self._api.microversion, microversion
        try:
            yield
        finally:
            self._api.microversion = newest

    # -- power state: none of these should move an allocation -----------

    def stop(self, name):
        """Power ``name`` off (``os-stop``); wait SHUTOFF."""
        return self._simple(name, 'stop', {'os-stop': None})

    def start(self, name):
        """Power ``name`` on (``os-start``); wait ACTIVE."""
        return self._simple(name, 'start', {'os-start': None})

    def reboot(self, name, hard=False):
        """Reboot ``name``, soft or hard; wait ACTIVE."""
        return self._simple(name, 'reboot', {'reboot': {
            'type': 'HARD' if hard else 'SOFT'}})

    def pause(self, name):
        return self._simple(name, 'pause', {'pause': None})

    def unpause(self, name):
        return self._simple(name, 'unpause', {'unpause': None})

    def suspend(self, name):
        return self._simple(name, 'suspend', {'suspend': None})

    def resume(self, name):
        return self._simple(name, 'resume', {'resume': None})

    # -- shelve ------------------------------------------------------------

    def shelve(self, name):
        """Shelve ``name``; wait SHELVED, or SHELVED_OFFLOADED.

        Which one is Nova's ``[DEFAULT] shelved_offload_time``: 0 (its
        default) offloads at once, in the same request's work.
        """
        self._action(name, 'shelve', {'shelve': None})
        resting = _rests('shelve')
        if nova_env.CONF.shelved_offload_time == 0:
            resting['expect_status'] = 'SHELVED_OFFLOADED'
        return self._settle(name, 'shelve', **resting)

    def shelve_offload(self, name):
        """Offload a shelved ``name``; wait SHELVED_OFFLOADED."""
        return self._simple(name, 'shelve_offload', {'shelveOffload': None})

    def unshelve(self, name, host=None):
        """Unshelve ``name`` (on ``host`` if given: microversion 2.91)."""
        body = {'unshelve': {'host': host} if host else None}
        self._action(name, 'unshelve', body)
        return self._settle(name, 'unshelve', expect_host=host,
                            **_rests('unshelve'))

    # -- evacuate and rebuild ----------------------------------------------

    def evacuate(self, name, host=None, force=False, microversion=None):
        """Evacuate ``name`` from its down compute (to ``host`` if given).

        At the latest microversion (2.95 and later) Nova leaves the
        evacuated server stopped on its new host; before, an ACTIVE one
        ACTIVE. ``force`` (with ``host``; 2.29 to 2.67) skips the scheduler.
        """
        was = self._at_rest(name)[0]['status']
        body = {'evacuate': {'host': host} if host else {}}
        if force:
            body['evacuate']['force'] = True
        with self.at_microversion(microversion):
            self._action(name, 'evacuate', body)
        resting = _rests('evacuate')
        if was == 'ACTIVE' and evacuate_step.stays_active(microversion):
            resting['expect_status'] = 'ACTIVE'
        if was == 'ERROR':
            # Nova rebuilds an ERROR server ACTIVE, whatever the
            # microversion (compute manager _do_rebuild_instance).
            resting['expect_status'] = 'ACTIVE'
        return self._settle(name, 'evacuate', expect_host=host, **resting)

    def rebuild(self, name, image=None):
        """Rebuild ``name`` from image ``image``; wait ACTIVE, same host.

        ``image`` is a name from ``Cloud.create_image`` (the default image
        otherwise).
        """
        server = self._at_rest(name)[0]
        host = server.get('OS-EXT-SRV-ATTR:host')
        self._action(name, 'rebuild', {'rebuild': {
            'imageRef': self._cloud.image_ref(image)}})
        resting = _rests('rebuild')
        if server['status'] == 'SHUTOFF':
            # A stopped server is rebuilt and stopped again.
            resting['expect_status'] = 'SHUTOFF'
        return self._settle(name, 'rebuild', expect_host=host, **resting)

    # -- a live migration in flight ------------------------------------------

    def abort_live_migration(self, name):
        """Abort the live migration of ``name`` in flight.

        No wait: this is sent from inside the migration, at a race point.
        """
        migration = self.last_migration(name)
        self._request('abort the live migration of %s' % name, name,
                      self._api.api_delete,
                      '/servers/%s/migrations/%s'
                      % (self.uuid(name), migration['id']))

    def force_complete_live_migration(self, name):
        """Force the live migration of ``name`` in flight to complete."""
        migration = self.last_migration(name)
        self._request('force-complete the live migration of %s' % name,
                      name, self._api.api_post,
                      '/servers/%s/migrations/%s/action'
                      % (self.uuid(name), migration['id']),
                      {'force_complete': None})

    def request_live_migrate(self, name, host=None):
        """Send the API's live migration of ``name``; no wait.

        Sent from inside another operation (``interject``): the request
        returns once the source compute has taken it (run it, or queued
        it behind a busy executor).
        """
        self._action(name, 'live migrate', {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})

    def request_delete(self, name):
        """Send the API's delete of ``name``; no wait (see ``interject``)."""
        self._request('delete %s' % name, name, self._api.delete_server,
                      self.uuid(name))

    def delete(self, name):
        """Delete ``name`` and wait until Nova has finished with it."""
        uuid = self.uuid(name)
        self._request('delete %s' % name, name, self._api.delete_server,
                      uuid)
        self._cloud.activity.wait_idle(
            self._cloud.timeout, lambda: self.describe(name))
        self._cloud.race.check()
        left = [srv for srv in self._cloud.reader.read_nova_records()[
            'servers'] if srv['id'] == uuid]
        if not left:
            del self.uuids[name]
            return None
        server = left[0]
        raise errors.OperationFailed(
            'delete %s: the server is still there (status %s).\n%s'
            % (name, server['status'], self.describe(name)))

    # -- reading state ----------------------------------------------------

    def get(self, name):
        return self._api.get_server(self.uuid(name))

    def migrations(self, name):
        """The server's migrations, oldest first, from the admin API."""
        found = self._api.api_get(
            '/os-migrations?instance_uuid=%s' % self.uuid(name)
        ).body['migrations']
        return sorted(found, key=lambda m: m['id'])

    def last_migration(self, name):
        found = self.migrations(name)
        if not found:
            raise errors.HarnessError('server %r has no migration' % name)
        return found[-1]

    def actions(self, name):
        """Instance actions with their events, oldest first."""
        uuid = self.uuid(name)
        result = []
        for action in reversed(self._api.get_instance_actions(uuid)):
            detail = self._api.api_get(
                '/servers/%s/os-instance-actions/%s'
                % (uuid, action['request_id'])).body['instanceAction']
            result.append(detail)
        return result

    def describe(self, name):
        """The server's state, migrations and action events, for a report."""
        lines = []
        uuid = self.uuids.get(name)
        try:
            server = self._api.get_server(uuid)
        except api_client.OpenStackApiNotFoundException:
            return 'server %s (%s) is gone' % (name, uuid)
        lines.append(
            'server %s: status=%s vm_state=%s task_state=%s host=%s'
            % (name, server['status'], server.get('OS-EXT-STS:vm_state'),
               server.get('OS-EXT-STS:task_state'),
               server.get('OS-EXT-SRV-ATTR:host')))
        if server.get('fault'):
            lines.append('  fault: %s' % server['fault'].get('message'))
        for mig in self.migrations(name):
            lines.append(
                '  migration %s: type=%s status=%s %s -> %s'
                % (mig['id'], mig['migration_type'], mig['status'],
                   mig['source_compute'], mig['dest_compute']))
        for action in self.actions(name):
            events = ', '.join(
                '%s=%s' % (e['event'], e.get('result'))
                for e in action.get('events', []))
            lines.append('  action %s: %s' % (action['action'], events))
        queued = self._cloud.casts.queued_methods()
        if queued:
            lines.append('  cast to stopped computes, queued until they '
                         'start: %s' % '; '.join(
                             '%s: %s' % (host, ', '.join(methods))
                             for host, methods in queued.items()))
        return '\n'.join(lines)

    # -- internals -------------------------------------------------------

    def _at_rest(self, name):
        """The server's record and its latest migration's, or None.

        Read as the snapshot reads them (the API's terms, from the
        databases): two API requests less per operation.
        """
        uuid = self.uuid(name)
        records = self._cloud.reader.read_nova_records()
        found = [srv for srv in records['servers'] if srv['id'] == uuid]
        if not found:
            raise errors.OperationFailed(
                'server %s (%s) is gone.\n%s'
                % (name, uuid, self.describe(name)))
        migrations = [mig for mig in records['migrations']
                      if mig['instance_uuid'] == uuid]
        return found[0], max(migrations, key=lambda m: m['id'],
                             default=None)

    def _request(self, what, name, func, *args):
        try:
            return func(*args)
        except api_client.OpenStackApiException as exc:
            detail = self.describe(name) if name in self.uuids else ''
            raise errors.OperationFailed(
                '%s: the API refused it: %s %s\n%s'
                % (what, exc.response.status_code,
                   api_message(exc.response), detail))

    def _action(self, name, what, body):
        uuid = self.uuid(name)
        self._request('%s %s' % (what, name), name,
                      self._api.post_server_action, uuid, body)

    def _after_move(self, name, kind):
        """Step kind ``kind``'s resting state; SHUTOFF if it was stopped."""
        resting = _rests(kind)
        if self._before_move.pop(name, None) == 'SHUTOFF':
            resting['expect_status'] = 'SHUTOFF'
        return resting

    def _simple(self, name, kind, body):
        """One action, then the resting state of step kind ``kind``."""
        what = kind.replace('_', ' ')
        self._action(name, what, body)
        return self._settle(name, what, **_rests(kind))

    def _settle(self, name, what, expect_status, expect_host=None,
                expect_migration=None):
        # The resting state comes from the step kind (harness.core.steps).
        self._cloud.activity.wait_idle(
            self._cloud.timeout, lambda: self.describe(name))
        self._cloud.race.check()
        server, migration = self._at_rest(name)
        problems = []
        if server['status'] != expect_status:
            problems.append('status is %s, not %s'
                            % (server['status'], expect_status))
        if server.get('OS-EXT-STS:task_state'):
            problems.append('task_state is still %s'
                            % server['OS-EXT-STS:task_state'])
        host = server.get('OS-EXT-SRV-ATTR:host')
        if expect_host and host != expect_host:
            problems.append('host is %s, not %s' % (host, expect_host))
        if expect_migration:
            status = migration['status'] if migration else None
            if status != expect_migration:
                problems.append('migration status is %s, not %s'
                                % (status, expect_migration))
        if problems:
            raise errors.OperationFailed(
                '%s %s did not reach its resting state: %s.\n%s'
                % (what, name, '; '.join(problems), self.describe(name)))
        return server


def api_message(response):
    """The message of an API error response (its body if it has none)."""
    try:
        body = json.loads(response.content)
    except (TypeError, ValueError):
        return response.content
    for value in body.values():
        if isinstance(value, dict) and 'message' in value:
            return value['message']
    return body
