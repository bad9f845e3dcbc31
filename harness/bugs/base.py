"""What every bug's reintroduction fixture is.

Each one restores the behaviour Nova had before a bug's fix, with the
narrowest patch that does it, and names the fixing commit. A regression
test earns its place when it passes on Nova as installed and fails under
its bug's fixture. They are for that proof, for ``harness reproduce``
and for ``--reintroduce`` (``harness run``, ``harness explore``).

Each lives in its bug's module, ``harness/bugs/lp<ID>.py``, next to the
bug's scenarios and story (``lp<ID>.yaml``); the registry
(``harness.bugs``) finds it there as the one ``Reintroduction`` subclass
the module defines.
"""

import fixtures


class Reintroduction(fixtures.Fixture):
    """A bug put back: patches of Nova's code and nothing else.

    What a patch remembers lives for one call (a thread-local flag set and
    cleared around it), so nothing carries from one run to the next: a
    ``reuse.CloudPool`` may keep the fixture in place with its cloud for
    every later run with the same bug put back.
    """

    stateless = True
