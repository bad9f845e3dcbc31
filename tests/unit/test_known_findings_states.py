"""A known finding's injection is the same at any point of its Nova state.

Nova-free logic of ``harness.runners.known``: the state an injection's
point falls in, read from a step's passages (``state_of``), which roles
name a passage's host (``host_roles``), and how ``Known.finding_for``
puts them together, with the two runs it makes (the reproducer without
its injections, the finding with them) given here as what they passed.
That the runs pass what is given here is
tests/functional/test_explorer_known.py's.
"""

import types

# Nova's eventlet patching first: ``known`` matches passages with the
# race points' own rule (``race.matches``), imported when first used.
from harness.cloud import nova_env  # noqa: F401,I100
from harness.cloud import race  # noqa: F401,E402

from harness.runners import explorer  # noqa: E402
from harness.runners import known  # noqa: E402
from harness import testing  # noqa: E402

UAR = 'update_available_resource'
MIGRATION = types.SimpleNamespace(source_compute='src', dest_compute='dst')
SOURCE, DEST = frozenset({'source'}), frozenset({'dest'})


def passage(version, when, point, host, migration=MIGRATION):
    return types.SimpleNamespace(version=version, when=when, point=point,
                                 host=host, server='vm1',
                                 migration=migration)


# A resize's points around resize_instance's save of instance.host on the
# source and finish_resize on the destination: nothing is written between
# the save and finish_resize's start; finish_resize writes the migration's
# status. The versions are made up, their order is the rule's input.
RESIZE = [
    passage(30, 'before', 'migration.status=post-migrating', 'src'),
    passage(31, 'after', 'migration.status=post-migrating', 'src'),
    passage(31, 'before', 'instance.host', 'src'),
    passage(32, 'after', 'instance.host', 'src'),
    passage(32, 'before', 'finish_resize', 'dst'),
    passage(33, 'before', 'migration.status=finished', 'dst'),
    passage(34, 'after', 'migration.status=finished', 'dst'),
    passage(35, 'after', 'finish_resize', 'dst'),
]


class TestHostRoles(testing.TestCase):

    def test_the_roles_the_migration_gives_the_host(self):
        self.assertEqual(SOURCE, known.host_roles(RESIZE[2]))
        self.assertEqual(DEST, known.host_roles(RESIZE[4]))
        same_host = types.SimpleNamespace(source_compute='h1',
                                          dest_compute='h1')
        self.assertEqual(
            frozenset({'source', 'dest'}),
            known.host_roles(passage(1, 'before', 'finish_resize', 'h1',
                                     same_host)))

    def test_none_without_a_migration_or_a_host(self):
        self.assertEqual(frozenset(), known.host_roles(
            passage(1, 'before', 'prep_resize', 'dst', migration=None)))
        self.assertEqual(frozenset(), known.host_roles(
            passage(1, 'before', 'conductor.MigrationTask', None)))


class TestStateOf(testing.TestCase):

    def test_the_points_passed_at_the_same_version(self):
        state = {('after', 'instance.host', SOURCE),
                 ('before', 'finish_resize', DEST)}
        self.assertEqual(state, known.state_of(
            RESIZE, 'after', 'instance.host', 'src', 'vm1'))
        # Named by either point, it is the same state.
        self.assertEqual(state, known.state_of(
            RESIZE, 'before', 'finish_resize'))

    def test_other_states_of_the_step(self):
        self.assertEqual(
            {('after', 'migration.status=post-migrating', SOURCE),
             ('before', 'instance.host', SOURCE)},
            known.state_of(RESIZE, 'before', 'instance.host'))
        self.assertEqual(
            {('after', 'migration.status=finished', DEST)},
            known.state_of(RESIZE, 'after', 'migration.status=finished'))

    def test_the_host_narrows_where_it_fires(self):
        # A point passed on each host, in another state on each.
        both = [passage(5, 'after', 'tracker.x', 'src'),
                passage(5, 'before', 'y', 'src'),
                passage(7, 'after', 'tracker.x', 'dst'),
                passage(7, 'before', 'z', 'dst')]
        self.assertEqual({('after', 'tracker.x', SOURCE),
                          ('before', 'y', SOURCE)},
                         known.state_of(both, 'after', 'tracker.x'))
        self.assertEqual({('after', 'tracker.x', DEST),
                          ('before', 'z', DEST)},
                         known.state_of(both, 'after', 'tracker.x', 'dst'))

    def test_none_where_never_passed(self):
        self.assertIsNone(known.state_of(RESIZE, 'after', 'instance.host',
                                         'dst'))
        self.assertIsNone(known.state_of(RESIZE, 'before', 'confirm_resize'))


class TestInState(testing.TestCase):

    state = {('after', 'instance.host', SOURCE),
             ('before', 'finish_resize', DEST)}

    def test_the_same_point_on_a_host_of_the_same_role(self):
        self.assertTrue(known.in_state(('before', 'finish_resize', DEST),
                                       self.state))
        self.assertTrue(known.in_state(
            ('before', 'finish_resize', frozenset({'source', 'dest'})),
            self.state))

    def test_on_a_host_of_another_role_it_is_another_point(self):
        self.assertFalse(known.in_state(('before', 'finish_resize', SOURCE),
                                        self.state))
        self.assertFalse(known.in_state(('after', 'finish_resize', DEST),
                                        self.state))

    def test_points_with_no_role_and_any_host(self):
        nowhere = frozenset()
        self.assertTrue(known.in_state(
            ('before', 'p', nowhere), {('before', 'p', nowhere)}))
        self.assertFalse(known.in_state(
            ('before', 'p', nowhere), {('before', 'p', SOURCE)}))
        self.assertTrue(known.in_state(
            ('before', 'p', SOURCE), {('before', 'p', None)}))


def signature(when, point, role='dest', action=UAR, move='resize'):
    return (move, when, point, action, role)


class Runs(known.Known):
    """``Known`` with what its two kinds of runs found given."""

    def __init__(self, findings, runs, states):
        self.findings = findings
        self._runs = runs
        self.states = states

    def _signatures_of(self, reproducer):
        return [[found for found, _ in scenario]
                for scenario in self.states[reproducer]]

    def _states_of(self, reproducer):
        return self.states[reproducer]


class TestFindingFor(testing.TestCase):

    finding = signature('before', 'finish_resize')
    explored = signature('after', 'instance.host')
    state = {('after', 'instance.host', SOURCE),
             ('before', 'finish_resize', DEST)}
    at_resize = explorer.Outcome((), True, 2, 'resize vm1')
    steps = [{'boot': {}}, {'resize': {}}]

    def known(self, fired=('before', 'finish_resize', DEST), kind='resize',
              state=None, reproducer=None, others=()):
        """The finding; its reproducer's injection and the state of it.

        ``fired``: where the finding's injection fired in its run;
        ``kind``: what kind of step that run first failed at;
        ``others``: the finding's other scenarios' runs.
        """
        return Runs({'finding.yaml': [self.finding]},
                    {'finding.yaml': [(kind, [(self.finding, fired)])]
                     + list(others)},
                    {'shrunk.yaml': [[(reproducer or self.explored,
                                       state or self.state)]]})

    def test_a_point_of_the_finding_s_state(self):
        self.assertEqual('finding.yaml', self.known().finding_for(
            self.steps, self.at_resize, 'shrunk.yaml'))

    def test_the_finding_s_point_on_another_role_s_host(self):
        self.assertIsNone(self.known(
            fired=('before', 'finish_resize', SOURCE)).finding_for(
                self.steps, self.at_resize, 'shrunk.yaml'))

    def test_another_state_of_the_step(self):
        self.assertIsNone(self.known(
            reproducer=signature('after', 'migration.status=finished'),
            state={('after', 'migration.status=finished', DEST)}
        ).finding_for(self.steps, self.at_resize, 'shrunk.yaml'))

    def test_another_role_or_action(self):
        for other in (signature('after', 'instance.host', 'source'),
                      signature('after', 'instance.host', action='stop'),
                      signature('after', 'instance.host', move='migrate')):
            self.assertIsNone(self.known(reproducer=other).finding_for(
                self.steps, self.at_resize, 'shrunk.yaml'), other)

    def test_the_finding_fails_at_another_kind_of_step(self):
        self.assertIsNone(self.known(kind='boot').finding_for(
            self.steps, self.at_resize, 'shrunk.yaml'))

    def test_the_kind_is_that_of_the_scenario_with_the_injection(self):
        # Another scenario of the finding fails at a resize, with no
        # injection: the one with the injection fails at a delete.
        self.assertIsNone(self.known(
            kind='delete', others=[('resize', [])]).finding_for(
                self.steps, self.at_resize, 'shrunk.yaml'))
        self.assertEqual('finding.yaml', self.known(
            kind='resize', others=[('delete', [])]).finding_for(
                self.steps, self.at_resize, 'shrunk.yaml'))

    def test_a_finding_that_never_passed_its_point(self):
        self.assertIsNone(self.known(fired=None).finding_for(
            self.steps, self.at_resize, 'shrunk.yaml'))
