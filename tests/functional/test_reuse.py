"""What is kept between clouds in a process, and what a snapshot re-reads.

Two things are kept for speed and must never carry state:

- the in-memory SQLite engines (for their compiled-SQL caches): a cloud
  made after another starts with empty databases, so it sees none of the
  earlier cloud's providers, servers or flavors;
- a snapshot's raw records, reused only while no database was written:
  any change Nova or Placement makes (an operation, a periodic, a write
  through Placement's API that Nova knows nothing of) is read afresh.

A whole cloud kept between runs of scenarios of one shape
(``harness.reuse.CloudPool``) must run each scenario as a new cloud does.

Hosts run Nova's fake.MediumFakeDriver (10 vCPUs, 8192 MB, 1028 GB).
"""

import contextlib
import copy
import os

import fixtures
from nova import context as nova_context
from nova import objects
import testtools

from harness import bugs
from harness.cloud import fixture as cloud_mod
from harness.cloud import reuse
from harness.core import errors
from harness.core import invariants
from harness.core import scenario as scenario_mod
from harness.core import snapshot
from harness.runners.determinism import records
from harness.runners import runner
from harness import testing

TINY = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class TestEnginesCarryNoState(testing.TestCase):

    def test_a_later_cloud_starts_empty(self):
        with cloud_mod.Cloud(test_id=self.id() + '.first') as first:
            # One cloud at a time: a second one while the first is alive
            # is refused with our error, and the first runs on.
            refused = cloud_mod.Cloud(test_id=self.id() + '.refused')
            exc = self.assertRaises(errors.HarnessError, refused.setUp)
            self.assertIn(self.id() + '.first is alive', str(exc))
            first.start_compute('host1')
            first.create_flavor('tiny', vcpus=1, ram=512, disk=1)
            first.servers.boot('vm1', 'tiny')
            self.assertEqual({'vm1': {'host1': TINY}},
                             first.snapshot().allocations)
        with cloud_mod.Cloud(test_id=self.id() + '.second') as second:
            snap = second.snapshot()
            # No provider, consumer, server or migration of the first.
            self.assertEqual({}, snap.providers)
            self.assertEqual({}, snap.allocations)
            self.assertEqual([], second.api.get_servers())
            flavors = [f['name'] for f in second.api.get_flavors()]
            self.assertNotIn('tiny', flavors)
            second.start_compute('host2')
            self.assertEqual(['host2'], second.snapshot().compute_nodes())


class TestSnapshotRereads(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.create_flavor('tiny', vcpus=1, ram=512, disk=1)

    def test_nothing_written_nothing_read(self):
        self.cloud.servers.boot('vm1', 'tiny')
        first = self.cloud.snapshot()
        reads = self.cloud.reader.reads
        again = self.cloud.snapshot()
        self.assertEqual(reads, self.cloud.reader.reads)
        self.assertEqual(first, again)
        self.assertEqual({'vm1': {'host1': TINY}}, again.allocations)

    def test_an_operation_is_read(self):
        self.cloud.servers.boot('vm1', 'tiny')
        self.assertEqual({'vm1': {'host1': TINY}},
                         self.cloud.snapshot().allocations)
        self.cloud.servers.delete('vm1')
        self.assertEqual({}, self.cloud.snapshot().allocations)

    def test_a_write_through_placement_alone_is_read(self):
        before = self.cloud.snapshot()
        self.assertEqual(['host1'], sorted(before.providers))
        # A provider Nova knows nothing of, made through Placement's API.
        resp = self.cloud.placement.api.post(
            '/resource_providers', {'name': 'outsider'}, version='1.20')
        self.assertEqual(200, resp.status)
        self.assertEqual(['host1', 'outsider'],
                         sorted(self.cloud.snapshot().providers))


class TestNovaRecordsFromTheDatabase(testing.TestCase):
    """The snapshot reads Placement, servers and migrations from databases.

    They must be what the APIs list (Placement's providers with their
    inventories, usages and allocations; Nova's GET /servers/detail and GET
    /os-migrations, as an admin): checked at rest after each kind of step
    the scenarios take, including a boot the scheduler refused (its
    server lives in cell0, in ERROR).
    """

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(cloud_mod.Cloud(test_id=self.id()))
        self.cloud.start_compute('host1')
        self.cloud.start_compute('host2')
        self.cloud.create_flavor('tiny', vcpus=1, ram=512, disk=1)
        self.cloud.create_flavor('small', vcpus=1, ram=1024, disk=1)
        # Twice the memory of a host (8192 MB), within the quota: the
        # scheduler finds no valid host.
        self.cloud.create_flavor('huge', vcpus=1, ram=16384, disk=1)

    def assertSameAsTheApi(self):
        reader = self.cloud.reader
        placement = snapshot.placement_records(reader.placement_get)
        self.assertEqual(placement, reader.read_placement_records())
        # Every compute node's provider has traits (its driver's
        # capabilities), so this compares more than empty maps.
        traits = snapshot.provider_traits(reader.placement_get,
                                          placement['resource_providers'])
        self.assertEqual(
            [], [rp['name'] for rp in placement['resource_providers']
                 if rp['parent_provider_uuid'] is None
                 and rp['uuid'] not in traits])
        self.assertEqual(traits, reader.read_provider_traits())
        from_db = reader.read_nova_records()
        from_api = snapshot.nova_records(reader.nova_get)
        for key in ('servers', 'migrations'):
            self.assertEqual(
                sorted(from_api[key], key=lambda r: str(r['id'])),
                sorted(from_db[key], key=lambda r: str(r['id'])), key)
        return from_db

    def test_same_as_the_api_through_moves(self):
        self.assertEqual({'servers': [], 'migrations': []},
                         self.assertSameAsTheApi())
        servers = self.cloud.servers
        servers.boot('vm1', 'tiny', host='host1')
        servers.boot('vm2', 'tiny', host='host2')
        self.assertSameAsTheApi()
        servers.resize('vm1', 'small')
        records = self.assertSameAsTheApi()
        self.assertEqual(['VERIFY_RESIZE', 'ACTIVE'],
                         [r['status'] for r in sorted(
                             records['servers'], key=lambda r: r['name'])])
        servers.confirm('vm1')
        servers.migrate('vm2')
        servers.revert('vm2')
        records = self.assertSameAsTheApi()
        self.assertEqual(['confirmed', 'reverted'],
                         [m['status'] for m in sorted(
                             records['migrations'], key=lambda m: m['id'])])
        servers.delete('vm1')
        self.assertEqual(['vm2'], [r['name'] for r in
                                   self.assertSameAsTheApi()['servers']])

    def test_same_as_the_api_for_nested_providers_and_custom_classes(self):
        # What Nova's fake hosts never make: a child provider with
        # inventory of a custom class and an allocation against it, made
        # through Placement's API.
        api = self.cloud.placement.api
        host1 = self.cloud.snapshot().provider('host1')
        self.assertEqual(201, api.put('/resource_classes/CUSTOM_GADGET',
                                      None, version='1.7').status)
        child = api.post('/resource_providers', {
            'name': 'host1_gadgets', 'parent_provider_uuid': host1.uuid},
            version='1.20').body
        self.assertEqual(200, api.put(
            '/resource_providers/%s/inventories' % child['uuid'], {
                'resource_provider_generation': child['generation'],
                'inventories': {'CUSTOM_GADGET': {
                    'total': 4, 'allocation_ratio': 1.5}}},
            version='1.20').status)
        consumer = '6a2c5a8e-5a0e-4c52-9d3b-7a4e3c1f0b11'
        self.assertEqual(204, api.put('/allocations/%s' % consumer, {
            'allocations': {child['uuid']: {
                'resources': {'CUSTOM_GADGET': 3}}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None}, version='1.28').status)
        self.assertSameAsTheApi()
        snap = self.cloud.snapshot()
        gadgets = snap.provider('host1_gadgets')
        self.assertEqual(('host1', 'host1'), (gadgets.parent, gadgets.root))
        self.assertEqual({'CUSTOM_GADGET': 3}, gadgets.usages)
        self.assertEqual({consumer: {'host1_gadgets': {'CUSTOM_GADGET': 3}}},
                         snap.allocations)

    def test_same_as_the_api_for_a_refused_boot(self):
        self.assertRaises(errors.OperationFailed,
                          self.cloud.servers.boot, 'vm1', 'huge')
        records = self.assertSameAsTheApi()
        self.assertEqual([('vm1', 'ERROR', None)],
                         [(r['name'], r['status'],
                           r['OS-EXT-SRV-ATTR:host'])
                          for r in records['servers']])


SCENARIOS = os.path.join(os.path.dirname(__file__), 'scenarios')


def scenario_named(filename, name):
    for candidate in scenario_mod.load(os.path.join(SCENARIOS, filename)):
        if candidate.name == name:
            return candidate
    raise AssertionError('no scenario %r in %s' % (name, filename))

    def assertSameFailuresAsTheApi(self):
        """Faults and instance actions: the database read is the API's.

        ``snapshot.failure_records`` asks the API (as an admin, at the
        latest microversion: events' details since 2.84).
        """
        reader = self.cloud.reader
        faults, actions = reader.read_failure_records()
        names = self.cloud.servers.names()
        live = sorted(s['id'] for s in reader.read_nova_records()['servers'])
        api_faults, api_actions = snapshot.failure_records(
            reader.nova_get, live)
        erred = {f['instance_uuid'] for f in api_faults}
        # The API names no fault's host; it shows faults in ERROR only.
        self.assertEqual(
            api_faults, [dict(f, host=None) for f in faults
                         if f['instance_uuid'] in erred])
        self.assertEqual(
            api_actions, [a for a in actions if a['instance_uuid'] in live])
        return faults, actions, names

    def test_faults_and_actions_same_as_the_api(self):
        self.assertEqual(([], [], {}), self.assertSameFailuresAsTheApi())
        self.assertRaises(errors.OperationFailed,
                          self.cloud.servers.boot, 'vm0', 'huge')
        faults, actions, names = self.assertSameFailuresAsTheApi()
        # Nova's message for NoValidHost, its code (500: a traceback is
        # kept) and the class the traceback ends with.
        self.assertEqual(
            [('vm0', 500, 'No valid host was found. ',
              'nova.exception.NoValidHost')],
            [(names[f['instance_uuid']], f['code'], f['message'],
              f['exception']) for f in faults])
        self.assertEqual(
            [('create', ['conductor_schedule_and_build_instances'])],
            [(a['action'], [e['event'] for e in a['events']])
             for a in actions])
        self.cloud.servers.boot('vm1', 'tiny', host='host1')
        self.assertSameFailuresAsTheApi()
        self.cloud.servers.resize('vm1', 'small')
        self.assertSameFailuresAsTheApi()
        self.cloud.servers.confirm('vm1')
        faults, actions, names = self.assertSameFailuresAsTheApi()
        self.assertEqual(
            ['create', 'create', 'resize', 'confirmResize'],
            [a['action'] for a in actions])
        self.cloud.servers.delete('vm0')
        self.cloud.servers.delete('vm1')
        faults, actions, names = self.assertSameFailuresAsTheApi()
        self.assertEqual([], faults)


# Two pairs of scenarios of one shape each (same hosts and flavors, other
# steps): on fake hosts, and on the developer profile's libvirt hosts.
FAKE_PAIR = (('resize_confirm.yaml', 'resize across hosts then confirm'),
             ('resize_confirm.yaml', 'resize across hosts then revert'))
PINNED_PAIR = (
    ('resize_revert.yaml',
     'pinned revert across developer hosts with periodics between'),
    ('resize_revert.yaml',
     'pinned revert with a source periodic before resize_instance'))


class TestCloudPool(testing.TestCase):
    """A kept cloud runs a scenario as its first run (and a new cloud) do.

    What a run leaves behind (servers, migrations, allocations, guests on
    the hypervisors, the clock, the race recording) must be gone when the
    next run of the shape starts: anything the reset missed shows up as a
    difference in the texts harness determinism compares between runs
    (every step's snapshot, provider generations, server and migration
    states, and the race points passed with Nova's write count at each).
    """

    def setUp(self):
        super().setUp()
        self.pool = self.useFixture(reuse.CloudPool())

    def run_pooled(self, scenario):
        return runner.run(scenario, test_id=self.id(), pool=self.pool,
                          checks=[invariants.Checker()])

    def assertReusedRunsAsFirst(self, pair):
        first, other = [scenario_named(*which) for which in pair]
        self.assertEqual(reuse.shape(first), reuse.shape(other))
        before = self.run_pooled(first)
        self.run_pooled(other)
        again = self.run_pooled(first)
        # One cloud stood up, kept for the two runs after the first.
        self.assertEqual((1, 2), (self.pool.made, self.pool.reused))
        self.assertEqual({}, self.pool.given_up)
        self.assertEqual(records.timeline_text([before]),
                         records.timeline_text([again]))
        self.assertEqual(records.points_text([before]),
                         records.points_text([again]))
        return first, again

    def assertSameStatesAndPoints(self, fresh, kept):
        """A run on a new cloud and one on a kept cloud agree.

        The same steps, states and race points, with Nova's write count
        at each (settling a kept cloud writes nothing: its computes keep
        the trackers their start gave them).
        """
        self.assertEqual(records.timeline_text([fresh]),
                         records.timeline_text([kept]))
        self.assertEqual(records.points_text([fresh]),
                         records.points_text([kept]))

    def test_fake_hosts_reused_run_as_the_first(self):
        self.assertReusedRunsAsFirst(FAKE_PAIR)

    def test_libvirt_hosts_reused_run_as_the_first_and_a_new_cloud(self):
        scenario, again = self.assertReusedRunsAsFirst(PINNED_PAIR)
        # The run on a cloud of its own; one cloud alive at a time.
        self.pool.discard()
        fresh = runner.run(scenario, test_id=self.id() + '.fresh',
                           checks=[invariants.Checker()])
        self.assertSameStatesAndPoints(fresh, again)

    def test_kept_and_new_clouds_start_with_the_initial_ratio(self):
        # A compute node record is made with [DEFAULT]
        # initial_cpu_allocation_ratio (Nova's default 4.0) and takes
        # cpu_allocation_ratio only at its compute's next pass
        # (ResourceTracker._copy_resources, initial=True at the record's
        # creation), and the scheduler's NUMA limits read the record: a
        # kept cloud must not have run that pass where a new one has not.
        scenario = scenario_mod.parse(scenario_mod.safe_load("""
name: a host whose CPU allocation ratio is set
config: {DEFAULT: {cpu_allocation_ratio: 2.0}}
hosts: {h1: {profile: dev-1s-8c-smt2}}
steps:
  - run_periodic: update_available_resource
"""), 'inline')

        def record_ratio(cloud):
            ctxt = nova_context.get_admin_context()
            with nova_context.target_cell(
                    ctxt, cloud.env.cells.cell_mappings['cell1']) as cctxt:
                record = objects.ComputeNode.get_by_host_and_nodename(
                    cctxt, 'h1', 'h1')
            tracked = cloud.computes['h1'].manager.rt.compute_nodes['h1']
            return record.cpu_allocation_ratio, tracked.cpu_allocation_ratio

        ratios = []
        for _ in range(2):
            with self.pool.cloud(scenario, self.id()) as cloud:
                ratios.append(record_ratio(cloud))
        self.assertEqual((1, 1), (self.pool.made, self.pool.reused))
        self.pool.discard()
        with contextlib.ExitStack() as stack:
            cloud = reuse.stand_up(stack, scenario, self.id() + '.fresh')
            ratios.append(record_ratio(cloud))
            cloud.run_periodics()
            after_a_pass = record_ratio(cloud)
        self.assertEqual([(4.0, 4.0)] * 3, ratios)
        self.assertEqual((2.0, 2.0), after_a_pass)

    def test_a_kept_cloud_starts_empty(self):
        # The first run ends with its guest still running and a periodic
        # having moved the clock; the next run of the shape sees none of it.
        scenario = scenario_mod.parse(scenario_mod.safe_load("""
name: a guest left running
hosts: {src: {profile: dev-1s-8c-smt2}}
flavors:
  pin2: {vcpus: 2, ram: 512, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
steps:
  - boot: {server: vm1, flavor: pin2}
    expect: {allocations: {vm1: {src: pin2}}, pinned_cpus: {src: 2}}
  - advance_clock: 60
"""), 'inline')
        # Twice: the second run is the first on a copy of the checkpoint's
        # resource tracker, and must leave that tracker as it found it.
        self.run_pooled(scenario)
        self.run_pooled(scenario)
        with self.pool.cloud(scenario, self.id()) as cloud:
            self.assertEqual(2, self.pool.reused)
            snap = cloud.snapshot()
            self.assertEqual({}, snap.allocations)
            self.assertEqual({}, snap.servers)
            self.assertEqual({}, snap.provider('src').usages)
            self.assertEqual([], cloud.api.get_servers())
            self.assertEqual(
                [], cloud.libvirt_hosts().connection('src').listAllDomains())
            self.assertEqual(0.0, cloud.clock.now)
            self.assertEqual([], cloud.race.recording)
            # The compute's tracker is a copy of the checkpoint's, which
            # the runs' boots and periodics must not have reached.
            tracker = cloud.computes['src'].manager.rt
            self.assertEqual(set(), tracker.tracked_instances)
            self.assertEqual({}, tracker.tracked_migrations)
            [node] = tracker.compute_nodes.values()
            topology = objects.NUMATopology.obj_from_db_obj(
                node.numa_topology)
            self.assertEqual([set()] * len(topology.cells),
                             [cell.pinned_cpus for cell in topology.cells])

    def assertKeptWithComputesAnew(self, filename, name):
        """Three runs of a scenario that stops or restarts computes.

        After each run the pool starts those computes anew and keeps the
        cloud: the later runs give the first run's timeline and race
        points, Nova's write counts at each point included.
        """
        scenario = scenario_named(filename, name)
        runs = [self.run_pooled(scenario) for _ in range(3)]
        self.assertEqual((1, 2, 3), (self.pool.made, self.pool.reused,
                                     self.pool.replaced))
        self.assertEqual({}, self.pool.given_up)
        for later in runs[1:]:
            self.assertEqual(records.timeline_text(runs[:1]),
                             records.timeline_text([later]))
            self.assertEqual(records.points_text(runs[:1]),
                             records.points_text([later]))
        with self.pool.cloud(scenario, self.id()) as cloud:
            snap = cloud.snapshot()
            for host, service in sorted(cloud.computes.items()):
                # Each tracker is the running compute's, and its report
                # client's cache holds what Placement's database holds.
                tracker = service.manager.rt
                self.assertIs(service.manager.driver, tracker.driver)
                self.assertIs(service.manager.reportclient,
                              tracker.reportclient)
                cache = service.manager.reportclient._provider_tree
                for node in tracker.compute_nodes.values():
                    self.assertEqual(
                        snap.providers[node.hypervisor_hostname].generation,
                        cache.data(node.uuid).generation)

    def test_a_cloud_whose_compute_was_stopped_is_kept(self):
        self.assertKeptWithComputesAnew(
            'stopped_compute.yaml',
            'delete while the compute is stopped, finished when it starts')

    def test_a_cloud_whose_compute_service_was_deleted_is_kept(self):
        # The compute's service record deleted, then a new one made by its
        # start: the databases put back hold the first one again.
        self.assertKeptWithComputesAnew(
            'services.yaml',
            'a compute started again after its service was deleted')

    def test_a_libvirt_host_restarted_with_other_config_is_kept(self):
        # Started anew, the host has its profile's cpu_dedicated_set
        # again, not the one the run's restart gave it.
        self.assertKeptWithComputesAnew(
            'restart.yaml',
            'restart with the guests gone and a changed cpu_dedicated_set')

    def test_a_cloud_whose_libvirt_compute_was_killed_is_kept(self):
        self.assertKeptWithComputesAnew(
            'dying_compute.yaml',
            'a pinned build dies on a libvirt host and restarts')

    def test_computes_start_anew_a_bounded_number_of_times(self):
        # Each start anew keeps the old services alive until the cloud
        # goes: past the bound, the cloud is given up and a new one made.
        self.useFixture(fixtures.MonkeyPatch(
            'harness.cloud.reuse.STARTS_ANEW_PER_CLOUD', 1))
        scenario = scenario_named(
            'stopped_compute.yaml',
            'delete while the compute is stopped, finished when it starts')
        for _ in range(3):
            self.run_pooled(scenario)
        self.assertEqual((2, 1, 2), (self.pool.made, self.pool.reused,
                                     self.pool.replaced))
        self.assertEqual({reuse.COMPUTES_CHANGED: 1}, self.pool.given_up)

    def test_a_fake_host_restarted_with_config_is_not_kept(self):
        # Its config of its own (a restart's config:) is not what the
        # cloud was stood up with: each run gets a new cloud.
        scenario = scenario_named(
            'restart.yaml',
            'cpu_allocation_ratio lowered then raised on restart')
        self.run_pooled(scenario)
        self.run_pooled(scenario)
        self.assertEqual((2, 0, 0), (self.pool.made, self.pool.reused,
                                     self.pool.replaced))
        self.assertEqual({reuse.COMPUTES_CHANGED: 2}, self.pool.given_up)

    def test_a_failed_run_is_not_kept(self):
        first, _ = [scenario_named(*which) for which in FAKE_PAIR]
        wrong = scenario_mod.parse(scenario_mod.safe_load("""
name: an expectation that does not hold
hosts: {src: {driver: fake}, dst: {driver: fake}}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: src}
    expect: {allocations: {vm1: {dst: small}}}
"""), 'inline')
        self.assertEqual(reuse.shape(first), reuse.shape(wrong))
        self.assertRaises(errors.ScenarioFailed, self.run_pooled, wrong)
        self.run_pooled(first)
        self.assertEqual((2, 0), (self.pool.made, self.pool.reused))
        self.assertEqual({reuse.RAISED: 1}, self.pool.given_up)

    def test_a_run_with_fixtures_gets_a_cloud_of_its_own(self):
        first, _ = [scenario_named(*which) for which in FAKE_PAIR]
        runner.run(first, test_id=self.id(), pool=self.pool,
                   fixtures=[fixtures.EnvironmentVariable('HARNESS_X')])
        self.assertEqual((0, 0), (self.pool.made, self.pool.reused))

    def test_a_bug_put_back_is_kept_with_its_cloud(self):
        # LP#1944759 put back: the periodic on the source drops the
        # outbound migration's pinned CPUs and confirm fails. On a kept
        # cloud (after a run that failed like it) it shows as it does on a
        # cloud of its own; once the pool moves on to a run without the
        # bug, the bug is gone from Nova again.
        bug = bugs.get('1944759')
        scenario = scenario_mod.load(bug.scenario_path)[0]

        def run_with_bug(pool):
            return runner.run(scenario, test_id=self.id(), pool=pool,
                              fixtures=[bug.reintroduce()], keep_going=True,
                              checks=[invariants.Checker()])

        fresh = run_with_bug(None)
        self.assertIn(('pinned_cpus', 'src'), [
            (p.check, p.subject) for p in fresh.failed[0].problems])
        self.assertNotEqual(reuse.shape(scenario),
                            reuse.shape(scenario, None, [bug.reintroduce()]))
        run_with_bug(self.pool)
        again = run_with_bug(self.pool)
        self.assertEqual((1, 1), (self.pool.made, self.pool.reused))
        self.assertSameStatesAndPoints(fresh, again)
        without = self.run_pooled(scenario)
        self.assertEqual([], without.failed)
        self.assertEqual((2, 1), (self.pool.made, self.pool.reused))

    def test_shape_is_hosts_and_config(self):
        first, other = [scenario_named(*which) for which in FAKE_PAIR]
        self.assertEqual(reuse.shape(first), reuse.shape(other))
        # Flavors and images are made by each run, on the cloud put back.
        bigger = copy.deepcopy(first)
        bigger.flavors['large'].ram = 2048
        bigger.images = {'numa2': {'hw_numa_nodes': '2'}}
        self.assertEqual(reuse.shape(first), reuse.shape(bigger))
        configured = copy.deepcopy(first)
        configured.config = {'DEFAULT': {'resize_confirm_window': 1}}
        renamed = copy.deepcopy(first)
        renamed.hosts['dst'].name = 'dst2'
        for changed in (configured, renamed):
            self.assertNotEqual(reuse.shape(first), reuse.shape(changed))
        self.assertNotEqual(reuse.shape(first),
                            reuse.shape(first, {'timeout': 5.0}))

    def test_each_run_makes_its_own_flavors_and_images(self):
        # Two runs of one shape whose flavor "f" and image differ: the
        # second boots with its own 1024 MB flavor and sees only its own
        # flavor and image, none of the first run's.
        template = """
name: %(name)s
hosts: {h1: {driver: fake}}
flavors:
  f: {vcpus: 1, ram: %(ram)d, disk: 1}
  %(extra)s: {vcpus: 1, ram: 256, disk: 1}
images:
  %(image)s: {properties: {hw_cpu_policy: shared}}
steps:
  - boot: {server: vm1, flavor: f, host: h1, image: %(image)s}
"""
        runs = [scenario_mod.parse(scenario_mod.safe_load(template % run),
                                   run['name'])
                for run in ({'name': 'first', 'ram': 512, 'extra': 'tiny',
                             'image': 'one'},
                            {'name': 'second', 'ram': 1024,
                             'extra': 'mini', 'image': 'two'})]
        self.assertEqual(reuse.shape(runs[0]), reuse.shape(runs[1]))
        first = self.run_pooled(runs[0])
        self.assertEqual(
            512, list(first)[-1].snapshot.provider('h1').usages['MEMORY_MB'])
        with self.pool.cloud(runs[1], self.id()) as cloud:
            self.assertEqual((1, 1), (self.pool.made, self.pool.reused))
            names = [f['name'] for f in cloud.api.get_flavors()]
            self.assertIn('mini', names)
            self.assertNotIn('tiny', names)
            self.assertEqual(1024, cloud.api.get_flavor('f')['ram'])
            self.assertEqual(['two'], sorted(cloud.images))
        second = self.run_pooled(runs[1])
        self.assertEqual(
            1024, list(second)[-1].snapshot.provider('h1').usages['MEMORY_MB'])


class TestKeptBetweenTests(testing.TestCase):
    """Scenario tests share the process's kept cloud (``shared_pool``).

    Each case runs scenario tests inside itself, as stestr runs them one
    after another in a worker, and reads their results.
    """

    def setUp(self):
        super().setUp()
        # What the inner tests leave kept, this test (not a scenario test)
        # gives up before its own leak check (harness.testing.TestCase).
        self.assertTrue(reuse.keeping(), 'HARNESS_KEEP_CLOUDS is 0')

    def run_inner(self, case, *names):
        result = testtools.TestResult()
        for name in names:
            case(name).run(result)
        return result

    def test_scenario_tests_of_one_shape_share_a_cloud(self):
        before = _counts()
        result = self.run_inner(_Inner, 'confirm', 'revert')
        self.assertEqual([], result.errors + result.failures)
        self.assertEqual(2, result.testsRun)
        made, reused = [now - then for now, then in zip(_counts(), before)]
        # The first run stands the cloud up; the first test's run without
        # checks and both runs of the second test are on it.
        self.assertEqual((1, 3), (made, reused))

    def test_one_per_file_compares_only_the_test_standing_for_its_file(self):
        # A run without checks is one more run on the kept cloud.
        self.useFixture(fixtures.EnvironmentVariable(
            testing.COMPARE_ENV, 'one-per-file'))
        before = _counts()
        result = self.run_inner(_Inner, 'confirm', 'revert_not_first')
        self.assertEqual([], result.errors + result.failures)
        made, reused = [now - then for now, then in zip(_counts(), before)]
        # confirm: a run with checks and one without; revert: one.
        self.assertEqual((1, 2), (made, reused))

    def test_a_test_that_is_not_a_scenario_test_gets_no_kept_cloud(self):
        result = self.run_inner(_Inner, 'confirm')
        self.assertEqual([], result.errors + result.failures)
        self.assertIsNotNone(reuse.shared_pool()._cloud)
        result = self.run_inner(_Plain, 'nothing')
        self.assertEqual([], result.errors + result.failures)
        self.assertIsNone(reuse.shared_pool()._cloud)

    def test_failing_on_a_kept_cloud_and_passing_on_a_new_one_fails(self):
        # A kept cloud whose tracker copy is not what the checkpoint's
        # databases say (the proof compares the databases only): the
        # scenario fails there, passes on a new cloud, and the test says
        # the kept cloud is to blame.
        result = self.run_inner(_Inner, 'confirm', 'spoil',
                                'revert')
        self.assertEqual([], result.errors)
        [(case, text)] = result.failures
        self.assertEqual('revert', case._testMethodName)
        self.assertIn('failed on a kept cloud and passed on a new one', text)
        self.assertIn('failure on the kept cloud', text)

    def test_a_database_not_back_at_its_checkpoint_is_refused(self):
        result = self.run_inner(_Inner, 'confirm')
        self.assertEqual([], result.errors + result.failures)
        given_up = reuse.shared_pool().given_up[reuse.NOT_PUT_BACK]
        # A restore that copies nothing back: the run's servers, migrations
        # and allocations are still in the databases.
        with fixtures.MonkeyPatch(
                'harness.cloud.checkpoint.Checkpoint.restore',
                lambda checkpoint, cloud: None):
            result = self.run_inner(_Inner, 'revert')
        [(case, text)] = result.errors
        self.assertIn('is not back at its checkpoint', text)
        self.assertIsNone(reuse.shared_pool()._cloud)
        self.assertEqual(given_up + 1,
                         reuse.shared_pool().given_up[reuse.NOT_PUT_BACK])


def _counts():
    pool = reuse.shared_pool()
    return pool.made, pool.reused


class _Inner(testing.ScenarioTestCase):
    """Scenario tests of one shape, and a way to spoil their kept cloud.

    No ``test_`` methods: the cases above run them, not the loader.
    """

    def confirm(self):
        self.run_scenario(scenario_named(*FAKE_PAIR[0]))

    def revert(self):
        self.run_scenario(scenario_named(*FAKE_PAIR[1]))

    def revert_not_first(self):
        self.run_scenario(scenario_named(*FAKE_PAIR[1]),
                          stands_for_file=False)

    def spoil(self):
        # The copy of src's tracker the next run gets counts 1 GiB more.
        checkpoint = reuse.shared_pool()._checkpoint
        _shared, state = checkpoint.trackers['src']
        [node] = state['compute_nodes'].values()
        node.memory_mb_used += 1024


class _Plain(testing.TestCase):

    def nothing(self):
        pass
