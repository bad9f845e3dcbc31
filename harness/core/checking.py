"""Checking untrusted scenario data: one error naming file, step, field.

``Checker`` is what the loader, the expectations and every step kind use
to read a scenario's YAML: each method returns the value when it is of
the kind asked for, or raises ``ScenarioError`` naming where it is.
"""

import os_resource_classes

from harness.core import errors
from harness.core import names


def kind(value):
    return {dict: 'a mapping', list: 'a list', str: 'a string',
            type(None): 'nothing'}.get(type(value), type(value).__name__)


class Checker(object):
    """Raises ScenarioError naming the file, the step and the field."""

    def __init__(self, where, step=None, prefix=''):
        self.where = where
        self.step = step
        self.prefix = prefix

    def at_step(self, index):
        return Checker(self.where, index)

    def field(self, name):
        return Checker(self.where, self.step, self._name(name) + '.')

    def _name(self, field):
        field = str(field) if isinstance(field, (str, int, float, bool)) \
            else errors.show(field)
        if field in ('', 'the step'):
            # A problem with the whole value: name the value itself.
            return self.prefix.rstrip('.') or field
        return self.prefix + field

    def fail(self, field, message):
        step = ', step %d' % self.step if self.step else ''
        raise errors.ScenarioError('%s%s, field "%s": %s' % (
            self.where, step, self._name(field), message))

    def mapping(self, value, field):
        if not isinstance(value, dict):
            self.fail(field, 'expected a mapping, got %s' % kind(value))
        return value

    def sequence(self, value, field):
        if not isinstance(value, list):
            self.fail(field, 'expected a list, got %s' % kind(value))
        return value

    def string(self, value, field):
        if not isinstance(value, str) or not value:
            self.fail(field, 'expected a name, got %s' % kind(value))
        return value

    def integer(self, value, field, minimum=None, maximum=10 ** 12):
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, 'expected a whole number, got %s'
                      % kind(value))
        if minimum is not None and value < minimum:
            self.fail(field, 'must be at least %d, got %s'
                      % (minimum, errors.show(value)))
        if value > maximum:
            self.fail(field, 'must be at most %d, got %s'
                      % (maximum, errors.show(value)))
        return value

    def keys(self, value, allowed, required=(), field=''):
        for key in value:
            if key not in allowed:
                self.fail((field + '.' if field else '') + errors.show(key)
                          if not isinstance(key, str) else
                          (field + '.' if field else '') + key,
                          'unknown field; expected one of: %s'
                          % ', '.join(allowed))
        for key in required:
            if key not in value:
                self.fail((field + '.' if field else '') + key,
                          'missing')

    def known(self, value, names, field, noun=None):
        self.string(value, field)
        if value not in names:
            self.fail(field, 'unknown %s %s; known: %s' % (
                noun or field.rsplit('.', 1)[-1], errors.show(value),
                ', '.join(sorted(str(name) for name in names)) or 'none'))
        return value

    def resource_class(self, value, field):
        if not isinstance(value, str) or (
                value not in os_resource_classes.STANDARDS
                and not names.CUSTOM_RC.match(value)):
            self.fail(field, 'unknown resource class %s'
                      % errors.show(value))
        return value
