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

import sys

import fixtures


class Reintroduction(fixtures.Fixture):
    """A bug put back: patches of Nova's code and nothing else.

    What a patch remembers lives for one call (a thread-local flag set and
    cleared around it), so nothing carries from one run to the next: a
    ``reuse.CloudPool`` may keep the fixture in place with its cloud for
    every later run with the same bug put back.
    """

    stateless = True


class SkippedWhenCalledFrom(fixtures.Fixture):
    """``cls.name`` does nothing (returns ``result``) for some callers.

    When the nearest caller outside fixtures' own wrapper is one of the
    functions ``callers`` of module ``module``, the method returns
    ``result`` without running; for every other caller it runs as
    installed. For a bug whose fix added one call of a clean-up in one
    place: the reintroduction skips that call there and nowhere else, and
    keeps no state between calls.
    """

    def __init__(self, cls, name, module, callers, result=None):
        super().__init__()
        self.cls, self.name, self.module = cls, name, module
        self.callers = frozenset(callers)
        self.result = result

    def _setUp(self):
        real = getattr(self.cls, self.name)
        module_file = self.module.__file__
        patch_file = sys.modules[fixtures.MonkeyPatch.__module__].__file__
        callers, result = self.callers, self.result

        def skipped(obj, *args, **kwargs):
            frame = sys._getframe(1)
            while frame.f_code.co_filename == patch_file:
                frame = frame.f_back
            caller = frame.f_code
            if caller.co_filename == module_file and \
                    caller.co_name in callers:
                return result
            return real(obj, *args, **kwargs)

        skipped.__name__ = self.name
        self.useFixture(fixtures.MonkeyPatch('%s.%s.%s' % (
            self.cls.__module__, self.cls.__name__, self.name), skipped))
