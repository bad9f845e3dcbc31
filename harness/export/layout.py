"""An exported module's lines within 79 columns, as Nova's style checks ask.

``wrap(line)`` breaks one long line of generated code the way Nova's
tests are written: a call's or a literal's items on hanging-indented
lines after its opening bracket, a long string as adjacent literals, a
comment as several. ``fit(source)`` wraps each line of a module and
checks that the module still parses to the same tree: the layout never
changes what a test does.
"""

import ast
import io
import textwrap
import tokenize

WIDTH = 79
_OPEN = {'(': ')', '[': ']', '{': '}'}


class LayoutChanged(Exception):
    """Wrapping would have changed what the module does: a bug of ours."""


def fit(source, width=WIDTH):
    """``source`` with every line wrapped to ``width`` columns.

    Lines inside a multi-line string are left as they are.
    """
    lines, inside = [], set(_string_lines(source))
    for number, line in enumerate(source.split('\n'), 1):
        lines += [line] if number in inside else wrap(line, width)
    fitted = '\n'.join(lines)
    try:
        same = ast.dump(ast.parse(fitted)) == ast.dump(ast.parse(source))
    except SyntaxError:
        same = False
    if not same:
        raise LayoutChanged('wrapping the exported module to %d columns '
                            'would change it' % width)
    return fitted


def _string_lines(source):
    """Numbers of the lines a multi-line string continues onto."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            yield from range(token.start[0] + 1, token.end[0] + 1)


def wrap(line, width=WIDTH):
    """``line`` as lines of at most ``width`` columns, where it can be."""
    if len(line) <= width:
        return [line]
    indent = ' ' * (len(line) - len(line.lstrip()))
    text = line.strip()
    if text.startswith('#'):
        return textwrap.wrap(text.lstrip('# '), width,
                             initial_indent=indent + '# ',
                             subsequent_indent=indent + '# ',
                             break_long_words=False, break_on_hyphens=False)
    tokens = _tokens(text)
    if tokens is None:
        return [line]
    if len(tokens) <= 2 and tokens[0][0] == tokenize.STRING:
        # A string alone (a list's item): adjacent literals.
        return _split_string(tokens[0][1], indent, text[tokens[0][3]:],
                             width)
    # The items of a bracket an earlier line opened: on lines of their
    # own at this indent, what closes that bracket after the last.
    end = _unopened(text, tokens)
    body, tail = (text, '') if end is None else (text[:end], text[end:])
    items = _items(body, _tokens(body))
    if len(items) > 1:
        return _fill(items, indent, tail, width)
    bracket = _hanging(text, tokens)
    if bracket is not None:
        start, end = bracket
        head, tail = text[:start + 1], text[end:]
        items = _items(text[start + 1:end], _tokens(text[start + 1:end]))
        return ([indent + head]
                + _fill(items, indent + '    ', tail, width))
    return [line]


def _tokens(text):
    """``[(type, string, start column, end column)]`` of ``text``.

    None if it does not tokenize as a line (a string left open).
    """
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL,
                              tokenize.ENDMARKER, tokenize.INDENT,
                              tokenize.DEDENT):
                continue
            found.append((token.type, token.string, token.start[1],
                          token.end[1]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # A fragment of a statement: its brackets close on other lines.
        if not found:
            return None
    return found


def _hanging(text, tokens):
    """``(open, close)`` of the first bracket the line ends inside.

    The first opening bracket of a call or a literal (not a subscript)
    whose closing one is followed only by closing brackets, commas or a
    colon: its items go on the next lines. Closing brackets the line
    does not open close a bracket of an earlier line.
    """
    stack, pairs = [], {}
    previous = None
    for kind, string, start, _ in tokens:
        if kind == tokenize.OP and string in _OPEN:
            subscript = string == '[' and previous is not None and (
                previous[0] in (tokenize.NAME, tokenize.STRING)
                or previous[1] in (')', ']'))
            stack.append((start, subscript))
        elif kind == tokenize.OP and string in _OPEN.values() and stack:
            at, subscript = stack.pop()
            if not subscript:
                pairs[at] = start
        previous = (kind, string)
    for kind, string, start, _ in tokens:
        if start in pairs:
            close = pairs[start]
            rest = text[close:].replace(' ', '')
            if (close > start + 1
                    and all(char in ')]},:' for char in rest)):
                return start, close
    return None


def _items(text, tokens):
    """``text`` split at its commas outside brackets and strings.

    Closing brackets the text does not open end it: they are left out
    (the caller's tail).
    """
    items, depth, begin = [], 0, 0
    for kind, string, start, end in tokens or ():
        if kind != tokenize.OP:
            continue
        if string in _OPEN:
            depth += 1
        elif string in _OPEN.values():
            depth -= 1
            if depth < 0:
                break
        elif string == ',' and depth == 0:
            items.append(text[begin:end].strip())
            begin = end
    rest = text[begin:].strip()
    if rest:
        items.append(rest)
    return items


def _unopened(text, tokens):
    """Where the closing brackets the text does not open begin, or None."""
    depth = 0
    for kind, string, start, _ in tokens:
        if kind == tokenize.OP and string in _OPEN:
            depth += 1
        elif kind == tokenize.OP and string in _OPEN.values():
            depth -= 1
            if depth < 0:
                return start
    return None


def _fill(items, indent, tail, width):
    """``items`` packed on lines at ``indent``, ``tail`` after the last."""
    lines, line = [], ''
    for number, item in enumerate(items):
        last = number == len(items) - 1
        piece = item + (tail if last else '')
        if not line:
            candidate = indent + piece
        else:
            candidate = line + ' ' + piece
        if len(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        if len(indent + piece) <= width:
            line = indent + piece
        else:
            # One item still too long: its own brackets, or as it is.
            lines += wrap(indent + piece, width)
            line = ''
    if line:
        lines.append(line)
    return lines


def _split_string(literal, indent, rest, width):
    """A long string literal as adjacent ones at ``indent``.

    Split after spaces, each piece written as the literal was (its
    prefix and quotes), which Python joins back into one string.
    """
    value = ast.literal_eval(literal)
    if not isinstance(value, str) or literal[0] not in '\'"':
        return [indent + literal + rest]
    room = width - len(indent) - 3 - len(rest)
    pieces, piece = [], ''
    for word in value.split(' '):
        candidate = piece + (' ' if piece else '') + word
        if piece and len(repr(candidate + ' ')) > room:
            pieces.append(piece + ' ')
            piece = word
        else:
            piece = candidate
    pieces.append(piece)
    lines = [indent + repr(piece) for piece in pieces]
    lines[-1] += rest
    return lines
