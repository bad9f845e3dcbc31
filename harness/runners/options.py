"""What the harness's command lines share: their options and their error.

``harness`` (``harness.runners.cli``) and ``harness determinism``
(``harness.runners.determinism.cli``) build their parsers from here: a
parser whose usage errors are ``UsageError`` (each command words it as
one line and exits 2, before anything runs), and the option groups more
than one command takes, each listed once.
"""

import argparse

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """Bad arguments: one message, exit 2.

    ``parser``: the (sub)parser that refused them, for its usage line.
    """

    def __init__(self, message, parser=None):
        super().__init__(message)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors raised as ``UsageError``.

    argparse would print and exit; the command decides how the one line
    reads and returns exit 2 itself. Sub-parsers are of this class too.
    """

    def error(self, message):
        raise UsageError(message, self)


# Each group: (flags, add_argument keywords) per option.

#: Where output goes: every ``harness`` verb but determinism.
OUTPUT = (
    (('--verbose',), dict(
        action='store_true',
        help='show Nova\'s logs and third-party warnings on the terminal '
             'too')),
    (('--log',), dict(
        metavar='FILE', default=None,
        help='where Nova\'s logs and third-party warnings go (default: a '
             'new file in $XDG_CACHE_HOME/harness/logs)')),
)
#: An HTML report per scenario: the verbs that run scenarios themselves.
REPORT = (
    (('--report',), dict(
        metavar='DIR', default=None,
        help='write an HTML report per scenario here')),
)
#: What every command that runs scenarios takes (``harness run``,
#: ``explore``, ``reproduce`` and ``determinism``): an option they all
#: share is one line here.
RUNNING = (
    (('--concurrency',), dict(
        choices=('threading', 'eventlet', 'both'), default=None,
        help='run Nova in native threading or under eventlet (default: '
             'as the installed release deploys it, HARNESS_CONCURRENCY '
             'if set); "both" (harness run): each scenario in each mode, '
             'in processes of their own, compared step by step')),
)


def common_options(*groups):
    """A parent parser (``parents=[...]``) with the options of ``groups``."""
    parent = Parser(add_help=False)
    for group in groups:
        for flags, keywords in group:
            parent.add_argument(*flags, **keywords)
    return parent
