"""Reading YAML that anyone may have written: safely, or with our error.

Scenario files and host profiles are input. They are parsed with PyYAML's
safe loader (no Python tags), with YAML 1.2 booleans (``on``, ``off``,
``yes`` and ``no`` stay text, so ``inject: {on: source}`` means what it
says), with duplicate keys refused, and then walked once: a number too
long to print or a document that expands to more than ``MAX_VALUES``
values (an alias bomb) is refused before anything formats or copies it.
Whatever PyYAML raises while building values becomes our error too.
"""

import re

import yaml

BOOL_TAG = 'tag:yaml.org,2002:bool'
MERGE_TAG = 'tag:yaml.org,2002:merge'
MAX_VALUES = 100000
MAX_DIGITS = 18


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader; YAML 1.2 booleans; no duplicate keys."""


def _mapping_without_duplicates(loader, node, deep=False):
    if not isinstance(node, yaml.MappingNode):
        raise yaml.constructor.ConstructorError(
            None, None, 'expected a mapping here', node.start_mark)
    keys = set()
    for key_node, _ in node.value:
        if key_node.tag == MERGE_TAG:
            # "<<: *anchor": construct_mapping merges it; the keys given
            # here may override merged ones, as YAML says.
            continue
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool, type(None))):
            raise yaml.constructor.ConstructorError(
                'while reading a mapping', node.start_mark,
                'a key must be a plain value', key_node.start_mark)
        if key in keys:
            raise yaml.constructor.ConstructorError(
                'while reading a mapping', node.start_mark,
                'the key %s is given twice' % _short(key),
                key_node.start_mark)
        keys.add(key)
    return loader.construct_mapping(node, deep=deep)


def _short(value):
    if isinstance(value, int) and not isinstance(value, bool) and \
            abs(value) >= 10 ** MAX_DIGITS:
        return 'a very large number'
    return repr(value)[:60]


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _mapping_without_duplicates)
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    BOOL_TAG, re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$'),
    list('tTfF'))


def parse(text):
    """Parse YAML text with the loader above (may raise PyYAML's errors)."""
    return yaml.load(text, Loader=_Loader)  # nosec - _Loader is safe


def load(text, path, error):
    """Parse ``text`` from file ``path``; problems raise ``error(message)``.

    The message names the file (and the line, where PyYAML knows it).
    """
    try:
        document = parse(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = (' (line %d, column %d)' % (mark.line + 1, mark.column + 1)
                 if mark else '')
        raise error('%s: not valid YAML%s: %s' % (
            path, where, getattr(exc, 'problem', None) or exc))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError,
            RecursionError, OverflowError) as exc:
        # PyYAML's constructors raise these for values they cannot build
        # (a 13th month, "!!int abc", "!!int " with nothing after it, a
        # 5000-digit number, deep nesting).
        raise error('%s: not valid YAML: a value cannot be read (%s)'
                    % (path, type(exc).__name__))
    problem = _walk(document)
    if problem:
        raise error('%s: %s' % (path, problem))
    return document


def _walk(document):
    """The first thing in ``document`` nothing should format or copy."""
    count = 0
    stack = [document]
    while stack:
        value = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return ('more than %d values (aliases that expand without '
                    'end?); refused' % MAX_VALUES)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and abs(value) >= 10 ** MAX_DIGITS:
            return 'a number with more than %d digits; refused' % MAX_DIGITS
        if isinstance(value, float) and value != value:
            return 'a number that is not a number (.nan); refused'
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None
