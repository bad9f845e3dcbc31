"""Which explored failures are findings: the injections' signatures."""

import os

import fixtures
import yaml

from harness.core import scenario as scenario_mod
from harness.runners import known
from harness import testing

HOSTS = {'src': {'driver': 'fake'}, 'dst': {'driver': 'fake'}}
FLAVORS = {'small': {'vcpus': 1, 'ram': 512, 'disk': 1}}


def scenario(*injects, move='resize'):
    steps = [{'boot': {'server': 'vm1', 'flavor': 'small', 'host': 'src'}}]
    steps += [{'inject': inject} for inject in injects]
    steps.append({move: {'server': 'vm1', 'flavor': 'small'}}
                 if move == 'resize' else {move: 'vm1'})
    return scenario_mod.parse({'name': 's', 'hosts': HOSTS,
                               'flavors': FLAVORS, 'steps': steps},
                              'f.yaml', 'f.yaml')


PERIODIC_ON_DEST = {'before': 'finish_resize',
                    'run': 'update_available_resource', 'on': 'dest'}


class TestSignatures(testing.TestCase):

    def test_what_where_and_on_which_role(self):
        self.assertEqual(
            [('resize', 'before', 'finish_resize',
              'update_available_resource', 'dest')],
            known.signatures(scenario(PERIODIC_ON_DEST)))

    def test_restarts_and_requests(self):
        self.assertEqual(
            [('resize', 'before', 'resize_instance', 'stop', 'source'),
             ('resize', 'after', 'migration.status=pre-migrating',
              'delete', None)],
            known.signatures(scenario(
                {'before': 'resize_instance', 'stop': 'source'},
                {'after': 'migration.status=pre-migrating',
                 'do': {'delete': 'vm1'}})))

    def test_a_host_named_matches_either_role(self):
        by_name = known.signatures(scenario(dict(PERIODIC_ON_DEST,
                                                 on='dst')))
        self.assertEqual([None], [s[-1] for s in by_name])
        for role in ('source', 'dest'):
            self.assertTrue(known.same_kind(by_name[0][:-1] + (role,),
                                            by_name[0]))

    def test_another_role_move_or_action_is_another_kind(self):
        finding = known.signatures(scenario(PERIODIC_ON_DEST))[0]
        self.assertTrue(known.same_kind(finding, finding))
        for other in (('migrate',) + finding[1:],
                      finding[:3] + ('stop',) + finding[4:],
                      finding[:4] + ('source',)):
            self.assertFalse(known.same_kind(other, finding), other)

    def test_the_point_is_left_to_the_states(self):
        # Whether another point is the same is the states' to say
        # (test_known_findings_states).
        finding = known.signatures(scenario(PERIODIC_ON_DEST))[0]
        self.assertTrue(known.same_kind(
            finding[:1] + ('after', 'instance.host') + finding[3:],
            finding))


class TestLoad(testing.TestCase):

    def test_every_finding_of_a_directory(self):
        directory = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(directory, 'one.yaml'), 'w') as out:
            yaml.safe_dump(scenario(PERIODIC_ON_DEST).document(), out)
        self.assertEqual(
            {os.path.join(directory, 'one.yaml'):
             known.signatures(scenario(PERIODIC_ON_DEST))},
            known.load(directory))
