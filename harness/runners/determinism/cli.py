"""``harness determinism``: the command, its options and its output.

See the package's docstring (``harness.runners.determinism``) for what
it does; ``main`` parses and checks the options (one line and exit 2 for
a bad one, before anything runs), runs the check with busy processes
alongside, prints the table, the divergences and the summary line, and
writes the JSON report and the dumps.
"""

import json
import os
import re
import signal
import sys

from harness.core import concurrency
from harness.core import errors
from harness.runners import determinism
from harness.runners.determinism import check
from harness.runners.determinism import compare
from harness.runners.determinism import pool
from harness.runners.determinism import report as report_mod
from harness.runners.determinism import suite
from harness.runners import options

EXIT_OK, EXIT_FLAKY, EXIT_INTERRUPTED = 0, 1, 130
#: The numeric options' smallest values, and how a refusal words them.
AT_LEAST = (('runs', 1, 'at least 1'), ('busy', 0, '0 or more'),
            ('timeout', 1, 'at least 1 s'), ('recycle', 0, '0 or more'),
            ('workers', 0, '0 or more'))


def build_parser(prog=determinism.PROG):
    parser = options.Parser(
        prog=prog,
        description='Run every scenario and regression test N times; '
                    'report those whose verdict, timeline or race points '
                    'change.',
        parents=[options.common_options(options.RUNNING)])
    parser.add_argument('--runs', type=int, default=50,
                        help='runs per test (default 50)')
    parser.add_argument('--busy', type=int, default=0, metavar='K',
                        help='keep K CPU-burning processes running '
                             'meanwhile (default 0)')
    parser.add_argument('--workers', type=int, default=2,
                        help='worker processes (default 2; 0 runs in this '
                             'process)')
    parser.add_argument('--select', metavar='REGEX',
                        help='only tests whose ID this finds')
    parser.add_argument('--json', metavar='OUT',
                        help='write every run and the summary here')
    parser.add_argument('--timeout', type=int, default=900, metavar='S',
                        help='a run with no result after S seconds is '
                             'recorded as hung and its worker replaced '
                             '(default 900)')
    parser.add_argument('--recycle', type=int, default=0, metavar='N',
                        help='replace a worker process after N runs '
                             '(default 0: never; each keeps running)')
    parser.add_argument('--dump', metavar='DIR',
                        help='write the distinct timelines and recordings '
                             'of each flaky (or, with --hash-seeds, '
                             'seed-dependent) test here')
    parser.add_argument('--resume', metavar='REPORT',
                        help='a --json report of an interrupted check of '
                             'the same code: its runs count as done')
    parser.add_argument('--quiet', action='store_true',
                        help='no line per run')
    parser.add_argument('--hash-seeds', metavar='S1,S2,...',
                        help='run N under Python hash seed '
                             'S[(N-1) mod len(S)] (integers 0..%s, no '
                             'repeats; needs --workers 1 or more): Nova '
                             'chooses between equals by set order, so a '
                             'timeline may follow the seed (listed as '
                             'seed-dependent) but a verdict must not '
                             '(flaky). Default: the pinned seed of this '
                             'process' % pool.MAX_HASH_SEED)
    parser.add_argument('--scenarios', action='append', metavar='DIR',
                        help='run the tests harness.testing.build_tests '
                             'builds from this folder (or file) of '
                             'scenario files; again for more (default: '
                             'the checkout\'s %s, when the harness runs '
                             'from a checkout)' % suite.CHECKOUT_SCENARIOS)
    parser.add_argument('--no-bugs', action='store_true',
                        help='leave out the tests of the bug registry '
                             '(harness/bugs), which run by default')
    parser.add_argument('--tests', action='append', metavar='NAME',
                        help='run the tests of this module too, or of '
                             'every %s module of this package (a dotted '
                             'name importable from the checkout); again '
                             'for more' % suite.TEST_FILES)
    return parser


def parse_args(argv, prog=determinism.PROG):
    """Parsed and checked arguments; ``UsageError`` for anything wrong."""
    args = build_parser(prog).parse_args(argv)
    for name, least, words in AT_LEAST:
        if getattr(args, name) < least:
            raise options.UsageError('--%s must be %s, not %d'
                                     % (name, words, getattr(args, name)))
    if args.select:
        try:
            re.compile(args.select)
        except re.error as exc:
            raise options.UsageError(
                '--select %r is not a regular expression: %s'
                % (args.select, exc))
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory):
            raise options.UsageError('--json %s: no directory %s'
                                     % (args.json, directory))
    if args.dump and os.path.exists(args.dump) and not os.path.isdir(
            args.dump):
        raise options.UsageError('--dump %s: not a directory' % args.dump)
    if args.hash_seeds is not None:
        args.hash_seeds = pool.check_hash_seeds(
            pool.parse_hash_seeds(args.hash_seeds), args.workers)
    if args.scenarios:
        # As paths from anywhere: a resumed check compares them.
        args.scenarios = [os.path.abspath(path) for path in args.scenarios]
    if args.concurrency == 'both':
        raise options.UsageError('--concurrency both: one mode per check '
                                 '(run it once in each)')
    if args.concurrency:
        # The workers are processes of their own: they take it from the
        # environment, before they import Nova.
        try:
            concurrency.choose(args.concurrency)
        except errors.SetupError as exc:
            raise options.UsageError(str(exc))
    return args


def main(argv=None, out=None, prog=determinism.PROG):
    """The command: ``harness determinism`` (see the package docstring).

    ``argv`` are the options after the verb. Bad arguments are one line
    on stderr, ``PROG: message``, and exit 2 before anything runs.
    """
    out = out or sys.stdout

    def say(line):
        print(line, file=out, flush=True)

    try:
        args = parse_args(sys.argv[1:] if argv is None else argv, prog)
        sources = suite.sources(args.scenarios, not args.no_bugs,
                                args.tests or ())
        identity = report_mod.code_identity(scenarios=args.scenarios or ())
        earlier = (report_mod.load_report(args.resume, args, identity)
                   if args.resume else None)
    except options.UsageError as exc:
        print('%s: %s' % (prog, exc), file=sys.stderr)
        return options.EXIT_BAD_INPUT
    # SIGTERM, and SIGINT even when a shell started this in the background
    # with SIGINT ignored, stop the check as Ctrl-C does: the runs so far
    # are reported (and written to --json, for --resume).
    previous = {signum: signal.getsignal(signum)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, signal.default_int_handler)
    try:
        if not args.quiet:
            # Every worker runs Nova in this mode (its environment's).
            say('Nova in %s mode' % concurrency.chosen())
        with pool.Burners(args.busy):
            if args.busy:
                say('%d busy processes burning CPU' % args.busy)
            report = check.check(
                args.runs, args.workers, args.select,
                progress=None if args.quiet else say, timeout=args.timeout,
                recycle=args.recycle, previous=earlier,
                status=None if args.quiet else sys.stderr,
                hash_seeds=args.hash_seeds, sources=sources)
    except options.UsageError as exc:
        print('%s: %s' % (prog, exc), file=sys.stderr)
        return options.EXIT_BAD_INPUT
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    summaries = report.summaries
    say('')
    for line in (compare.table(summaries) if summaries
                 else ['no run finished']):
        say(line)
    for summary in summaries:
        if summary.flaky:
            say('')
            for line in summary.divergence():
                say(line)
    for line in compare.seed_dependence_section(summaries):
        say(line)
    if report.orphans:
        say('')
        say('not run by any test (so not checked): %s'
            % ', '.join(report.orphans))
    if report.hangs:
        say('')
        for hang in report.hangs:
            say('%s run %d hung (no result within %d s); its greenthreads\' '
                'stacks: %s' % (hang['item'], hang['number'],
                                hang['timeout'], hang.get('stacks_path')))
    if report.error:
        say('')
        say('determinism: %s' % report.error)
    say('')
    say(compare.summary_line(summaries, report.wall)
        + (' (%.0f s of it before --resume)' % report.earlier_wall
           if earlier else '')
        + (', %d hung' % len(report.hangs) if report.hangs else '')
        + (' (interrupted)' if report.interrupted else ''))
    if args.json:
        with open(args.json, 'w') as target:
            json.dump(report_mod.to_json(report, vars(args), identity),
                      target, indent=1)
    if args.dump:
        written = report_mod.dump(summaries, args.dump)
        if written:
            say('%d texts of flaky tests in %s' % (len(written), args.dump))
    if report.interrupted:
        return EXIT_INTERRUPTED
    if report.error or report.hangs or any(s.flaky for s in summaries):
        return EXIT_FLAKY
    return EXIT_OK
