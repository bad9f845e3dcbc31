"""Read a cloud's accounting into raw records, then into a ``Snapshot``.

The records are what Placement's REST API and Nova's API (as an admin)
return (``snapshot.placement_records`` and ``snapshot.nova_records`` say
which requests), read straight from the databases in the APIs' own terms:
a snapshot through the APIs cost ~35 requests. ``tests/functional/
test_reuse.py`` holds the two equal through every kind of step. The
resource trackers' view is what each tracker last saved on its compute
node record in the cell database: Nova's API does not show NUMA usage, and
reading the record changes nothing.
"""

import copy

from nova.api.openstack import common
from nova import context
from nova.db.main import api as main_db
from nova.db.main import models as nova_models
from nova import exception
from nova import objects
from nova import servicegroup
from placement.db.sqlalchemy import models as placement_models
from placement import db_api as placement_db
import sqlalchemy as sa

from harness.cloud import databases
from harness.core import snapshot

PLACEMENT_VERSION = '1.39'


def _placement_reads():
    """The three reads of Placement's tables a snapshot makes.

    Built once: SQLAlchemy's statement building is most of a read's cost.
    Resource class names are the table's: the standard classes are synced
    into it.
    """
    rp = placement_models.ResourceProvider.__table__
    parent, root = rp.alias('parent'), rp.alias('root')
    rc = placement_models.ResourceClass.__table__
    inv = placement_models.Inventory.__table__
    alloc = placement_models.Allocation.__table__
    providers = (
        sa.select(rp.c.id, rp.c.uuid, rp.c.name, rp.c.generation,
                  parent.c.uuid, root.c.uuid)
        .outerjoin(parent, rp.c.parent_provider_id == parent.c.id)
        .outerjoin(root, rp.c.root_provider_id == root.c.id))
    inventories = (
        sa.select(inv.c.resource_provider_id, rc.c.name, inv.c.total,
                  inv.c.reserved, inv.c.min_unit, inv.c.max_unit,
                  inv.c.step_size, inv.c.allocation_ratio)
        .join(rc, inv.c.resource_class_id == rc.c.id))
    allocations = (
        sa.select(alloc.c.resource_provider_id, alloc.c.consumer_id,
                  rc.c.name, alloc.c.used)
        .join(rc, alloc.c.resource_class_id == rc.c.id))
    trait = placement_models.Trait.__table__
    rp_trait = placement_models.ResourceProviderTrait.__table__
    traits = (
        sa.select(rp.c.uuid, trait.c.name)
        .join(rp_trait, rp_trait.c.resource_provider_id == rp.c.id)
        .join(trait, rp_trait.c.trait_id == trait.c.id))
    return providers, inventories, allocations, traits


_PROVIDERS, _INVENTORIES, _ALLOCATIONS, _TRAITS = _placement_reads()


class SnapshotReader(object):

    def __init__(self, cloud):
        self._cloud = cloud
        # part -> (database write count when read, records): every record
        # here comes from a database, so while no database was written a
        # part cannot have changed and need not be fetched again (an
        # operation's resting-state check and the snapshot after it share
        # one read of the servers and migrations).
        self._last = {}
        self.reads = 0
        self._fetched = 0
        self._migration_names = {}

    def cell_contexts(self, ctxt):
        """[(cell name, a copy of ``ctxt`` targeted at it)], by cell name.

        Targeted without Nova's fixture's cell switch
        (``databases.targeted_copy`` says why): for reads, here and in
        layers that may not import the cloud's modules (the recorder).
        """
        mappings = self._cloud.env.cells.cell_mappings
        return [(name, databases.targeted_copy(ctxt, mappings[name]))
                for name in sorted(mappings)]

    def read(self, label=''):
        raw = self.read_raw()
        names = self._cloud.servers.names()
        self._name_deleted_migrations(raw, names)
        snap = snapshot.Snapshot.from_raw(
            raw, names, label, former_names=self._migration_names)
        # A migration's record goes with its server; what it may leak
        # keeps the name it had (not its UUID, which differs every run).
        for consumer, migration in snap.migrations.items():
            self._migration_names[migration.uuid] = consumer
        return snap

    def _name_deleted_migrations(self, raw, names):
        """Name the consumers that are migrations of deleted servers.

        A server deleted in the middle of its move (a request at a race
        point) takes its migration record with it before any snapshot saw
        it; what the migration still holds is named after the server, as
        ``former_names`` does for migrations seen before, not by its UUID,
        which differs every run.
        """
        known = set(names) | set(self._migration_names) | {
            mig['uuid'] for mig in raw['migrations']}
        unknown = {consumer for by_consumer in raw['allocations'].values()
                   for consumer in by_consumer} - known
        if not unknown:
            return
        ctxt = context.get_admin_context(read_deleted='yes')
        for name, cctxt in self.cell_contexts(ctxt):
            for uuid in sorted(unknown):
                try:
                    mig = objects.Migration.get_by_uuid(cctxt, uuid)
                except exception.MigrationNotFound:
                    continue
                server = names.get(mig.instance_uuid)
                if server is not None:
                    self._migration_names[uuid] = (
                        snapshot.MIGRATION % server)

    def read_raw(self):
        """Raw records as Placement and Nova return them (JSON-friendly)."""
        fetched_before = self._fetched
        raw = self.read_placement_records()
        raw.update(self.read_nova_records())
        raw['compute_nodes'], raw['node_records'] = self._cached(
            'compute_nodes', self.read_compute_nodes)
        raw['pci_devices'], raw['pci_guests'] = self._cached(
            'pci_devices', self.read_pci_devices)
        raw['mdevs'] = self._cached('mdevs', self.read_mdevs)
        raw['provider_traits'] = self._cached('traits',
                                              self.read_provider_traits)
        raw['faults'], raw['actions'] = self._cached(
            'failures', self.read_failure_records)
        raw['instances'] = self._cached('instances', self.read_instances)
        raw['hypervisors'] = self._hypervisors()
        # Not cached: a hypervisor's domains are no database's.
        raw['domains'] = self.read_domains()
        if self._fetched != fetched_before:
            self.reads += 1
        return raw

    def _cached(self, part, fetch):
        writes = databases.database_writes()
        last = self._last.get(part)
        if writes is None or last is None or last[0] != writes:
            # Keyed by the count from before the read: a read that wrote
            # something is read again next time.
            last = self._last[part] = (writes, fetch())
            self._fetched += 1
        return copy.deepcopy(last[1])

    def placement_get(self, url):
        resp = self._cloud.placement.api.get(url, version=PLACEMENT_VERSION)
        if resp.status != 200:
            raise RuntimeError('GET %s from Placement: %s %s'
                               % (url, resp.status, resp.body))
        return resp.body

    def read_placement_records(self):
        """Providers with inventories, usages and allocations.

        As ``snapshot.placement_records`` has them from Placement's API.
        """
        return self._cached('placement', self._read_placement_records)

    def _read_placement_records(self):
        with placement_db.get_placement_engine().connect() as conn:
            providers = conn.execute(_PROVIDERS).fetchall()
            inventories = conn.execute(_INVENTORIES).fetchall()
            allocations = conn.execute(_ALLOCATIONS).fetchall()
        uuids = {row[0]: row[1] for row in providers}
        raw = {'resource_providers': [], 'inventories': {}, 'usages': {},
               'allocations': {}}
        for rp_id, uuid, name, generation, parent_uuid, root_uuid in sorted(
                providers, key=lambda row: row[2]):
            raw['resource_providers'].append(dict(zip(
                snapshot.PROVIDER_KEYS,
                (uuid, name, generation, parent_uuid, root_uuid))))
            raw['inventories'][uuid] = {}
            raw['usages'][uuid] = {}
            raw['allocations'][uuid] = {}
        for rp_id, name, *fields in inventories:
            raw['inventories'][uuids[rp_id]][name] = dict(zip(
                ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                 'allocation_ratio'), fields))
            # The API's usages: every class the provider has inventory of.
            raw['usages'][uuids[rp_id]][name] = 0
        for rp_id, consumer, name, used in allocations:
            by_consumer = raw['allocations'][uuids[rp_id]]
            by_consumer.setdefault(consumer, {'resources': {}})[
                'resources'][name] = used
            usages = raw['usages'][uuids[rp_id]]
            if name in usages:
                usages[name] += used
        return raw

    def read_provider_traits(self):
        """Provider UUID -> its traits (sorted), from Placement's tables.

        As ``snapshot.provider_traits`` has them from Placement's API.
        """
        with placement_db.get_placement_engine().connect() as conn:
            rows = conn.execute(_TRAITS).fetchall()
        traits = {}
        for uuid, name in rows:
            traits.setdefault(uuid, []).append(name)
        return {uuid: sorted(names) for uuid, names in traits.items()}

    def nova_get(self, url):
        return self._cloud.api.api_get(url).body

    def read_nova_records(self):
        """Servers and migrations as ``snapshot.nova_records`` has them."""
        return self._cached('nova', self._read_nova_records)

    def _read_nova_records(self):
        """Servers and migrations as ``snapshot.nova_records`` has them.

        Read from the databases, in the API's own terms (its status
        mapping, its admin fields): the API's listing costs ~50 ms a
        snapshot in joins the snapshot does not use. A functional test
        holds the two equal after boots, moves and a failed boot.
        """
        ctxt = context.get_admin_context()
        servers, migrations = [], []
        for build in objects.BuildRequestList.get_all(ctxt):
            # Accepted, not yet scheduled: the API lists it as building.
            servers.append(_server_record(build.instance))
        for name, cctxt in self.cell_contexts(ctxt):
            servers += [_server_record(instance) for instance in
                        objects.InstanceList.get_by_filters(
                            cctxt, {'deleted': False},
                            expected_attrs=[])]
            # The API hides what a cross-cell move hides.
            migrations += [
                {key: getattr(mig, key) for key in snapshot.MIGRATION_KEYS}
                for mig in objects.MigrationList.get_by_filters(
                    cctxt, {}) if not mig.hidden]
        return {'servers': servers, 'migrations': migrations}

    def read_compute_nodes(self):
        """The compute nodes the trackers own, and every node record.

        One read of the table, deleted records too: the live ones sorted
        by node name (the trackers' view), and every record in creation
        order with the ``stats`` its resource tracker saved (Nova's API
        shows them only before microversion 2.88).
        """
        ctxt = context.get_admin_context(read_deleted='yes')
        cell = self._cloud.env.cells.cell_mappings[databases.CELL1_NAME]
        cctxt = databases.targeted_copy(ctxt, cell)
        nodes = objects.ComputeNodeList.get_all(cctxt)
        live = [compute_node_record(node) for node in
                sorted((node for node in nodes if not node.deleted),
                       key=lambda n: n.hypervisor_hostname)]
        return live, [node_record(node)
                      for node in sorted(nodes, key=lambda n: n.id)]

    def _hypervisors(self):
        """The hypervisor list, read again when a database or the clock moved.

        A service is up or down by its last heartbeat against the clock's
        time (the service group's DB driver), so the list is kept while
        neither changed.
        """
        key = (databases.database_writes(), self._cloud.clock.now)
        last = self._last.get('hypervisors')
        if key[0] is None or last is None or last[0] != key:
            last = self._last['hypervisors'] = (key, self.read_hypervisors())
            self._fetched += 1
        return copy.deepcopy(last[1])

    def read_hypervisors(self):
        """The hypervisor list as Nova's API shows it.

        Read from the cell database in the API's own terms
        (``HypervisorsController``: every compute node record that is not
        deleted and whose compute service exists, up as the service group
        sees it, disabled as its service is): the API's answer costs ~12
        ms a snapshot. A functional test holds the two equal
        (``api_hypervisors``).
        """
        ctxt = context.get_admin_context()
        group = servicegroup.API()
        cell = self._cloud.env.cells.cell_mappings[databases.CELL1_NAME]
        cctxt = databases.targeted_copy(ctxt, cell)
        nodes = objects.ComputeNodeList.get_all(cctxt)
        services = {service.host: service for service in
                    objects.ServiceList.get_by_binary(
                        cctxt, 'nova-compute', include_disabled=True)}
        listed = []
        for node in sorted(nodes, key=lambda n: n.id):
            service = services.get(node.host)
            if service is None:
                continue
            listed.append({
                'id': node.uuid, 'hypervisor_hostname':
                node.hypervisor_hostname,
                'state': 'up' if group.service_is_up(service) else 'down',
                'status': 'disabled' if service.disabled else 'enabled'})
        return listed

    def api_hypervisors(self):
        """The hypervisor list from Nova's API (one request)."""
        return [{key: hyp.get(key) for key in snapshot.HYPERVISOR_KEYS}
                for hyp in self.nova_get(snapshot.HYPERVISORS_URL)[
                    'hypervisors']]

    def read_instances(self):
        """Every server in the cell database: where, states, NUMA cells."""
        ctxt = context.get_admin_context()
        cell = self._cloud.env.cells.cell_mappings[databases.CELL1_NAME]
        cctxt = databases.targeted_copy(ctxt, cell)
        instances = objects.InstanceList.get_by_filters(
            cctxt, {'deleted': False}, expected_attrs=['numa_topology'])
        return [instance_record(inst) for inst in
                sorted(instances, key=lambda inst: inst.uuid)]

    def read_domains(self):
        """Each profiled host's domains, as the XML Nova defined.

        Nova's fake libvirt re-renders a domain from the parts it parses
        (no memory backing): the document Nova gave the hypervisor is what
        a real libvirt keeps (``LibvirtHosts`` records it). Hosts on Nova's
        fake driver have no domains and are left out.
        """
        libvirt_hosts = getattr(self._cloud, '_libvirt_hosts', None)
        if libvirt_hosts is None:
            return []
        domains = []
        for host in libvirt_hosts.hosts():
            found = libvirt_hosts.domains(host)
            # An entry without a domain marks the host as a libvirt one,
            # with its vDPA devices (what a guest's vDPA interface names).
            domains.append({'host': host, 'uuid': None, 'xml': None,
                            'vdpa': libvirt_hosts.vdpa_devices(host)})
            domains += [{'host': host, 'uuid': uuid, 'xml': xml}
                        for uuid, xml in found]
        return domains

    def read_pci_devices(self):
        """Each compute node's PCI devices, and the guests holding some.

        As the PCI trackers saved them in the cell database (Nova's API
        shows neither). A guest's cells are the host cells of its NUMA
        topology; its policies, those of its PCI requests.
        """
        ctxt = context.get_admin_context()
        cell = self._cloud.env.cells.cell_mappings[databases.CELL1_NAME]
        devices, holders = [], set()
        cctxt = databases.targeted_copy(ctxt, cell)
        for node in objects.ComputeNodeList.get_all(cctxt):
            for dev in objects.PciDeviceList.get_by_compute_node(
                    cctxt, node.id):
                devices.append(pci_device_record(node, dev))
                if dev.instance_uuid:
                    holders.add(dev.instance_uuid)
        guests = {}
        for uuid in sorted(holders):
            try:
                instance = objects.Instance.get_by_uuid(
                    cctxt, uuid,
                    expected_attrs=['numa_topology', 'pci_requests'])
            except exception.InstanceNotFound:
                continue
            topology = instance.numa_topology
            requests = instance.pci_requests
            guests[uuid] = {
                'cells': sorted(c.id for c in topology.cells)
                if topology else [],
                'policies': sorted(
                    req.numa_policy or 'legacy'
                    for req in requests.requests) if requests else []}
        devices.sort(key=lambda d: (d['host'], d['address']))
        return devices, guests

    def read_failure_records(self):
        """Each server's latest fault, and its actions with their events.

        From every cell's database (a server buried in cell0 by a failed
        schedule has its fault and actions there), in the API's terms: a
        fault's message, code and host, and the exception class its
        traceback ends with (not the traceback: it names this
        installation's files); an action's name and message, and its
        events' name, result, details and host, oldest first, as
        ``os-instance-actions`` shows them to an admin at 2.84.
        """
        ctxt = context.get_admin_context()
        faults, actions = [], []
        for name, cctxt in self.cell_contexts(ctxt):
            cell_faults, cell_actions = _read_failures(cctxt)
            faults += cell_faults
            actions += cell_actions
        return faults, actions

    def read_mdevs(self):
        """The mediated devices each running libvirt host assigned.

        As Nova's driver reads them from its guests' definitions; a fake
        driver has none.
        """
        mdevs = []
        for host, service in sorted(self._cloud.computes.items()):
            assigned = getattr(service.manager.driver,
                               '_get_all_assigned_mediated_devices', None)
            if assigned is None:
                continue
            found = assigned()
            mdevs += [{'host': host, 'mdev': mdev, 'instance_uuid': uuid}
                      for mdev, uuid in sorted(found.items())]
        return mdevs


_FAULTS = nova_models.InstanceFault.__table__
_ACTIONS = nova_models.InstanceAction.__table__
_EVENTS = nova_models.InstanceActionEvent.__table__


@main_db.pick_context_manager_reader
def _read_failures(ctxt):
    """One cell's faults (the latest per server) and actions with events.

    Two reads, whatever the number of servers. Soft-deleted rows are
    left out, as the API leaves them out (deleting a server deletes its
    faults; its actions stay).
    """
    faults = {}
    for uuid, code, message, details, host in ctxt.session.execute(
            sa.select(_FAULTS.c.instance_uuid, _FAULTS.c.code,
                      _FAULTS.c.message, _FAULTS.c.details,
                      _FAULTS.c.host)
            .where(_FAULTS.c.deleted == 0)
            .order_by(_FAULTS.c.created_at, _FAULTS.c.id)):
        faults[uuid] = {'instance_uuid': uuid, 'code': code,
                        'message': message, 'host': host,
                        'exception': snapshot.exception_class(details)}
    actions = {}
    for (action_id, uuid, action, message, event, result, details,
         host) in ctxt.session.execute(
            sa.select(_ACTIONS.c.id, _ACTIONS.c.instance_uuid,
                      _ACTIONS.c.action, _ACTIONS.c.message,
                      _EVENTS.c.event, _EVENTS.c.result, _EVENTS.c.details,
                      _EVENTS.c.host)
            .outerjoin(_EVENTS, sa.and_(_EVENTS.c.action_id == _ACTIONS.c.id,
                                        _EVENTS.c.deleted == 0))
            .where(_ACTIONS.c.deleted == 0)
            .order_by(_ACTIONS.c.created_at, _ACTIONS.c.id,
                      _EVENTS.c.created_at, _EVENTS.c.id)):
        record = actions.setdefault(action_id, {
            'instance_uuid': uuid, 'action': action, 'message': message,
            'events': []})
        if event is not None:
            record['events'].append({'event': event, 'result': result,
                                     'details': details, 'host': host})
    return (sorted(faults.values(), key=lambda f: f['instance_uuid']),
            list(actions.values()))


def pci_device_record(node, dev):
    """A PCI device record as a plain dict."""
    return {'host': node.host, 'node': node.hypervisor_hostname,
            'address': dev.address, 'dev_type': dev.dev_type,
            'numa_node': dev.numa_node, 'status': dev.status,
            'instance_uuid': dev.instance_uuid,
            'parent_addr': dev.parent_addr, 'vendor_id': dev.vendor_id,
            'product_id': dev.product_id}


def _server_record(instance):
    record = {
        'id': instance.uuid, 'name': instance.display_name,
        'status': common.status_from_state(instance.vm_state,
                                           instance.task_state),
        'OS-EXT-SRV-ATTR:host': instance.host,
        'OS-EXT-SRV-ATTR:hypervisor_hostname': (
            instance.node if instance.obj_attr_is_set('node') else None),
        'OS-EXT-STS:task_state': instance.task_state,
        'OS-EXT-STS:vm_state': instance.vm_state}
    return {key: record[key] for key in snapshot.SERVER_KEYS}


def node_record(node):
    """A compute node record (deleted or not) with its stats, as a dict."""
    record = {key: getattr(node, key) for key in (
        'uuid', 'host', 'vcpus', 'vcpus_used', 'memory_mb',
        'memory_mb_used', 'local_gb', 'local_gb_used', 'running_vms',
        'current_workload')}
    record.update(node=node.hypervisor_hostname, deleted=bool(node.deleted),
                  mapped=bool(node.mapped),
                  stats=dict(node.stats or {}), pci_pools=[
                      {'vendor_id': pool.vendor_id,
                       'product_id': pool.product_id,
                       'numa_node': pool.numa_node, 'count': pool.count,
                       'tags': dict(pool.tags)}
                      for pool in (node.pci_device_pools or ())])
    return record


def instance_record(instance):
    """A server's cell record: where, its states, its NUMA cells."""
    topology = instance.numa_topology
    cells = []
    for cell in (topology.cells if topology else ()):
        cells.append({
            'id': cell.id, 'cpus': sorted(cell.total_cpus),
            'pinning': {str(vcpu): pcpu for vcpu, pcpu in sorted(
                (_field(cell, 'cpu_pinning_raw') or {}).items())},
            'reserved': sorted(_field(cell, 'cpuset_reserved') or ()),
            'memory_mb': cell.memory, 'pagesize': _field(cell, 'pagesize')})
    return {'uuid': instance.uuid, 'host': instance.host,
            'node': instance.node, 'vm_state': instance.vm_state,
            'task_state': instance.task_state, 'os_type': instance.os_type,
            'project_id': instance.project_id, 'cells': cells,
            'emulator_threads_policy': (
                _field(topology, 'emulator_threads_policy')
                if topology else None)}


def _field(obj, name):
    """A field of a Nova object, None when it is not set."""
    return getattr(obj, name) if name in obj else None


def compute_node_record(node):
    """A compute node record as a plain dict, NUMA cells decoded."""
    record = {
        'host': node.host, 'node': node.hypervisor_hostname,
        'uuid': node.uuid, 'vcpus': node.vcpus,
        'vcpus_used': node.vcpus_used, 'memory_mb': node.memory_mb,
        'memory_mb_used': node.memory_mb_used, 'local_gb': node.local_gb,
        'local_gb_used': node.local_gb_used, 'cells': []}
    if node.numa_topology:
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        for cell in topology.cells:
            record['cells'].append({
                'id': cell.id, 'cpus': sorted(cell.cpuset),
                'pcpus': sorted(cell.pcpuset), 'cpu_usage': cell.cpu_usage,
                'memory_mb': cell.memory, 'memory_usage': cell.memory_usage,
                'pinned_cpus': sorted(cell.pinned_cpus),
                'pages': {str(page.size_kb): {
                    'total': page.total, 'used': page.used,
                    'reserved': page.reserved} for page in cell.mempages}})
    return record
