"""What the harness's command lines share: their options and their error.

``harness`` (``harness.runners.cli``) and ``harness determinism``
(``harness.runners.determinism.cli``) build their parsers from here: a
parser whose usage errors are ``UsageError`` (each command words it as
one line and exits 2, before anything runs), and the option groups more
than one command takes, each listed once.
"""

import argparse
import math

EXIT_BAD_INPUT = 2
#: Seconds a replay of ``harness explore`` (forked, or in a worker
#: process) may run unless told otherwise (``--replay-timeout``;
#: ``harness.runners.branching``, ``harness.runners.workers``): as
#: long as ``harness determinism`` gives a whole run from the start (its
#: ``--timeout``), fifteen times the cloud's bound on any one wait, and
#: about eighty times the slowest replay measured (the bench scenario's,
#: 11 s on a loaded two-core machine).
REPLAY_TIMEOUT = 900.0


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


def seconds(value):
    """``value`` (a number or its text) as a bound in seconds.

    Raises ``ValueError``, worded for the user, for anything but a
    finite number above 0.
    """
    number = None
    if not isinstance(value, bool):
        try:
            number = float(value)
        except (TypeError, ValueError):
            pass
    if number is None or not math.isfinite(number) or number <= 0:
        raise ValueError('a number of seconds above 0, not %r' % (value,))
    return number


def seconds_option(text):
    """``seconds`` as an argparse ``type``: refused as argparse refuses."""
    try:
        return seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))
