"""A depth-2 pair whose second injection cannot run, known unreplayed.

Pruned at depth 2 (``Explorer(prune=True)``), each pair's first
injection is first replayed alone; its run is the pair's up to the
moment the second injection fires: the first passage in the second's
step that it matches. Where no migration names one of the second's
hosts there, the pair's replay would fail that step with
``InjectionFailed``: not applicable (``explorer._second_unnamed``,
``explorer._known``). What the single's run keeps of the points it
passed is ``explorer._Passing``'s and ``explorer._passages``'.
"""

from harness.core import scenario
from harness.core import timeline as timeline_mod
from harness.runners import explorer
from harness import testing

HEAD = ('name: resize\n'
        'hosts: {src: {driver: fake}, dst: {driver: fake}}\n'
        'flavors: {small: {vcpus: 1, ram: 512, disk: 1},\n'
        '          large: {vcpus: 2, ram: 1024, disk: 2}}\n'
        'steps:\n'
        '  - boot: {server: vm1, flavor: small, host: src}\n'
        '  - resize: {server: vm1, flavor: large}\n'
        '  - confirm: vm1\n'
        '  - delete: vm1\n')
TASK = 'update_available_resource'
RESIZE = explorer.Point(2, 'before', 'resize_instance', 'src', 'vm1')
# A point of the scheduler's: no server, no host, passed once per move.
UPDATE_INFO = explorer.Point(2, 'before', 'scheduler.update_instance_info',
                             None, None)
CONFIRM = explorer.Point(3, 'after', 'confirm_resize', 'src', 'vm1')
# In the single's run of an injection before the resize, its own steps:
# boot 1, the inject step 2, resize 3, confirm 4, delete 5.
OWN_RESIZE, OWN_CONFIRM = 3, 4


def _trunk():
    return scenario.load_file('s.yaml', HEAD)[1][0]


def _passed(step, at, roles, host=None):
    return explorer.Passed(step, at.when, at.point,
                           at.host if host is None else host, at.server,
                           roles)


def _single(*passages, failed_at=None):
    return dict(explorer._ended({}), passages=passages,
                failed=failed_at is not None, step=failed_at)


def _pair(second, hosts=('dest',), first=RESIZE):
    return (explorer.Injection(first, TASK, ('source',)),
            explorer.Injection(second, TASK, hosts))


class TestSecondUnnamed(testing.TestCase):

    def unnamed(self, pair, single):
        return explorer._second_unnamed(_trunk(), pair, single)

    def test_a_role_not_named_where_it_fires_is_known(self):
        single = _single(_passed(OWN_CONFIRM, CONFIRM, ('source',)))
        self.assertTrue(self.unnamed(_pair(CONFIRM), single))
        # Each host counts, whatever the order they run in.
        self.assertTrue(self.unnamed(
            _pair(CONFIRM, ('source', 'dest')), single))
        self.assertFalse(self.unnamed(_pair(CONFIRM, ('source',)), single))

    def test_roles_all_named_are_not(self):
        single = _single(_passed(OWN_CONFIRM, CONFIRM, ('source', 'dest')))
        self.assertFalse(self.unnamed(
            _pair(CONFIRM, ('dest', 'source')), single))

    def test_the_first_matching_passage_of_its_step_decides(self):
        # Passed again later in the step (another write at the point):
        # the second fires at the first passage, whose roles count.
        first_named = _single(
            _passed(OWN_CONFIRM, CONFIRM, ('source', 'dest')),
            _passed(OWN_CONFIRM, CONFIRM, ('source',), host='dst'))
        self.assertFalse(self.unnamed(_pair(CONFIRM), first_named))
        # A point named with no host matches a passage on any host: the
        # first one passed.
        anywhere = explorer.Point(3, 'after', 'confirm_resize', None, 'vm1')
        first_unnamed = _single(
            _passed(OWN_CONFIRM, CONFIRM, ('source',), host='dst'),
            _passed(OWN_CONFIRM, CONFIRM, ('source', 'dest')))
        self.assertTrue(self.unnamed(_pair(anywhere), first_unnamed))
        self.assertFalse(self.unnamed(_pair(anywhere), first_named))

    def test_only_passages_of_its_own_step_count(self):
        # Counted in the single's steps: the confirm is its step 4.
        elsewhere = _single(_passed(OWN_RESIZE, CONFIRM, ()),
                            _passed(OWN_CONFIRM + 1, CONFIRM, ()))
        self.assertFalse(self.unnamed(_pair(CONFIRM), elsewhere))
        self.assertTrue(self.unnamed(_pair(CONFIRM), _single(
            _passed(OWN_RESIZE, CONFIRM, ('source', 'dest')),
            _passed(OWN_CONFIRM, CONFIRM, ()))))

    def test_a_point_not_passed_there_is_replayed(self):
        self.assertFalse(self.unnamed(_pair(CONFIRM), _single()))
        self.assertFalse(self.unnamed(_pair(CONFIRM), _single(
            _passed(OWN_CONFIRM, UPDATE_INFO, ()))))
        # Nor is a single that kept no passages, or noted no roles.
        self.assertFalse(self.unnamed(_pair(CONFIRM), explorer._ended({})))
        self.assertFalse(self.unnamed(_pair(CONFIRM), _single(
            _passed(OWN_CONFIRM, CONFIRM, None))))

    def test_a_single_that_failed_by_then_is_replayed(self):
        unnamed = (_passed(OWN_CONFIRM, CONFIRM, ()),)
        self.assertTrue(self.unnamed(_pair(CONFIRM), _single(*unnamed)))
        for step in (OWN_RESIZE, OWN_CONFIRM):
            self.assertFalse(self.unnamed(
                _pair(CONFIRM), _single(*unnamed, failed_at=step)))
        # Failed after it: up to there it ran as the pair would.
        self.assertTrue(self.unnamed(
            _pair(CONFIRM), _single(*unnamed, failed_at=OWN_CONFIRM + 1)))

    def test_in_the_first_injections_own_step(self):
        # Both armed before the resize: the single's step 3 is theirs.
        single = _single(_passed(OWN_RESIZE, RESIZE, ('source', 'dest')),
                         _passed(OWN_RESIZE, UPDATE_INFO, ()))
        self.assertTrue(self.unnamed(
            _pair(UPDATE_INFO, ('source',)), single))

    def test_a_passage_the_first_may_fire_at_too_is_replayed(self):
        # Were the first still armed, it would fire there as well, in an
        # order of the pair's own: not the single's run.
        anywhere = explorer.Point(2, 'before', 'resize_instance', None,
                                  'vm1')
        single = _single(_passed(OWN_RESIZE, RESIZE, ()))
        self.assertFalse(self.unnamed(
            _pair(RESIZE, first=anywhere), single))
        # One that cannot (another point) leaves it known.
        elsewhere = explorer.Point(2, 'after', 'resize_instance', None,
                                   'vm1')
        self.assertTrue(self.unnamed(_pair(RESIZE, first=elsewhere),
                                     single))


class TestKnown(testing.TestCase):
    """``_known``: the result a replay of the pair would end with."""

    def known(self, pair, single):
        explore = explorer.Explorer(workers=1, depth=2, prune=True)
        return explore._known(_trunk(), pair, {pair[0]: single},
                              [None] * 5, {}, 0)

    def test_a_second_injection_unnamed_is_not_applicable(self):
        single = _single(_passed(OWN_CONFIRM, CONFIRM, ('source',)))
        found = self.known(_pair(CONFIRM), single)
        self.assertEqual(explorer.SECOND_INAPPLICABLE, found.pop('pruned'))
        # As ``_result`` ends a replay whose step failed with
        # InjectionFailed: not applicable, no failure, no time.
        self.assertEqual(dict(explorer._ended({}), inapplicable=True),
                         found)
        self.assertIn(explorer.SECOND_INAPPLICABLE, explorer.PRUNED)

    def test_otherwise_the_pair_is_run(self):
        single = _single(_passed(OWN_CONFIRM, CONFIRM, ('source', 'dest')))
        self.assertIsNone(self.known(_pair(CONFIRM), single))
        self.assertIsNone(self.known(_pair(CONFIRM), _single()))

    def test_in_the_first_injections_own_step_too(self):
        single = _single(_passed(OWN_RESIZE, UPDATE_INFO, ()))
        found = self.known(_pair(UPDATE_INFO), single)
        self.assertEqual(explorer.SECOND_INAPPLICABLE, found['pruned'])

    def test_the_first_not_applicable_is_said_first(self):
        single = dict(_single(_passed(OWN_CONFIRM, CONFIRM, ())),
                      inapplicable=True)
        self.assertEqual(explorer.FIRST_INAPPLICABLE,
                         self.known(_pair(CONFIRM), single)['pruned'])


class _Passage(object):
    def __init__(self, when, point, host, server, roles=None):
        self.when, self.point, self.host, self.server = (
            when, point, host, server)
        self.roles = roles


class TestPassages(testing.TestCase):

    def test_the_first_passage_of_each_point_in_each_step(self):
        passing = explorer._Passing()
        for index, passages in ((1, [_Passage('before', 'a', 'src', 'vm1',
                                              ('source',))]),
                                (2, [_Passage('before', 'a', 'src', 'vm1',
                                              ('source',)),
                                     _Passage('before', 'b', None, None, ()),
                                     _Passage('before', 'a', 'src', 'vm1',
                                              ('source', 'dest')),
                                     _Passage('before', 'a', 'dst', 'vm1',
                                              ('dest',))])):
            entry = timeline_mod.Entry(index, 'step %d' % index, None)
            entry.passages = passages
            passing.step_done(None, entry)
        self.assertEqual([
            explorer.Passed(1, 'before', 'a', 'src', 'vm1', ('source',)),
            explorer.Passed(2, 'before', 'a', 'src', 'vm1', ('source',)),
            explorer.Passed(2, 'before', 'b', None, None, ()),
            explorer.Passed(2, 'before', 'a', 'dst', 'vm1', ('dest',))],
            passing.first)
        # A single keeps those from its injection's step on; other runs
        # none (the pairs': their results stay as small as they were).
        single = {'prefix': 1, 'pruning': {'record': True}}
        self.assertEqual(passing.first[1:], list(
            explorer._passages(single, passing)['passages']))
        self.assertEqual({}, explorer._passages(
            {'prefix': 1, 'pruning': {'record': False}}, passing))
        self.assertEqual({}, explorer._passages({'prefix': 1}, passing))
