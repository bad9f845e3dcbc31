"""Compute services from the test's side, through Nova's REST API.

Each operation is one request to ``/os-services`` as an admin at the
latest microversion (2.53 and later: a service is known by its UUID, and
one PUT sets ``status`` or ``forced_down``), then a wait for the work Nova
started to finish; it returns the service record as the API shows it
(``None`` once deleted). A service is known by its host's name.
"""

from nova import context
from nova import objects
from nova.tests.functional.api import client as api_client

from harness.cloud import databases
from harness.cloud import servers
from harness.core import errors

BINARY = 'nova-compute'


class ServiceOps(object):
    """Disable, enable, force down or up, and delete compute services."""

    def __init__(self, cloud):
        self._cloud = cloud

    @property
    def _api(self):
        return self._cloud.api

    # -- reading ------------------------------------------------------------

    def get(self, host):
        """The compute service record of ``host``, or None if there is none.

        Nova's listing filters by host and binary; a deleted service is not
        listed.
        """
        found = self._api.api_get('/os-services?binary=%s&host=%s'
                                  % (BINARY, host)).body['services']
        return found[0] if found else None

    def forced_down_hosts(self):
        """Hosts whose compute service is forced down now.

        The API counts them down (a server deleted there is deleted
        locally) even while their compute runs. Read from the cell's
        database, not the API: the API's listing reads the clock to tell
        up from down, and a check must not move it.
        """
        ctxt = context.get_admin_context()
        found = set()
        for cell in self._cloud.env.cells.cell_mappings.values():
            cctxt = databases.targeted_copy(ctxt, cell)
            found |= {service.host for service in
                      objects.ServiceList.get_by_binary(cctxt, BINARY)
                      if service.forced_down}
        return found

    def describe(self, host):
        service = self.get(host)
        if service is None:
            return 'host %s has no compute service' % host
        return ('compute service of %s: status=%s state=%s forced_down=%s '
                'disabled_reason=%s' % (
                    host, service['status'], service['state'],
                    service.get('forced_down'),
                    service.get('disabled_reason')))

    def provider_traits(self, host):
        """The traits of ``host``'s resource provider (None if it has none).

        ``COMPUTE_STATUS_DISABLED`` is how Placement shows a disabled
        compute (the compute sets it when the API tells it, or at start).
        """
        placement = self._cloud.placement.api
        found = placement.get('/resource_providers?name=%s' % host,
                              version='1.6').body['resource_providers']
        if not found:
            return None
        return sorted(placement.get(
            '/resource_providers/%s/traits' % found[0]['uuid'],
            version='1.6').body['traits'])

    # -- the operations -----------------------------------------------------

    def disable(self, host, reason=None):
        """Disable ``host``'s compute: the scheduler skips it from now on."""
        body = {'status': 'disabled'}
        if reason is not None:
            body['disabled_reason'] = reason
        return self._update(host, 'disable', body)

    def enable(self, host):
        return self._update(host, 'enable', {'status': 'enabled'})

    def force_down(self, host):
        """Mark ``host``'s compute down at once, heartbeat or not."""
        return self._update(host, 'force down', {'forced_down': True})

    def force_up(self, host):
        return self._update(host, 'force up', {'forced_down': False})

    def delete(self, host):
        """Delete ``host``'s compute service; wait until Nova is done.

        Nova deletes the service, its compute node records, their resource
        providers and the host's cell mapping, or refuses (409) while the
        host still has instances or migrations in progress.
        """
        service = self._service(host, 'delete')
        self._request('delete the compute service of %s' % host, host,
                      self._api.api_delete,
                      '/os-services/%s' % service['id'])
        self._settle(host)
        left = self.get(host)
        if left is not None:
            raise errors.OperationFailed(
                'delete the compute service of %s: it is still listed.\n%s'
                % (host, self.describe(host)))
        return None

    # -- internals ----------------------------------------------------------

    def _service(self, host, what):
        service = self.get(host)
        if service is None:
            raise errors.OperationFailed(
                'cannot %s the compute service of %s: Nova lists none'
                % (what, host))
        return service

    def _update(self, host, what, body):
        service = self._service(host, what)
        self._request('%s the compute service of %s' % (what, host), host,
                      self._api.api_put, '/os-services/%s' % service['id'],
                      body)
        self._settle(host)
        return self._service(host, what)

    def _settle(self, host):
        # Enabling or disabling an up compute calls its set_host_enabled
        # (the COMPUTE_STATUS_DISABLED trait); nothing else is left running.
        self._cloud.activity.wait_idle(
            self._cloud.timeout, lambda: self.describe(host))
        self._cloud.race.check()

    def _request(self, what, host, func, *args):
        try:
            return func(*args)
        except api_client.OpenStackApiException as exc:
            raise errors.OperationFailed(
                '%s: the API refused it: %s %s\n%s'
                % (what, exc.response.status_code,
                   servers.api_message(exc.response), self.describe(host)))
