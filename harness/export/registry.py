"""A registry of translation units by name (a step kind, a key)."""


class Unsupported(Exception):
    """A field or value of a known kind or key: no faithful translation.

    The exporter names it in its refusal.
    """


class Registry(object):

    def __init__(self):
        self._units = {}

    def translates(self, name):
        """Decorator: register the function as ``name``'s unit."""
        def register(func):
            self._units[name] = func
            return func
        return register

    def get(self, name):
        """The unit of ``name``, or None."""
        return self._units.get(name)

    def names(self):
        return tuple(sorted(self._units))
