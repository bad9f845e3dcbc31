"""The scenario loader: bad input gets one ScenarioError naming the file,
the step and the field, before any service starts; every shipped scenario
file loads and cleans up after itself.

No Nova service runs here: each case writes a YAML document into a
temporary directory and loads it.
"""

import glob
import os

import fixtures

from harness.core import errors
from harness.core import scenario
from harness.core import steps
from harness import testing

SCENARIO_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                            'functional', 'scenarios')

# A small valid scenario the bad cases change one thing of.
HEAD = """\
name: a small scenario
hosts:
  host1: {driver: fake}
  host2: {driver: fake}
flavors:
  small: {vcpus: 1, ram: 512, disk: 1}
  large: {vcpus: 2, ram: 1024, disk: 2}
steps:
  - boot: {server: vm1, flavor: small, host: host1}
"""

# After HEAD: host1 goes down and vm1 is evacuated to host2, with an
# injection before ``%s`` running ``%s`` that overlaps from ``%s``.
EVACUATION = '''\
  - stop_compute: host1
  - advance_clock: 61
  - force_down: host1
  - inject: {before: %s, run: %s, on: dest, overlap: %s}
  - evacuate: {server: vm1, host: host2}
'''


class LoaderTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def write(self, text, name='bad.yaml'):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as out:
            out.write(text)
        return path

    def assertRefused(self, text, *fragments, step=None, field=None,
                      name='bad.yaml'):
        """Load ``text``: it must fail with one clear ScenarioError.

        The message names the file, ``step`` and ``field`` (if given) and
        holds each of ``fragments``.
        """
        path = self.write(text, name)
        exc = self.assertRaises(errors.ScenarioError, scenario.load, path)
        message = str(exc)
        self.assertIn(path, message)
        if step is not None:
            self.assertIn(', step %d,' % step, message)
        if field is not None:
            self.assertIn('field "%s"' % field, message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        # One line, no traceback from inside the loader.
        self.assertNotIn('Traceback', message)
        self.assertNotIn('\n', message)
        return message


class TestBadInput(LoaderTestCase):

    def test_yaml_syntax_error(self):
        message = self.assertRefused(
            HEAD + '  - delete: {server: vm1\n  - run_periodic: x\n',
            'not valid YAML')
        # The line the parser stopped at, as an editor counts lines.
        self.assertIn('(line 11, column', message)

    def test_bad_indentation(self):
        self.assertRefused(HEAD + '   - delete: vm1\n', 'not valid YAML',
                           '(line 10,')

    def test_unsafe_tag_is_refused_not_run(self):
        marker = os.path.join(self.dir, 'ran')
        text = HEAD.replace(
            'name: a small scenario',
            'name: !!python/object/apply:os.system ["touch %s"]' % marker)
        self.assertRefused(text, 'not valid YAML', '(line 1,',
                           'python/object/apply:os.system')
        self.assertFalse(os.path.exists(marker))

    def test_unsafe_tag_deep_in_a_step(self):
        text = HEAD + ('  - delete: !!python/object/new:os.system '
                       '["true"]\n')
        self.assertRefused(text, 'not valid YAML', '(line 10,',
                           'python/object/new:os.system')

    def test_unknown_step(self):
        # The message lists every kind in the step registry.
        self.assertRefused(HEAD + '  - teleport: vm1\n',
                           'unknown step or field',
                           'steps are: ' + ', '.join(steps.names()),
                           step=2, field='teleport')

    def test_two_operations_in_one_step(self):
        self.assertRefused(
            HEAD + '  - {confirm: vm1, revert: vm1}\n',
            'each step does exactly one of', 'confirm, revert',
            step=2, field='the step')

    def test_unknown_host(self):
        self.assertRefused(
            HEAD + '  - migrate: {server: vm1, host: host9}\n',
            "unknown host 'host9'", 'known: host1, host2',
            step=2, field='migrate.host')

    def test_unknown_host_in_expect(self):
        self.assertRefused(
            HEAD + '    expect: {usages: {host9: small}}\n',
            "unknown host 'host9'", step=1, field='expect.usages.host')

    def test_unknown_driver(self):
        self.assertRefused(
            HEAD.replace('host2: {driver: fake}', 'host2: {driver: xen}'),
            "unknown driver 'xen'", 'known: fake',
            field='hosts.host2.driver')

    def test_unknown_profile(self):
        self.assertRefused(
            HEAD.replace('host2: {driver: fake}',
                         'host2: {profile: dev-2s-99c}'),
            "unknown host profile 'dev-2s-99c'", 'dev-1s-8c-smt2',
            field='hosts.host2.profile')

    def test_missing_profile_file(self):
        self.assertRefused(
            HEAD.replace('host2: {driver: fake}',
                         'host2: {profile: ./no-such-host.yaml}'),
            'no such host profile file', field='hosts.host2.profile')

    def test_profile_and_driver_together(self):
        self.assertRefused(
            HEAD.replace('host2: {driver: fake}',
                         'host2: {driver: fake, profile: dev-1s-8c-smt2}'),
            'a profile (libvirt) or a driver, not both',
            field='hosts.host2')

    def test_unknown_flavor(self):
        self.assertRefused(
            HEAD + '  - resize: {server: vm1, flavor: huge}\n',
            "unknown flavor 'huge'", 'known: large, small',
            step=2, field='resize.flavor')

    def test_unknown_flavor_in_expect(self):
        # The message names the field and the flavor; its noun comes from
        # the field's last part (see the report on this wording).
        self.assertRefused(
            HEAD + '    expect: {allocations: {vm1: {host1: huge}}}\n',
            "'huge'", 'known: large, small',
            step=1, field='expect.allocations.vm1.host1')

    def test_unknown_consumer_in_expect(self):
        self.assertRefused(
            HEAD + '    expect: {allocations: {vm9: {host1: small}}}\n',
            "unknown consumer 'vm9'", 'servers so far: vm1',
            step=1, field='expect.allocations.vm9')

    def test_unknown_migration_consumer_in_expect(self):
        self.assertRefused(
            HEAD + '  - migrate: vm1\n'
            '    expect: {allocations: {migration(vm2): {host1: small}}}\n',
            "unknown consumer 'migration(vm2)'",
            step=2, field='expect.allocations.migration(vm2)')

    def test_unknown_resource_class_in_expect(self):
        self.assertRefused(
            HEAD + '    expect: {usages: {host1: {VCPUS: 1}}}\n',
            "unknown resource class 'VCPUS'",
            step=1, field='expect.usages.host1.VCPUS')

    def test_unknown_resource_class_in_extra_specs(self):
        self.assertRefused(
            HEAD.replace('small: {vcpus: 1, ram: 512, disk: 1}',
                         'small: {vcpus: 1, ram: 512, disk: 1, '
                         'extra_specs: {"resources:GPUS": 1}}'),
            "unknown resource class 'GPUS'",
            field='flavors.small.extra_specs.resources:GPUS')

    def test_wrong_type_in_a_flavor(self):
        self.assertRefused(
            HEAD.replace('vcpus: 1,', 'vcpus: "two",'),
            'expected a whole number, got a string',
            field='flavors.small.vcpus')

    def test_wrong_type_bool_is_not_a_number(self):
        self.assertRefused(
            HEAD.replace("ram: 512", "ram: true"),
            'expected a whole number, got bool', field='flavors.small.ram')

    def test_vcpus_below_one(self):
        self.assertRefused(
            HEAD.replace('vcpus: 1,', 'vcpus: 0,'),
            'must be at least 1, got 0', field='flavors.small.vcpus')

    def test_wrong_type_in_a_step(self):
        self.assertRefused(
            HEAD + '  - advance_clock: soon\n',
            "seconds as a number from 0 to 10**9, not 'soon'", step=2)

    def test_wrong_type_in_expect(self):
        self.assertRefused(
            HEAD + '    expect: {tracker: {host1: {vcpus_used: two}}}\n',
            'expected a whole number, got a string',
            step=1, field='expect.tracker.host1.vcpus_used')

    def test_confirm_with_nothing_to_confirm(self):
        self.assertRefused(
            HEAD + '  - confirm: vm1\n',
            'cannot confirm vm1: it is active (it must be waiting for '
            'confirm or revert)', step=2, field='confirm.server')

    def test_revert_after_confirm(self):
        self.assertRefused(
            HEAD + '  - resize: {server: vm1, flavor: large}\n'
            '  - confirm: vm1\n  - revert: vm1\n',
            'cannot revert vm1: it is active (it must be waiting',
            step=4, field='revert.server')

    def test_resize_while_waiting_for_confirm(self):
        self.assertRefused(
            HEAD + '  - migrate: vm1\n'
            '  - resize: {server: vm1, flavor: large}\n',
            'cannot resize vm1: it is waiting for confirm or revert',
            step=3, field='resize.server')

    def test_operation_on_a_server_never_booted(self):
        self.assertRefused(
            HEAD + '  - live_migrate: vm2\n',
            "no server 'vm2' to live-migrate (booted: vm1)",
            step=2, field='live_migrate.server')

    def test_missing_file(self):
        path = os.path.join(self.dir, 'nowhere.yaml')
        exc = self.assertRaises(errors.ScenarioError, scenario.load, path)
        self.assertEqual('%s: no such scenario file' % path, str(exc))

    def test_empty_file(self):
        self.assertRefused('', 'holds a mapping (one scenario) or a list',
                           'not nothing')

    def test_duplicate_scenario_name(self):
        text = '- ' + HEAD.replace('\n', '\n  ').rstrip() + '\n'
        message = self.assertRefused(text + text, 'is used twice',
                                     field='name')
        # The second scenario of the list is the one named.
        self.assertIn('bad.yaml[2]', message)

    def test_server_booted_twice(self):
        self.assertRefused(
            HEAD + '  - boot: {server: vm1, flavor: large}\n',
            "a server named 'vm1' was booted already",
            step=2, field='boot.server')

    def test_server_booted_again_after_delete(self):
        self.assertRefused(
            HEAD + '  - delete: vm1\n'
            '  - boot: {server: vm1, flavor: small}\n',
            "'vm1' was booted already", step=3, field='boot.server')

    def test_inject_unknown_periodic(self):
        self.assertRefused(
            HEAD + '  - inject: {before: finish_resize, '
            'run: update_resources, on: source}\n',
            "unknown periodic task 'update_resources'",
            'update_available_resource', step=2, field='inject.run')

    def test_run_unknown_periodic(self):
        self.assertRefused(
            HEAD + '  - run_periodic: heal_everything\n',
            "unknown periodic task 'heal_everything'",
            step=2, field='run_periodic.task')

    def test_inject_without_before_or_after(self):
        self.assertRefused(
            HEAD + '  - inject: {run: update_available_resource, '
            'on: source}\n',
            'say "before: <point>" or "after: <point>"',
            step=2, field='inject')

    def test_inject_at_something_that_is_no_point(self):
        self.assertRefused(
            HEAD + '  - inject: {before: "finish resize!", '
            'run: update_available_resource, on: source}\n',
            "'finish resize!' is not a race point name",
            step=2, field='inject.before')

    def test_inject_at_a_tracker_method_no_later_step_passes(self):
        # Only a revert passes the destination's drop of its claim; a
        # resize that is then confirmed never does.
        self.assertRefused(
            HEAD + '  - inject: {before: tracker.drop_move_claim_at_dest, '
            'run: update_available_resource, on: source}\n'
            '  - resize: {server: vm1, flavor: large}\n'
            '  - confirm: vm1\n',
            "no later step passes race point "
            "'tracker.drop_move_claim_at_dest'", 'confirm_resize',
            step=2, field='before')

    def test_inject_at_a_tracker_point_that_is_no_name(self):
        self.assertRefused(
            HEAD + '  - inject: {before: tracker.drop-claim, '
            'run: update_available_resource, on: source}\n',
            "'tracker.drop-claim' is not a race point name",
            'tracker.<...>', step=2, field='inject.before')

    def test_overlap_of_an_unknown_moment(self):
        self.assertRefused(
            HEAD + EVACUATION % ('tracker.finish_evacuation',
                                 'update_available_resource',
                                 'migrations_read'),
            "unknown moment 'migrations_read' of a periodic",
            'instances_read', step=5, field='inject.overlap')

    def test_overlap_at_a_point_that_holds_no_tracker_call(self):
        self.assertRefused(
            HEAD + EVACUATION % ('rebuild_instance',
                                 'update_available_resource',
                                 'instances_read'),
            "the call that carries on is a tracker method's",
            'tracker.finish_evacuation', step=5, field='inject.overlap')

    def test_overlap_by_a_periodic_that_reads_no_instances(self):
        self.assertRefused(
            HEAD + EVACUATION % ('tracker.finish_evacuation',
                                 '_poll_unconfirmed_resizes',
                                 'instances_read'),
            'only update_available_resource reaches instances_read',
            step=5, field='inject.overlap')

    def test_overlap_with_a_request_or_a_check(self):
        self.assertRefused(
            HEAD + '  - inject: {before: tracker.drop_move_claim_at_dest, '
            'do: {delete: vm1}, overlap: instances_read}\n'
            '  - resize: {server: vm1, flavor: large}\n'
            '  - revert: vm1\n',
            "an overlap is a periodic's", step=2, field='inject.overlap')
        self.assertRefused(
            HEAD + '  - inject: {before: tracker.drop_move_claim_at_dest, '
            'check: {tracker: {}}, overlap: instances_read}\n'
            '  - resize: {server: vm1, flavor: large}\n'
            '  - revert: vm1\n',
            'does nothing else at its point', step=2, field='inject.overlap')

    def test_overlap_at_the_end_of_an_evacuation(self):
        path = self.write(HEAD + EVACUATION % (
            'tracker.finish_evacuation', 'update_available_resource',
            'instances_read'), name='good.yaml')
        inject = scenario.load(path)[0].steps[4]
        self.assertEqual(('inject', 'instances_read'),
                         (inject.kind, inject.args['overlap']))

    def test_boot_with_a_bandwidth_port_that_must_succeed(self):
        # No host reports bandwidth inventory: only a boot that must fail
        # (refused over a limit) may ask for it.
        self.assertRefused(
            HEAD + '  - boot: {server: vm2, flavor: small, '
            'port: bandwidth}\n',
            'a boot with a bandwidth port is placed nowhere', 'error:',
            step=2, field='boot.port')
        path = self.write(
            HEAD + '  - boot: {server: vm2, flavor: small, '
            'port: bandwidth}\n    error: over limit\n', name='good.yaml')
        self.assertEqual('bandwidth',
                         scenario.load(path)[0].steps[1].args['port'])

    def test_server_that_is_not_a_name(self):
        self.assertRefused(
            HEAD + '  - delete: {server: [vm1]}\n',
            'expected a name, got a list', step=2, field='delete.server')

    def test_a_key_given_twice(self):
        self.assertRefused(
            HEAD + '    expect: {usages: {}}\n    expect: {usages: {}}\n',
            "the key 'expect' is given twice", 'not valid YAML')

    def test_resource_amount_that_is_not_a_number(self):
        text = HEAD.replace(
            'small: {vcpus: 1, ram: 512, disk: 1}',
            'small: {vcpus: 1, ram: 512, disk: 1, '
            'extra_specs: {"resources:VGPU": lots}}')
        self.assertRefused(text, "expected a whole number, got 'lots'",
                           field='flavors.small.extra_specs.resources:VGPU')

    def test_unknown_flavor_inside_expect_says_flavor(self):
        self.assertRefused(
            HEAD.replace('host: host1}\n',
                         'host: host1}\n    expect: {allocations: '
                         '{vm1: {host1: nope}}}\n'),
            "unknown flavor 'nope'; known: large, small",
            step=1, field='expect.allocations.vm1.host1')

    def test_not_utf8(self):
        path = os.path.join(self.dir, 'latin1.yaml')
        with open(path, 'wb') as out:
            out.write(HEAD.encode('utf-8') + b'# caf\xe9\n')
        exc = self.assertRaises(errors.ScenarioError, scenario.load, path)
        self.assertIn('latin1.yaml: not UTF-8 text', str(exc))

    def test_inject_on_an_unknown_host(self):
        self.assertRefused(
            HEAD + '  - inject: {after: prep_resize, '
            'run: update_available_resource, on: host9}\n',
            "unknown on 'host9'", step=2, field='inject.on')

    def test_expect_unknown_key(self):
        self.assertRefused(
            HEAD + '    expect: {alocations: {vm1: {host1: small}}}\n',
            'unknown field; expected one of: allocations, usages',
            step=1, field='expect.alocations')

    def test_expect_error_on_a_periodic(self):
        self.assertRefused(
            HEAD + '  - run_periodic: update_available_resource\n'
            '    error: boom\n',
            'only server operations can be expected to fail',
            step=2, field='error')

    def test_missing_required_field(self):
        self.assertRefused(HEAD.replace('hosts:', 'hostz:'),
                           'unknown field', field='hostz')
        self.assertRefused(
            HEAD + '  - resize: {server: vm1}\n', 'missing',
            step=2, field='resize.flavor')

    def test_unknown_field_in_a_step(self):
        self.assertRefused(
            HEAD + '  - delete: {server: vm1, force: true}\n',
            'unknown field; expected one of: server',
            step=2, field='delete.force')

    def test_stop_a_stopped_compute(self):
        self.assertRefused(
            HEAD + '  - stop_compute: host2\n  - stop_compute: host2\n',
            "compute 'host2' is already stopped",
            step=3, field='stop_compute.host')

    def test_expected_break_without_its_bug(self):
        self.assertRefused(
            HEAD + 'bugs: [1944759]\nexpected_breaks: {pins: 1707071}\n',
            "bug 1707071 is not among this scenario's bugs",
            field='expected_breaks.pins')


def _names(value):
    """Every text in a step's (nested) arguments."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        value = value.values()
    if isinstance(value, (list, tuple, set, frozenset, type({}.values()))):
        return set().union(*(_names(v) for v in value))
    return set()


class TestDocument(LoaderTestCase):
    """``Scenario.document``: the mapping ``parse`` loads it back from."""

    def test_the_document_keeps_the_scenario_s_name(self):
        # Its hosts were once read into the variable of the name given:
        # every document was named after its last host (host2 here), and
        # the explorer's reproducers of two scenarios with one last host
        # went to the same file.
        loaded = scenario.load(self.write(HEAD, 'small.yaml'))[0]
        self.assertEqual('a small scenario', loaded.document()['name'])
        again = scenario.parse(loaded.document(), 'again')
        self.assertEqual('a small scenario', again.name)
        self.assertEqual(['host1', 'host2'], sorted(again.hosts))
        self.assertEqual('other', loaded.document(name='other')['name'])


class TestShippedScenarios(testing.TestCase):
    """Every file in tests/functional/scenarios loads and keeps promises.

    As data: at least 40 scenarios, each deleting what it booted and
    checking, after a last periodic, that nothing leaks.
    """

    def scenarios(self):
        paths = sorted(glob.glob(os.path.join(SCENARIO_DIR, '*.yaml')))
        self.assertNotEqual([], paths)
        return [(path, sc) for path in paths for sc in scenario.load(path)]

    def test_every_file_loads(self):
        loaded = self.scenarios()
        self.assertGreaterEqual(len(loaded), 40)
        ids = [sc.id for _, sc in loaded]
        self.assertEqual(len(ids), len(set(ids)), 'test IDs must be unique')

    def test_every_scenario_cleans_up_and_checks_for_leaks(self):
        for path, sc in self.scenarios():
            where = '%s: %s' % (os.path.basename(path), sc.name)
            # A boot that fails in Nova leaves a server in ERROR; one the
            # API refuses (over a unified limit) leaves none, and no other
            # step names it.
            booted = {s.args['server'] for s in sc.steps if s.kind == 'boot'
                      and (not s.error or any(
                          s.args['server'] in _names(other.args)
                          for other in sc.steps if other is not s))}
            # A delete step, or a delete sent at a race point.
            deleted = {s.index: s.args['server'] for s in sc.steps
                       if s.kind == 'delete'}
            deleted.update({s.index: s.args['do'][1] for s in sc.steps
                            if s.kind == 'inject' and s.args.get('do')
                            and s.args['do'][0] == 'delete'})
            self.assertEqual(booted, set(deleted.values()),
                             where + ': delete every server booted')
            after = sc.steps[max(deleted) - 1:]
            for key in ('allocations', 'usages'):
                self.assertIn({}, [s.expect.get(key) for s in after],
                              '%s: no "%s: {}" after the last delete'
                              % (where, key))
            last = sc.steps[-1]
            self.assertEqual(('run_periodic', 'update_available_resource',
                              []),
                             (last.kind, last.args.get('task'),
                              last.args.get('hosts')), where)
            self.assertEqual({}, last.expect.get('tracker'), where)
            if any(h.profile for h in sc.hosts.values()):
                self.assertEqual({}, last.expect.get('pinned_cpus'), where)
