"""A cast whose call got no reply in time is an error of ours.

Nova's ``CastAsCallFixture`` makes every cast a call, which waits for its
reply ``rpc_response_timeout`` seconds of the wall clock. If that runs
out while the handler still runs, the sender goes on without it and the
harness's waits (which follow executor tasks, not RPC handlers) do not
see it: ``nova_env.CastsWaited`` hands that to ``unanswered`` and the
cloud's next wait for Nova raises it (``Activity.unanswered``). Here
through oslo.messaging's own fake transport, an RPC server whose
handler waits for an event the test sets only afterwards; no Nova
service runs.
"""

# Nova's eventlet patching first (threads below are greenthreads then).
from harness.cloud import nova_env  # noqa: F401,I100

import threading  # noqa: E402

from oslo_config import cfg  # noqa: E402
import oslo_messaging  # noqa: E402
from oslo_messaging import conffixture  # noqa: E402

from harness.cloud import activity  # noqa: E402
from harness.core import errors  # noqa: E402
from harness import testing  # noqa: E402

# Seconds the call waits for its reply; the handler is held past it.
REPLY_TIMEOUT = 0.5


class _Held(object):
    """An endpoint whose ``held`` waits until the test lets it end."""

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()

    def held(self, ctxt):
        self.started.set()
        # Bounded, so a broken test cannot leave it behind for good.
        self.release.wait(30)


def _call(client, ctxt, method, **kwargs):
    # What CastAsCallFixture turns a cast into.
    return client.call(ctxt, method, **kwargs)


class TestUnansweredCasts(testing.TestCase):

    def setUp(self):
        super().setUp()
        conf = cfg.ConfigOpts()
        # oslo.messaging's options on a configuration of the test's own.
        self.useFixture(conffixture.ConfFixture(conf))
        transport = oslo_messaging.get_rpc_transport(conf, url='fake:/')
        self.addCleanup(transport.cleanup)
        target = oslo_messaging.Target(topic='compute', server='host1')
        self.endpoint = _Held()
        server = oslo_messaging.get_rpc_server(
            transport, target, [self.endpoint], executor='threading')
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        self.addCleanup(self.endpoint.release.set)
        self.client = oslo_messaging.get_rpc_client(
            transport, target, timeout=REPLY_TIMEOUT)
        self.told = []
        self.casts = nova_env.CastsWaited(None, unanswered=self.told.append)
        # What CastsWaited's set-up gives it; no Nova fixture is needed.
        self.casts.failures = []

    def test_a_cast_left_running_is_told(self):
        self.casts.run(_call, self.client, {}, 'held', {})
        self.assertTrue(self.endpoint.started.is_set())
        self.assertEqual(1, len(self.told))
        self.assertIsInstance(self.told[0], errors.OperationTimeout)
        self.assertIn('the cast held to host1 had no reply', str(self.told[0]))
        # Still kept as the receiving side's, as any cast's failure is.
        self.assertEqual(['held'], [m for m, _ in self.casts.failures])

    def test_a_compute_that_died_is_no_such_cast(self):
        # harness.cloud.dying answers for a dead compute's handler at once.
        def died(client, ctxt, method, **kwargs):
            raise oslo_messaging.MessagingTimeout(
                'No reply: nova-compute on host1 died handling the message')
        self.casts.run(died, self.client, {}, 'held', {})
        self.assertEqual([], self.told)
        self.assertEqual(['held'], [m for m, _ in self.casts.failures])

    def test_the_next_wait_for_nova_raises_it(self):
        waits = self.useFixture(activity.Activity())
        self.casts.unanswered = waits.unanswered.append
        self.casts.run(_call, self.client, {}, 'held', {})
        self.assertRaisesRegex(errors.OperationTimeout,
                               'the cast held to host1 had no reply',
                               waits.wait_idle, 1, lambda: '')
        # Raised once: the next wait finds nothing left.
        waits.wait_idle(1, lambda: '')
