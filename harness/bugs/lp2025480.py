"""LP#2025480 put back into Nova: a periodic untracks an unshelving server.

Its reintroduction fixture, for ``harness reproduce 2025480``, the bite
proof (tests/regressions/test_bites.py) and ``--reintroduce 2025480``;
the bug's story and scenarios are in ``lp2025480.yaml`` next to it.
"""

import fixtures

from harness.bugs import base


class UnshelvingServerResourcesRemovable(base.Reintroduction):
    """LP#2025480 as it was: SHELVED_OFFLOADED always meant "free it".

    Fixed by f1dc4ec39bcfda1bd4b97e233a9da498b6378c4f ("Do not untrack
    resources of a server being unshelved", master, 2024.1 Caracal).
    Before it, the resource tracker (``_update_usage_from_instance``,
    ``_update_usage_from_instances``) and ``Stats`` freed an instance's
    resources when its vm_state was in ``vm_states.ALLOW_RESOURCE_REMOVAL``
    (DELETED, SHELVED_OFFLOADED), whatever its task_state. The fix replaced
    that list with ``vm_states.allow_resource_removal(vm_state,
    task_state)``, which keeps a SHELVED_OFFLOADED instance that is
    spawning (being unshelved after its claim) counted.

    This fixture makes ``allow_resource_removal`` ignore the task state
    again, its one addition; every caller looks it up on the module at
    call time.
    """

    def _setUp(self):
        from nova.compute import vm_states

        real = vm_states.allow_resource_removal

        def allow_resource_removal(vm_state, task_state=None):
            return real(vm_state, task_state=None)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.vm_states.allow_resource_removal',
            allow_resource_removal))
