"""Which concurrency mode a process runs Nova in (harness.core.concurrency).

Nova-free: the installed Nova's version comes from its metadata.
"""

from unittest import mock

from harness.core import concurrency
from harness.core import errors
from harness.core import versions
from harness import testing


class TestChosenMode(testing.TestCase):

    def test_the_release_default(self):
        # nova/conf/base.py (34.0.0): every service defaults to native
        # threading; before 34 the compute service ran under eventlet.
        self.assertEqual('threading', concurrency.default_for((34, 0, 0)))
        self.assertEqual('threading', concurrency.default_for((35, 1, 0)))
        for older in ((31, 0, 0), (32, 1, 0), (33, 0, 2)):
            self.assertEqual('eventlet', concurrency.default_for(older))

    def test_unset_is_the_installed_release_default(self):
        with mock.patch.object(versions, 'nova_version',
                               return_value=(33, 0, 0)):
            self.assertEqual('eventlet', concurrency.chosen({}))
        with mock.patch.object(versions, 'nova_version',
                               return_value=(34, 0, 0)):
            self.assertEqual('threading', concurrency.chosen({}))
            self.assertEqual('threading', concurrency.chosen(
                {concurrency.ENV: ' '}))

    def test_named_mode_wins_and_case_does_not_matter(self):
        with mock.patch.object(versions, 'nova_version',
                               return_value=(34, 0, 0)):
            self.assertEqual('eventlet', concurrency.chosen(
                {concurrency.ENV: 'Eventlet'}))

    def test_an_unknown_mode_is_one_clear_error(self):
        with mock.patch.object(versions, 'nova_version',
                               return_value=(34, 0, 0)):
            error = self.assertRaises(errors.SetupError, concurrency.chosen,
                                      {concurrency.ENV: 'greenlet'})
        self.assertEqual("HARNESS_CONCURRENCY='greenlet': say threading or "
                         "eventlet (unset: the installed Nova's default, "
                         "threading)", str(error))

    def test_choose_sets_the_mode_for_this_process_and_its_children(self):
        environ = {}
        with mock.patch.object(concurrency, '_RUNNING', []):
            concurrency.choose('eventlet', environ)
        self.assertEqual({concurrency.ENV: 'eventlet'}, environ)

    def test_choose_refuses_a_second_mode_in_one_process(self):
        with mock.patch.object(concurrency, '_RUNNING', ['threading']):
            concurrency.choose('threading', {})
            error = self.assertRaises(errors.SetupError, concurrency.choose,
                                      'eventlet', {})
        self.assertIn('already runs Nova in threading mode', str(error))
        self.assertIn('one concurrency mode per process', str(error))

    def test_choose_refuses_an_unknown_mode(self):
        error = self.assertRaises(errors.SetupError, concurrency.choose,
                                  'both', {})
        self.assertIn("concurrency 'both'", str(error))
