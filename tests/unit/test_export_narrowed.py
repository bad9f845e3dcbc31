"""Exported injections narrowed to a host, and to a server by its migration.

The harness fires an injection with ``at_host`` only when the point is
passed on that host (``race.matches``: the passage's host, a compute's
name; a controller passes its points on no host), and one with
``server`` when the point concerns that server: a save of a migration's
status concerns the migration's instance. The exported ``_arm`` and
``_fire`` do the same with the compute manager (or resource tracker)
that passes the point, and the instances and migrations it passes.
"""

from nova import objects
from oslo_utils.fixture import uuidsentinel as uuids
import testtools

from tests.unit import test_export
from tests.unit import test_export_fired

# The finding's injection (findings/svcdelete_dest_before_its_claim.yaml):
# a service's delete at a record's change, narrowed to a host and a server.
SERVICE_DELETE = (
    '- boot: {server: vm1, flavor: small, host: src}\n'
    '- inject: {before: migration.status=pre-migrating, at_host: dst,\n'
    '           server: vm1, do: {delete_service: dest}, refused: true}\n'
    '- resize: {server: vm1, flavor: large}')


class NarrowedTranslationTest(test_export.ExportTestCase):

    def test_a_service_delete_at_a_record_change_on_one_host(self):
        # Refused before as "field 'at_host'", and a service's delete at
        # a record's change as "do 'delete_service' at a record's change".
        source = self.export(SERVICE_DELETE)
        self.assertIn("        self._inject_request('before', "
                      "'migration.status=pre-migrating',\n"
                      "                             'delete_service', "
                      "'dest', server='vm1', at_host='dst')\n",
                      source)
        self.assertIn('    def _inject_request(self, when, point, action, '
                      'name, server=None,\n'
                      '                        at_host=None):\n', source)
        self.assertIn('        self._arm(when, point, send, server=server, '
                      'host=at_host)\n', source)
        # Passed as the record is saved, by the compute whose code
        # saves it.
        self.assertIn('            manager = self._saving_manager()\n',
                      source)
        # The API's answer checked by the step that sent it, even if
        # its wait fails.
        method = source[source.index('    def test_the_scenario'):]
        self.assertIn("                self.servers['vm1'], "
                      "self.flavors['large'])\n"
                      '        finally:\n'
                      '            self.assertServiceDeletesRefused()\n',
                      method)

    def test_a_periodic_on_one_host(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {after: migration.status=pre-migrating, at_host: dst,'
            '\n           run: update_available_resource, on: source}\n'
            '- inject: {before: tracker.drop_move_claim_at_dest, '
            'at_host: dst,\n'
            '           run: update_available_resource, on: dst}\n'
            '- resize: {server: vm1, flavor: large}\n'
            '- revert: vm1')
        self.assertIn("        self._inject('after', "
                      "'migration.status=pre-migrating',\n"
                      "                     'update_available_resource', "
                      "'source', at_host='dst')\n", source)
        self.assertIn("        self._inject('before', "
                      "'tracker.drop_move_claim_at_dest',\n"
                      "                     'update_available_resource', "
                      "'dst', at_host='dst')\n", source)
        self.assertIn('    def _inject(self, when, point, task, on, '
                      'server=None, at_host=None):\n', source)
        self.assertIn('        self._arm(when, point, run, server=server, '
                      'host=at_host)\n', source)

    def test_a_death_on_one_host(self):
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: prep_resize, stop: dst, at_host: dst}\n'
            '- migrate: {server: vm1, host: dst}\n'
            '  error: did not reach its resting state\n'
            '  expect: {servers: {vm1: {status: RESIZE}}}')
        self.assertIn("        self._inject_death('before', 'prep_resize', "
                      "'dst', at_host='dst')\n", source)
        self.assertIn('    def _inject_death(self, when, point, host, '
                      'at_host=None):\n', source)
        self.assertIn('        self._arm(when, point, die, host=at_host)\n',
                      source)

    def test_a_check_on_one_host_for_one_server(self):
        # Refused before as "field 'server'" and "field 'at_host'".
        steps = ('- boot: {server: vm1, flavor: small, host: src}\n'
                 '- resize: {server: vm1, flavor: large}\n'
                 '- inject: {before: tracker.drop_move_claim_at_dest, '
                 'check: {usages: {src: small}}, server: vm1, '
                 'at_host: dst}\n'
                 '- revert: vm1')
        self.assertIn("self._inject_check(3, 'before', "
                      "'tracker.drop_move_claim_at_dest', check, "
                      "server='vm1', at_host='dst')", self.body(steps))
        source = self.export(steps)
        self.assertIn('    def _inject_check(self, number, when, point, '
                      'check, server=None,\n'
                      '                      at_host=None):\n', source)
        self.assertIn('        self._arm(when, point, run, server=server, '
                      'host=at_host)\n', source)

    def test_a_fault_armed_at_a_point_on_one_host(self):
        # Refused before as "at: host 'dst' (a pass on one host)".
        source = self.export(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            "- fault: {placement: 'PUT /allocations/*', "
            'at: {before: finish_resize, host: dst}}\n'
            '- resize: {server: vm1, flavor: large}')
        self.assertIn("        self._arm('before', 'finish_resize',\n"
                      "                  lambda manager, passed: "
                      "self._placement_fault('PUT /allocations/*', 409, 1),"
                      "\n                  host='dst')\n", source)

    def test_a_request_other_than_a_delete_at_a_record_change(self):
        # Its casts would run while the saving thread may hold the
        # tracker's lock.
        self.assertRefused(
            '- boot: {server: vm1, flavor: small, host: src}\n'
            '- inject: {before: migration.status=pre-migrating, '
            'at_host: dst,\n'
            '           do: {live_migrate: vm1}}\n'
            '- resize: {server: vm1, flavor: large}',
            'step 2 (inject)', "do 'live_migrate' at a record's change")


class _Passing(object):
    """What passes a point: a compute's manager (or tracker) on ``host``."""

    def __init__(self, host):
        self.host = host


class NarrowedFiringTest(test_export.ExportTestCase):
    """The exported ``_arm`` and ``_fire``, run on what a point passes."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        helpers = test_export_fired._helpers(
            self.export(SERVICE_DELETE), ('_arm', '_fire'))
        for helper in helpers.values():
            # The exported module's import of Nova's objects.
            helper.__globals__['objects'] = objects

        class Exported(testtools.TestCase):
            _arm = helpers['_arm']
            _fire = helpers['_fire']

            def test(self):
                pass

        self.case = Exported('test')
        self.case._injections = {}
        # Wrapped already: _arm only arms.
        self.case._wrapped = {'finish_resize',
                              'migration.status=pre-migrating'}
        self.case.servers = {'vm1': {'id': uuids.vm1},
                             'vm2': {'id': uuids.vm2}}
        self.fired = []

    def arm(self, point, **narrowed):
        self.case._arm('before', point, lambda manager, passed:
                       self.fired.append((manager.host if manager else None,
                                          passed)), **narrowed)

    def test_a_host_s_pass_fires_it_another_s_does_not(self):
        self.arm('finish_resize', host='dst')
        instance = objects.Instance(uuid=uuids.vm1)
        self.case._fire('before', 'finish_resize', _Passing('src'),
                        [instance])
        self.assertEqual([], self.fired)
        # A controller (no compute's manager) passes on no host.
        self.case._fire('before', 'finish_resize', None, [instance])
        self.assertEqual([], self.fired)
        self.case._fire('before', 'finish_resize', _Passing('dst'),
                        [instance])
        self.assertEqual([('dst', [instance])], self.fired)
        self.assertEqual({}, self.case._injections)

    def test_a_migration_s_save_passes_its_server(self):
        # A save of a migration's status passes the migration alone.
        point = 'migration.status=pre-migrating'
        self.arm(point, server='vm1', host='dst')
        other = objects.Migration(instance_uuid=uuids.vm2)
        self.case._fire('before', point, _Passing('dst'), [other])
        self.assertEqual([], self.fired)
        migration = objects.Migration(instance_uuid=uuids.vm1)
        self.case._fire('before', point, _Passing('src'), [migration])
        self.assertEqual([], self.fired)
        self.case._fire('before', point, _Passing('dst'), [migration])
        self.assertEqual([('dst', [migration])], self.fired)

    def test_not_narrowed_any_pass_fires_it(self):
        self.arm('finish_resize')
        self.case._fire('before', 'finish_resize', None, [])
        self.assertEqual([(None, [])], self.fired)
