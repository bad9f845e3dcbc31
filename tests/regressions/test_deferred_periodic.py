"""A periodic injected inside a resource tracker's lock runs when it frees.

``scenarios/deferred_periodic_lp1944759.yaml`` injects a periodic on the
source inside the destination's resize claim. The harness defers it to
the moment the claim releases the lock, as a real periodic would wait
there, which is before the window LP#1944759 needs. With that bug put
back, the scenario must still pass, in every run: the bug is the witness
that the periodic did not run inside the window. It is not the bug's
reproduction (``harness/bugs/lp1944759.yaml`` is), so it is neither in
the package nor run by ``harness reproduce`` or the bite proof.
"""

import os

from harness import bugs
from harness.core import scenario as scenario_mod
from harness import testing

DEFERRED = scenario_mod.load(os.path.join(
    os.path.dirname(__file__), 'scenarios',
    'deferred_periodic_lp1944759.yaml'))[0]


class TestPeriodicDeferredByClaim(testing.ScenarioTestCase):

    @bugs.related_bug('1944759')
    def test_bug_1944759_periodic_deferred_by_the_claim_runs_before_window(
            self):
        # With the bug put back: the periodic waits for the destination's
        # claim to release the tracker's lock and runs then, before the
        # window opens (see the scenario file), in every run.
        self.run_scenario(DEFERRED,
                          fixtures=[bugs.get('1944759').reintroduce()])
