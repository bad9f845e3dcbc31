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
import threading
import types

import fixtures


class Reintroduction(fixtures.Fixture):
    """A bug put back: patches of Nova's code and nothing else.

    What a patch remembers lives for one call (a thread-local flag set and
    cleared around it: ``Inside``, ``RaisedIn``), so nothing carries from
    one run to the next: a ``reuse.CloudPool`` may keep the fixture in
    place with its cloud for every later run with the same bug put back.
    """

    stateless = True


def patch_method(fixture, cls, name, func):
    """Put ``func`` in place of ``cls.name`` for ``fixture``'s life."""
    func.__name__ = name
    fixture.useFixture(fixtures.MonkeyPatch('%s.%s.%s' % (
        cls.__module__, cls.__name__, name), func))


def caller_outside_patch(frame):
    """The code of the function ``frame`` runs, skipping fixtures' own.

    ``MonkeyPatch`` wraps a function it puts on a class, so the caller of
    a patched method may be its wrapper: the nearest frame above that is
    not in fixtures' module is the caller meant.
    """
    patch_file = sys.modules[fixtures.MonkeyPatch.__module__].__file__
    while frame.f_code.co_filename == patch_file:
        frame = frame.f_back
    return frame.f_code


class Inside(fixtures.Fixture):
    """Knows, per thread, whether ``cls.name`` is running in it.

    While a call of the method runs, ``call()`` in that call's thread
    gives a record of its own (a ``types.SimpleNamespace`` the
    reintroduction may note things on); anywhere else, before or after,
    it gives None. Per thread (``threading.local``): Nova's services run
    their work in threads of their own (native threads in Nova 34), and
    a call in one says nothing of the others.
    """

    def __init__(self, cls, name):
        super().__init__()
        self.cls, self.name = cls, name
        self._local = threading.local()

    def _setUp(self):
        real = getattr(self.cls, self.name)
        local = self._local

        def inside(obj, *args, **kwargs):
            outer = getattr(local, 'call', None)
            local.call = types.SimpleNamespace()
            try:
                return real(obj, *args, **kwargs)
            finally:
                local.call = outer

        patch_method(self, self.cls, self.name, inside)

    def call(self):
        """The record of the innermost call running in this thread."""
        return getattr(self._local, 'call', None)

    def running(self):
        """Whether the method is running in this thread."""
        return self.call() is not None


class RaisedIn(fixtures.Fixture):
    """Knows, per thread, whether the last call of ``cls.name`` raised.

    ``take()`` says whether this thread's latest call raised one of
    ``errors`` (an exception class or a tuple of them), once: it forgets
    it as it tells (the next call of the method forgets it too).
    """

    def __init__(self, cls, name, errors=(Exception,)):
        super().__init__()
        self.cls, self.name, self.errors = cls, name, errors
        self._local = threading.local()

    def _setUp(self):
        real = getattr(self.cls, self.name)
        local, errors = self._local, self.errors

        def watched(obj, *args, **kwargs):
            local.raised = False
            try:
                return real(obj, *args, **kwargs)
            except errors:
                local.raised = True
                raise

        patch_method(self, self.cls, self.name, watched)

    def take(self):
        """Whether this thread's last call raised; true once only."""
        raised = getattr(self._local, 'raised', False)
        self._local.raised = False
        return raised


class Replaced(fixtures.Fixture):
    """``cls.name`` does something else whenever ``when()`` says so.

    ``when`` is asked at every call, in the caller's thread (an
    ``Inside``'s ``running``, a ``RaisedIn``'s ``take``). Then the method
    returns ``instead(obj, *args, **kwargs)``, or without ``instead``
    ``result``, without running; otherwise it runs as installed.
    """

    def __init__(self, cls, name, when, result=None, instead=None):
        super().__init__()
        self.cls, self.name, self.when = cls, name, when
        self.result, self.instead = result, instead

    def _setUp(self):
        real = getattr(self.cls, self.name)
        when, result, instead = self.when, self.result, self.instead

        def replaced(obj, *args, **kwargs):
            if not when():
                return real(obj, *args, **kwargs)
            if instead is not None:
                return instead(obj, *args, **kwargs)
            return result

        patch_method(self, self.cls, self.name, replaced)


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
        callers, result = self.callers, self.result

        def skipped(obj, *args, **kwargs):
            caller = caller_outside_patch(sys._getframe(1))
            if caller.co_filename == module_file and \
                    caller.co_name in callers:
                return result
            return real(obj, *args, **kwargs)

        patch_method(self, self.cls, self.name, skipped)
