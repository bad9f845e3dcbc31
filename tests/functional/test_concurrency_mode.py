"""The process runs Nova in one concurrency mode, as Nova deploys it.

``tox -e functional`` runs Nova 34 as it deploys every service: native
threading, with eventlet poisoned as Nova's own services poison it
(``nova.monkey_patch.poison_eventlet``); ``tox -e functional-eventlet``
runs the deprecated mode. Each run checks its own mode here, after a
scenario has run in it.
"""

# The process's mode first: futurist imports eventlet where it can.
from harness.cloud import mode  # noqa: I100

import importlib  # noqa: E402
import sys  # noqa: E402

import futurist  # noqa: E402
from oslo_service import backend as service_backend  # noqa: E402

from harness.core import concurrency  # noqa: E402
from harness.core import scenario as scenario_mod  # noqa: E402
from harness.runners import runner  # noqa: E402
from harness import testing  # noqa: E402

BOOT = """
name: boot and delete, with a periodic
hosts:
  h1: {profile: dev-1s-8c-smt2}
flavors:
  pin2: {vcpus: 2, ram: 512, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
steps:
  - boot: {server: vm1, flavor: pin2}
    expect: {pinned_cpus: {h1: 2}}
  - run_periodic: update_available_resource
  - delete: vm1
"""


class TestProcessMode(testing.TestCase):

    def run_scenario(self):
        scenario = scenario_mod.parse(scenario_mod.safe_load(BOOT), 'boot')
        seen = _Executors()
        timeline = runner.run(scenario, test_id=self.id(), observers=[seen])
        return timeline, seen.executor

    def test_nova_runs_in_the_process_mode(self):
        timeline, executor = self.run_scenario()
        from nova import monkey_patch
        from nova import utils
        self.assertEqual(mode.MODE, concurrency.running_mode())
        self.assertEqual(mode.MODE, timeline.concurrency)
        self.assertIn('Nova in %s mode' % mode.MODE, timeline.render())
        if mode.THREADING:
            self.assertFalse(monkey_patch.is_patched())
            self.assertTrue(utils.concurrency_mode_threading())
            self.assertEqual(service_backend.BackendType.THREADING,
                             service_backend.get_backend_type())
            self.assertIs(futurist.ThreadPoolExecutor, type(executor))
            # Nothing imported eventlet, and Nova's poison refuses it.
            self.assertNotIn('eventlet', sys.modules)
            error = self.assertRaises(ImportError, importlib.import_module,
                                      'eventlet')
            self.assertIn('native threading mode', str(error))
        else:
            self.assertTrue(monkey_patch.is_patched())
            self.assertFalse(utils.concurrency_mode_threading())
            self.assertEqual(service_backend.BackendType.EVENTLET,
                             service_backend.get_backend_type())
            self.assertIs(futurist.GreenThreadPoolExecutor, type(executor))


class _Executors(object):
    """Observer: Nova's default executor, read while the cloud runs.

    Its executors are the cloud's (reset when it goes): one made outside
    a cloud would outlive every test after it.
    """

    executor = None

    def run_done(self, scenario, timeline):
        from nova import thread_pool_factory
        self.executor = thread_pool_factory.get_executor(
            thread_pool_factory.ExecutorType.DEFAULT)
