"""Shrinking stays on its bug, and costs fewer replays.

No cloud here: ``_Nova`` stands in for a replay. It reads the replayed
scenario and makes the timeline a run of it would record, with two bugs
under one invariant (``tracker_agrees``) in a move (resize or cold
migration) of ``vm1``: a periodic on the source before resize_instance
leaves the source's ``vcpus_used`` wrong, one on the destination before
finish_resize the destination's. A move goes to the host it names, else
to the first other host by name, and fails with no other host; an inject
step that no move follows never fires. The explorer's own ``_result``
turns the timeline into the replay's result, as in a real replay.
"""

import fixtures

from harness.core import problems
from harness.core import scenario
from harness.core import snapshot
from harness.core import timeline as timeline_mod
from harness.runners import explorer
from harness.runners import shrinking
from harness.runners import signatures
from harness import testing

HEAD = ('name: two bugs under one invariant\n'
        'hosts: {h1: {driver: fake}, h2: {driver: fake}}\n'
        'flavors: {small: {vcpus: 1, ram: 512, disk: 1},\n'
        '          large: {vcpus: 2, ram: 1024, disk: 2}}\n'
        'steps:\n'
        '  - boot: {server: vm1, flavor: small, host: h1}\n')
RESIZE = ('  - resize: {server: vm1, flavor: large}\n'
          '  - confirm: vm1\n')
# The source's bug: before resize_instance (on h1).
SOURCE_BUG = explorer.Point(2, 'before', 'resize_instance', 'h1', 'vm1')
# The destination's: before finish_resize (on h2).
DEST_BUG = explorer.Point(2, 'before', 'finish_resize', 'h2', 'vm1')


class _Nova(object):
    """Replays a scenario document as the two bugs would have it run."""

    def __init__(self):
        self.replays = 0

    def replay(self, job, record=False, pool=None):
        self.replays += 1
        loaded = scenario.parse(job['document'], job['where'], job['where'])
        timeline = timeline_mod.Timeline()
        servers, migrations, armed = {}, {}, []
        timeline.add(0, 'start', _snapshot(servers, migrations))
        for step in loaded.steps:
            found = []
            if step.kind == 'boot':
                servers[step.args['server']] = step.args['host']
            elif step.kind == 'inject':
                armed.append(step)
            elif step.kind in ('resize', 'migrate'):
                found = self._move(loaded, step, servers, migrations, armed)
                armed = []
            entry = timeline.add(step.index, step.label,
                                 _snapshot(servers, migrations))
            entry.problems = found
        timeline.entries[-1].problems += [
            problems.Problem(problems.UNFIRED, 'inject').at(step.index)
            for step in armed]
        return explorer._result(loaded, timeline, _Phases(), record)

    def _move(self, loaded, step, servers, migrations, armed):
        source = servers['vm1']
        others = sorted(set(loaded.hosts) - {source})
        if not others:
            return [problems.Problem(
                problems.STEP_FAILED, step.label,
                actual='OperationFailed').at(step.index)]
        dest = step.args.get('host') or others[0]
        servers['vm1'] = dest
        migrations['migration(vm1)'] = (source, dest)
        found = []
        # In node order, as tracker_agrees reports them.
        for host, role in sorted(((source, 'source'), (dest, 'dest'))):
            if any(a.raw['inject']['on'] == role for a in armed):
                found.append(problems.Problem(
                    'tracker_agrees', 'host %s, vcpus_used' % host,
                    expected=1, actual=0).at(step.index))
        return found


class _Phases(object):

    def seconds(self):
        return dict.fromkeys(explorer.PHASES, 0.0)


def _snapshot(servers, migrations):
    return snapshot.Snapshot(
        {}, {}, {},
        servers={name: snapshot.Server(name, 'uuid-' + name, 'ACTIVE', host,
                                       None)
                 for name, host in servers.items()},
        migrations={consumer: snapshot.Migration(
            consumer, 'vm1', 'uuid-m', 'finished', source, dest, 'resize')
            for consumer, (source, dest) in migrations.items()})


class ShrinkingTestCase(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.nova = _Nova()
        self.useFixture(fixtures.MonkeyPatch(
            'harness.runners.explorer.replay', self.nova.replay))
        self.out = self.useFixture(fixtures.TempDir()).path

    def shrink(self, text, *injections):
        trunk = scenario.load_file('s.yaml', text)[1][0]
        # One replay at a time, from the start: no cloud to fork.
        explore = explorer.Explorer(workers=1, branch=False,
                                    out_dir=self.out)
        job = explore._job(trunk, injections)
        outcome = explore._outcome(injections, self.nova.replay(job))
        self.nova.replays = 0
        explore._shrink(trunk, outcome, 1)
        return outcome, scenario.load(outcome.shrunk_path)[0]


class TestTwoBugsUnderOneInvariant(ShrinkingTestCase):

    def test_the_shrink_stays_on_the_first_problems_bug(self):
        source = explorer.Injection(SOURCE_BUG, 'update_available_resource',
                                    ('source',))
        dest = explorer.Injection(DEST_BUG, 'update_available_resource',
                                  ('dest',))
        # Boot, the destination's periodic, the source's, the resize: it
        # fails first with the source's vcpus_used (h1 comes first).
        outcome, shrunk = self.shrink(HEAD + RESIZE, source, dest)
        self.assertEqual(4, outcome.step)
        self.assertEqual(
            [('tracker_agrees', 'host h1, vcpus_used'),
             ('tracker_agrees', 'host h2, vcpus_used')],
            [(p.check, p.subject) for p in outcome.problems])
        # Without the source's periodic the resize still fails under
        # tracker_agrees, but with the destination's bug: not a removal
        # to keep. The reproducer is the source's bug alone.
        self.assertEqual(['boot', 'inject', 'resize'],
                         [step.kind for step in shrunk.steps])
        self.assertEqual(('resize_instance', 'source'),
                         (shrunk.steps[1].args['point'],
                          shrunk.steps[1].args['on']))


class TestFewerReplays(ShrinkingTestCase):

    def test_blocks_first_where_many_steps_can_go(self):
        # Seven boots, then the migration of the first with the source's
        # periodic before it: six of the boots can go. vm1's boot
        # expects a number (none of its CPUs pinned), so the flavor
        # stays as written (``_halve_flavors``): only steps are shrunk.
        text = ('name: many boots, one migration\n'
                'hosts: {h1: {driver: fake}, h2: {driver: fake}}\n'
                'flavors: {small: {vcpus: 1, ram: 512, disk: 1}}\n'
                'steps:\n'
                '  - boot: {server: vm1, flavor: small, host: h1}\n'
                '    expect: {pinned_cpus: {h1: 0}}\n'
                + ''.join('  - boot: {server: vm%d, flavor: small, '
                          'host: h2}\n' % number for number in range(2, 8))
                + '  - migrate: {server: vm1, host: h2}\n')
        point = explorer.Point(8, 'before', 'resize_instance', 'h1', 'vm1')
        outcome, shrunk = self.shrink(text, explorer.Injection(
            point, 'update_available_resource', ('source',)))
        self.assertEqual(9, outcome.step)
        self.assertEqual(['vm1'], [step.args['server']
                                   for step in shrunk.steps
                                   if step.kind == 'boot'])
        self.assertEqual(['boot', 'inject', 'migrate'],
                         [step.kind for step in shrunk.steps])
        # One step at a time from the last back, starting over after
        # each removal, replays 12: a removal of the migration or of the
        # first boot the loader refuses, and without the injection the
        # recorded steps are not replayed; then each of the six rounds
        # that drop a boot replays the last boot's removal (kept), and
        # from the second on first the injection's (it passes): 1 + 5 x
        # 2, and 1 to end (the injection's). Blocks first: halves (the
        # loader refuses one, the other is the recorded first steps),
        # then quarters: boots 5-6 go (1); then thirds: boots 3-4 (2);
        # halves, quarters of the five left: boot 7 (3; without the
        # migration step the rest is the first steps of the replay
        # before, which passed); thirds: boot 2 (4); singles: the
        # injection's removal (5).
        self.assertEqual(5, self.nova.replays)
        self.assertEqual(5, outcome.shrink_replays)


class TestValues(ShrinkingTestCase):

    def test_hosts_and_flavors_no_step_names_go(self):
        # h3 and the flavor huge are named by no step and go; h2 is named
        # by none either once shrunk, but the resize needs it.
        text = HEAD.replace(
            'h2: {driver: fake}}', 'h2: {driver: fake}, h3: {driver: fake}}'
        ).replace('disk: 2}}', 'disk: 2},\n'
                  '          huge: {vcpus: 8, ram: 8192, disk: 8}}')
        outcome, shrunk = self.shrink(text + RESIZE, explorer.Injection(
            SOURCE_BUG, 'update_available_resource', ('source',)))
        self.assertEqual(['h1', 'h2'], sorted(shrunk.hosts))
        # No step expects a number: each flavor is halved while the
        # move still fails alike, to 1 vCPU, 64 MB and 1 GB at least.
        self.assertEqual(
            {'small': (1, 64, 1), 'large': (1, 64, 1)},
            {name: (f.vcpus, f.ram, f.disk)
             for name, f in shrunk.flavors.items()})

    def test_a_number_expected_keeps_the_flavors(self):
        text = HEAD.replace('host: h1}\n', 'host: h1}\n'
                            '    expect: {pinned_cpus: {h1: 0}}\n')
        _outcome, shrunk = self.shrink(text + RESIZE, explorer.Injection(
            SOURCE_BUG, 'update_available_resource', ('source',)))
        self.assertEqual(
            {'small': (1, 512, 1), 'large': (2, 1024, 2)},
            {name: (f.vcpus, f.ram, f.disk)
             for name, f in shrunk.flavors.items()})


class TestDeltaDebugging(testing.TestCase):

    def test_the_whole_then_halves_then_quarters_from_the_last_back(self):
        tried = []

        def first_alike(candidates, items):
            tried.append(candidates)
            return None

        self.assertEqual([1, 2, 3, 4], shrinking.ddmin([1, 2, 3, 4],
                                                       first_alike))
        self.assertEqual([[[]],
                          [[1, 2], [3, 4]],
                          [[1, 2, 3], [1, 2, 4], [1, 3, 4], [2, 3, 4]]],
                         tried)

    def test_it_ends_where_no_single_item_can_go(self):
        # Fails alike while it holds 3 and 7.
        def first_alike(candidates, items):
            return next((c for c in candidates if 3 in c and 7 in c), None)

        self.assertEqual([3, 7], shrinking.ddmin(list(range(1, 11)),
                                                 first_alike))


class TestSignature(testing.TestCase):
    """A failure's signature names roles, not hosts and servers."""

    def signature(self, dest, problem, server='vm1'):
        loaded = scenario.load_file('s.yaml', HEAD.replace(
            'h2: {driver: fake}}', 'h2: {driver: fake}, h3: {driver: fake}}'
        ) + RESIZE)[1][0]
        timeline = timeline_mod.Timeline()
        timeline.add(0, 'start', _snapshot({}, {}))
        timeline.add(1, 'boot', _snapshot({server: 'h1'}, {}))
        entry = timeline.add(2, 'resize', _snapshot(
            {server: dest, 'vm2': 'h3'}, {'migration(vm1)': ('h1', dest)}))
        entry.problems = [problem.at(2)]
        return signatures.of(loaded, timeline)

    def test_the_same_bug_on_another_destination_is_the_same(self):
        self.assertEqual(
            ('tracker_agrees', 'host dest, vcpus_used', 'resize'),
            self.signature('h2', problems.Problem(
                'tracker_agrees', 'host h2, vcpus_used')))
        self.assertEqual(
            self.signature('h2', problems.Problem(
                'tracker_agrees', 'host h2, vcpus_used')),
            self.signature('h3', problems.Problem(
                'tracker_agrees', 'host h3, vcpus_used')))

    def test_another_role_or_resource_class_is_another_bug(self):
        def usage(subject):
            return self.signature('h2', problems.Problem(
                'usages_add_up', subject))

        self.assertEqual('provider source, VCPU',
                         usage('provider h1, VCPU').subject)
        self.assertEqual('provider dest, VCPU',
                         usage('provider h2, VCPU').subject)
        self.assertEqual('provider source, MEMORY_MB',
                         usage('provider h1, MEMORY_MB').subject)

    def test_consumers_servers_and_numbers(self):
        def subject(text, dest='h2'):
            return self.signature(dest, problems.Problem(
                'allocations_where_server_is', text)).subject

        self.assertEqual('migration(server) on source',
                         subject('migration(vm1) on h1'))
        self.assertEqual('other server on other host',
                         subject('vm2 on h3'))
        self.assertEqual('host source, CPU N', subject('host h1, CPU 3'))
        self.assertEqual('uuid on device', subject(
            '6c2a7a4c-6a4e-4c87-9f4e-0d3b9d0a1e2f on 0000:81:00.1'))

    def test_a_step_that_failed_is_told_apart_by_its_error(self):
        def failed(error):
            return self.signature('h2', problems.Problem(
                problems.STEP_FAILED, 'resize vm1 to large', actual=error))

        self.assertEqual(
            ('step OperationFailed', 'resize server to large', 'resize'),
            failed('OperationFailed'))
        self.assertNotEqual(failed('OperationFailed'),
                            failed('InjectionFailed'))
