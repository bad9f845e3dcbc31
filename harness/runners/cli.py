"""``harness``: run scenarios, list bugs, reproduce a bug, check determinism.

    harness run FILE...        run scenario files; a line per step, then
                               the timeline, for every scenario, then a
                               summary line; exit 0 when all pass, 1 when
                               one fails, 2 bad input. --fail-fast stops
                               at the first failure (and says how many
                               did not run)
    harness explore FILE...    inject periodics at every race point of
                               the moves in the scenarios, check, shrink
                               what fails; exit 0 clean, 1 found, 2 bad
                               input. --shard I/N replays shard I of N
                               and writes OUT/shard-I-of-N.json (exit 0
                               once written); --merge SHARD_FILE...
                               groups and shrinks them as one run does
    harness bugs               the registered bugs: title, link, fix
    harness reproduce BUG      run the bug's scenario on Nova as installed
                               and with the bug reintroduced, and show the
                               two allocation timelines side by side;
                               exit 0 when the bug shows only when
                               reintroduced, 1 otherwise, 2 for an
                               unknown bug; on a Nova that predates the
                               fix, exit 0 when the bug shows as
                               released. --nova-release N runs it on
                               the matrix's Nova N instead (the tox env
                               functional-novaN, made first with
                               ``tox -e functional-novaN --notest``)
    harness determinism [OPTIONS]
                               run every scenario and regression test N
                               times, report any whose verdict, timeline
                               or race points change; exit 0 steady, 1
                               flaky or hung, 2 bad arguments, 130
                               interrupted (``harness determinism -h``)

Bad input (a malformed scenario, an unknown bug, a ``[pci] alias`` Nova
would refuse to start on) is one message naming the file, the step and
the field, before any service starts. A service Nova does not start
for another reason fails its scenario with one line: the service and
Nova's error.

The terminal shows the harness's own lines only: third-party warnings and
Nova's logs go to a log file (``--log FILE``; by default a new one in
``$XDG_CACHE_HOME/harness/logs``, the last 20 kept), whose path is printed
when something fails; ``--verbose`` shows them on the terminal too.
``harness run`` writes there, after each scenario, Nova's own log records
of its run grouped by the service that logged them (WARNING and up; every
record with ``--verbose``): see ``harness.runners.nova_logs``.
``--report DIR`` writes an HTML report per scenario (``harness.report``;
``explore`` adds one of every interleaving tried). Progress of many
scenarios or replays goes to stderr.
"""

import argparse
import contextlib
import logging
import os
import sys
import time
import warnings

import fixtures as fixtures_lib

from harness.core import errors
from harness.runners import options
from harness.runners import standup

EXIT_PASS, EXIT_FAIL = 0, 1
EXIT_BAD_INPUT = options.EXIT_BAD_INPUT
EXIT_INTERRUPTED = 130


def build_parser():
    parser = options.Parser(prog='harness',
                            description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    common = options.common_options(options.OUTPUT, options.REPORT,
                                    options.RUNNING)
    run = sub.add_parser('run', help='run scenario files',
                         parents=[common])
    run.add_argument('files', nargs='+', metavar='FILE')
    run.add_argument('--no-invariants', action='store_true',
                     help='check only the scenarios\' own expectations')
    run.add_argument('--no-periodic-check', action='store_true',
                     help='skip the periodic-idempotence invariant')
    probe = run.add_mutually_exclusive_group()
    probe.add_argument('--capacity-probe', action='store_true',
                       default=None,
                       help='ask each host\'s tracker whether it takes '
                       'what Placement says still fits, while a window '
                       'excuses its lag and at the end (the default; '
                       'HARNESS_CAPACITY_PROBE=0 turns it off, =every '
                       'runs it after every step)')
    probe.add_argument('--no-capacity-probe', action='store_false',
                       dest='capacity_probe',
                       help='do not run the capacity probe')
    run.add_argument('--reintroduce', metavar='BUG',
                     help='run with this fixed bug put back into Nova')
    run.add_argument('--fail-fast', action='store_true',
                     help='stop at the first scenario that fails (by '
                     'default every scenario runs; --concurrency both '
                     'always runs every one)')
    # For --concurrency both: each mode's process records its timelines.
    run.add_argument('--record', metavar='FILE', default=None,
                     help=argparse.SUPPRESS)
    run.add_argument('--cloud-per-scenario', action='store_true',
                     help='stand up a cloud for every scenario (by '
                     'default scenarios of one shape share a cloud, put '
                     'back to its state before their first step)')
    explore = sub.add_parser(
        'explore', help='inject periodics at every race point of moves',
        parents=[common])
    explore.add_argument('files', nargs='+', metavar='SCENARIO',
                         help='scenario files (with --merge: shard files)')
    explore.add_argument('--tasks', default='',
                         help='more tasks to inject, comma separated: '
                              'periodic tasks (update_available_resource '
                              'is always tried), "restart" (restart the '
                              'source or destination at each point), '
                              '"delete_service" (delete its service there; '
                              'Nova must refuse)')
    explore.add_argument('--depth', type=int, default=None, choices=(1, 2),
                         help='injections per replay (default 1)')
    explore.add_argument('--reintroduce', metavar='BUG',
                         help='explore with this bug put back')
    explore.add_argument('--workers', type=int, default=None,
                         help='replay processes (default: one per core)')
    explore.add_argument('--limit', type=int, default=None,
                         help='at most this many replays per scenario')
    explore.add_argument('--out', default='explored',
                         help='where shrunk reproducers are written')
    explore.add_argument('--no-invariants', action='store_true')
    explore.add_argument('--cloud-per-replay', action='store_true',
                         help='stand up a cloud for every replay (by '
                         'default each process keeps one, put back to its '
                         'state before the first step between replays)')
    explore.add_argument('--prune', action='store_true',
                         help='state caching: prune a replay whose cloud '
                         'is, between steps, as one already explored with '
                         'the same steps left')
    explore.add_argument('--nested', action='store_true',
                         help='depth 2: fork the pairs that share their '
                         'first injection from one replay of it, where '
                         'their second fires')
    explore.add_argument('--shard', metavar='I/N', default=None,
                         help='replay only shard I of N (from 0) of the '
                         'interleavings (with --nested, the pairs of a '
                         'first injection in one shard); write '
                         'OUT/shard-I-of-N.json')
    explore.add_argument('--known-findings', metavar='DIR', default=None,
                         help='name the failures that are findings in DIR '
                         '(the same injections, failing alike) instead of '
                         'failing on them')
    explore.add_argument('--merge', action='store_true',
                         help='the files are the shard files of one '
                         'exploration: merge, group and shrink them')
    explore.add_argument('--replay-timeout', metavar='SECONDS',
                         type=options.seconds_option, default=None,
                         help='end the exploration if a replay (forked '
                         'or in a worker process) still runs after '
                         'SECONDS, with its stacks kept '
                         'in OUT (default %g)'
                         % options.REPLAY_TIMEOUT)
    export = sub.add_parser(
        'export', help='write scenarios as tests in another project',
        parents=[options.common_options(options.OUTPUT)])
    export.add_argument('format', choices=('nova-test', 'report'),
                        help='nova-test: a Nova functional regression test; '
                        "report: a finding as a bug report in Nova's "
                        'Launchpad template (runs it)')
    export.add_argument('file', metavar='FILE')
    export.add_argument('--bug', metavar='N', default=None,
                        help='the bug the test is for (default: the '
                        "file's bug: id)")
    export.add_argument('-o', dest='output', metavar='PATH', default=None,
                        help='write the test there (default: stdout)')
    export.add_argument('--with-harness', action='store_true',
                        help='let the test import the harness where it '
                        'needs it: HARNESS_REINTRODUCE=1 puts the bug back '
                        'with its reintroduction fixture (with a bug), and '
                        'hosts that need different options each get their '
                        'own (harness.PerHostConfig)')
    sub.add_parser('bugs', help='list the registered bugs',
                   parents=[options.common_options(options.OUTPUT)])
    reproduce = sub.add_parser(
        'reproduce', help='show a bug: installed Nova vs reintroduced',
        parents=[common])
    reproduce.add_argument('bug', metavar='BUG')
    reproduce.add_argument(
        '--nova-release', metavar='N', type=int, default=None,
        help='run on Nova N of the release matrix (31, 32, 33): the '
        'Python of the tox env functional-novaN')
    # Its options are the tool's own (``harness determinism -h``): they
    # are passed through to its main, which parses and checks them, so
    # that they are defined, and their errors worded, in one place.
    sub.add_parser('determinism', add_help=False,
                   help='run every scenario and regression test N times; '
                        'report those that change between runs')
    return parser


#: Python's hash seed: pinned to this unless the environment sets one.
HASH_SEED = '0'


def pin_hash_seed(environ=None, execve=None):
    """Run this program again with Python's hash seed pinned, if unset.

    Nova walks sets of names in places where the order decides what it
    picks: the scheduler weighs host states in the order of a set of
    (host, node) names (``HostManager._get_host_states``), so of two
    equally good nodes of one host, the hash seed chooses. A seed drawn
    at random for each process is an input nobody set, as a wall clock
    would be: pinned, a scenario runs alike in every process (tox's
    envs pin it too). A seed the environment sets, or "random", stays.
    """
    environ = os.environ if environ is None else environ
    if environ.get('PYTHONHASHSEED') is not None:
        return
    env = dict(environ, PYTHONHASHSEED=HASH_SEED)
    # orig_argv: the interpreter's own command line (a script or -m).
    (execve or os.execve)(sys.executable,
                          [sys.executable] + sys.orig_argv[1:], env)


def main(argv=None, out=None):
    """The command. Run as the program (no ``argv``), it owns the output.

    Then the process's own stdout and stderr go to the log file (unless
    ``--verbose``): whatever a library prints or logs, however it does it,
    lands there, and only the harness's lines reach the terminal. Called
    from Python (a test), it leaves the process's streams alone. Run as
    the program, it pins Python's hash seed first (``pin_hash_seed``).
    """
    program = argv is None
    if program:
        pin_hash_seed()
    parser = build_parser()
    try:
        args, rest = parser.parse_known_args(argv)
        if rest and args.command != 'determinism':
            # What parse_args would say: only determinism takes options
            # parsed elsewhere.
            parser.error('unrecognized arguments: %s' % ' '.join(rest))
    except options.UsageError as exc:
        # As argparse does, exit 2 as bad input should: the usage of the
        # (sub)command, then one line.
        exc.parser.print_usage(sys.stderr)
        exc.parser.exit(EXIT_BAD_INPUT, 'harness: error: %s\n' % exc)
    if args.command == 'determinism':
        from harness.runners.determinism import cli as determinism
        return determinism.main(rest, out=out or sys.stdout)
    problem = _choose_concurrency(args)
    if problem:
        print('harness: %s' % problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    err = sys.stderr
    if program:
        try:
            out, err = _own_output(args)
        except OSError as exc:
            print('harness: the log file: %s' % exc, file=sys.stderr)
            return EXIT_BAD_INPUT
    out = out or sys.stdout
    # Progress goes to stderr: stdout, the results, reads the same in
    # every run.
    args.status = err
    try:
        if args.command == 'bugs':
            return cmd_bugs(out)
        if args.command == 'export':
            return cmd_export(args, out)
        if args.command == 'run':
            return cmd_run(args, out)
        if args.command == 'explore':
            return cmd_explore(args, out)
        return cmd_reproduce(args, out)
    except (errors.ScenarioError, errors.ProfileError,
            errors.UnknownName) as exc:
        print('harness: %s' % exc, file=err)
        return EXIT_BAD_INPUT
    except (Exception, KeyboardInterrupt) as exc:
        if not program:
            raise
        # The process's stderr is the log: the traceback goes there, and
        # the terminal is told where.
        logging.getLogger('harness').exception('harness stopped')
        print('harness: %s: %s\n(traceback in %s)' % (
            'interrupted' if isinstance(exc, KeyboardInterrupt)
            else type(exc).__name__, exc, LOG['path']), file=err)
        return EXIT_INTERRUPTED if isinstance(
            exc, KeyboardInterrupt) else EXIT_FAIL
    finally:
        if program:
            out.flush()
            err.flush()


def cmd_export(args, out):
    """Write the file's scenarios as a Nova test (refusals: exit 2).

    Or, ``report``, the finding as a bug report (after a run of it).
    """
    if args.format == 'report':
        from harness.export import report
        source = report.render(args.file, _finding_outcome(args.file))
    else:
        from harness.export import nova_test
        source = nova_test.export(args.file, bug=args.bug,
                                  with_harness=args.with_harness)
    if args.output:
        with open(args.output, 'w') as stream:
            stream.write(source)
    else:
        out.write(source)
    return EXIT_PASS


def _finding_outcome(path):
    """The report's ``Outcome`` of a finding's first failing scenario.

    Expectations only, each scenario on a cloud of its own.
    """
    from harness.core import concurrency
    from harness.core import scenario as scenario_mod
    from harness.core import versions
    from harness.export import report
    from harness.runners import runner
    version = '.'.join(str(part) for part in versions.nova_version())
    mode = concurrency.chosen()
    timeline = ''
    for scenario in scenario_mod.load(path):
        try:
            timeline = runner.run(scenario).render()
        except errors.ScenarioFailed as exc:
            failure = exc.args[0].split('\n\ntimeline so far:\n')[0]
            return report.Outcome(failure, exc.timeline.render(), version,
                                  mode)
    return report.Outcome(None, timeline, version, mode)


# The log file of this process, once one is chosen (printed on failure).
LOG = {'path': None}


# Default logs kept, newest first; older ones are removed.
KEEP_LOGS = 20


def log_dir():
    """Where logs go by default: ``$XDG_CACHE_HOME/harness/logs``."""
    cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache')
    return os.path.join(cache, 'harness', 'logs')


def _log_path(args):
    if args.log:
        return os.path.abspath(args.log)
    directory = log_dir()
    os.makedirs(directory, exist_ok=True)
    old = sorted(name for name in os.listdir(directory)
                 if name.startswith('harness-') and name.endswith('.log'))
    for name in old[:max(0, len(old) - KEEP_LOGS + 1)]:
        os.remove(os.path.join(directory, name))
    return os.path.join(directory, 'harness-%s-%d.log' % (
        time.strftime('%Y%m%d-%H%M%S'), os.getpid()))


def _log_to_file(args):
    """Send logging and warnings to the log file (and, verbose, stderr).

    Nova's own test fixtures may set their handlers up later; what they
    print still goes where the process's streams go. Only for the program:
    a test calling ``main`` keeps its own log capture.
    """
    path = LOG['path'] = _log_path(args)
    handler = logging.FileHandler(path, encoding='utf-8')
    handler.setFormatter(logging.Formatter(
        '%(asctime)s %(levelname)s %(name)s %(message)s'))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if args.verbose:
        root.addHandler(logging.StreamHandler(sys.stderr))
    else:
        # Python's last-resort handler prints warnings to stderr when no
        # handler takes them: there is one now.
        warnings.simplefilter('default')
    logging.captureWarnings(True)
    return path


def _own_output(args):
    """The harness's streams; the process's own go to the log file.

    Returns ``(out, err)``: copies of the terminal's stdout and stderr,
    for the harness's lines. File descriptors 1 and 2 then point at the
    log (unless ``--verbose``), so a warning printed at Nova's import, a
    handler a fixture adds to ``sys.stdout``, or a C library's write all
    land there.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    out = os.fdopen(os.dup(1), 'w', buffering=1, encoding='utf-8')
    err = os.fdopen(os.dup(2), 'w', buffering=1, encoding='utf-8')
    path = _log_to_file(args)
    if not args.verbose:
        log = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
    return out, err


def _say_log(say):
    if LOG['path']:
        say('log (Nova\'s logs, warnings): %s' % LOG['path'])


def _nova_logs(args):
    """A ``NovaLogs`` for the program's log file, or None (no log file).

    WARNING and up; every record Nova's logging lets through (INFO, or
    DEBUG with Nova's own ``OS_DEBUG``) with ``--verbose``.
    """
    if not LOG['path']:
        return None
    from harness.runners import nova_logs
    return nova_logs.NovaLogs(
        logging.NOTSET if args.verbose else logging.WARNING)


def _write_nova_logs(logs, scenario, verbose):
    """Append the scenario's section to the log file (and show it)."""
    section = logs.section(scenario)
    with open(LOG['path'], 'a', encoding='utf-8') as log:
        log.write(section)
    if verbose:
        # The process's stderr is the terminal's then.
        sys.stderr.write(section)


def _checks(no_invariants=False, no_periodic_check=False,
            capacity_probe=None, enabled=None):
    if no_invariants:
        return []
    from harness.core import invariants
    from harness.core import known_bugs
    # None: the Checker reads HARNESS_CAPACITY_PROBE, on if unset. A
    # scenario's known open bug or finding is judged as in its test.
    return known_bugs.wrap([invariants.Checker(
        periodic_idempotence=not no_periodic_check, enabled=enabled,
        capacity_probe=capacity_probe, probe_by_default=True)])


def _checks_of(args):
    """``scenario -> its checks``, as ``harness run``'s flags ask.

    A bug file's scenarios get the invariants its regression tests check
    (all but the file's ``invariants_off``, each said there with why).
    """
    from harness import bugs
    everywhere = _checks(args.no_invariants, args.no_periodic_check,
                         args.capacity_probe)

    def checks(scenario):
        bug = bugs.of_file(scenario.path)
        if bug is None or not bug.invariants_off:
            return everywhere
        return _checks(args.no_invariants, args.no_periodic_check,
                       args.capacity_probe, enabled=bug.invariants)
    return checks


def _check_config(loaded):
    """Every scenario's Nova options, before the first one runs."""
    from harness.cloud import config
    for scenario in loaded:
        config.validate(scenario)


def cmd_bugs(out):
    from harness import bugs
    for bug in bugs.known():
        print('LP#%s  %s\n    %s\n    fixed by %s'
              % (bug.id, bug.title, bug.link, bug.fix), file=out)
    return EXIT_PASS


def _choose_concurrency(args):
    """Apply ``--concurrency`` before anything imports Nova; a problem."""
    chosen = getattr(args, 'concurrency', None)
    if chosen is None:
        return None
    if chosen == 'both' and args.command != 'run':
        return '--concurrency both: only "harness run" compares the modes'
    if chosen == 'both':
        return None
    from harness.core import concurrency
    try:
        concurrency.choose(chosen)
    except errors.SetupError as exc:
        return str(exc)
    return None


def cmd_run(args, out):
    from harness.core import scenario as scenario_mod
    # Load everything first: bad input stops us before any service starts
    # (and before Nova is even imported).
    loaded = [s for path in args.files for s in scenario_mod.load(path)]
    _check_config(loaded)
    if args.concurrency == 'both':
        return _run_both_modes(args, out)
    fixtures = []
    if args.reintroduce:
        from harness import bugs
        fixtures.append(bugs.get(args.reintroduce))
    checks = _checks_of(args)
    report_dir = _report_dir(args)
    from harness.cloud import reuse
    recorded = [] if args.record else None
    logs = _nova_logs(args)
    try:
        with contextlib.ExitStack() as stack:
            if logs is not None:
                stack.enter_context(logs)
            pool = stack.enter_context(reuse.CloudPool())
            return _run_each(loaded, checks, fixtures, out,
                             None if args.cloud_per_scenario else pool,
                             report_dir, getattr(args, 'status', None),
                             recorded, fail_fast=args.fail_fast,
                             logs=logs and (
                                 lambda scenario: _write_nova_logs(
                                     logs, scenario, args.verbose)))
    finally:
        if recorded is not None:
            from harness.runners import modes
            modes.write(recorded, args.record)


def _run_both_modes(args, out):
    """``harness run --concurrency both``: see ``harness.runners.modes``.

    This process imports no Nova: each mode runs in a process of its own
    (the same command, one mode, its records written to a file).
    """
    from harness.runners import modes
    import subprocess
    import tempfile
    records = {}
    with tempfile.TemporaryDirectory(prefix='harness-modes-') as tmp:
        for mode in modes.MODES:
            path = os.path.join(tmp, mode + '.json')
            command = [sys.executable, '-m', 'harness.runners.cli', 'run',
                       '--concurrency', mode, '--record', path]
            for flag in ('no_invariants', 'no_periodic_check',
                         'cloud_per_scenario'):
                if getattr(args, flag):
                    command.append('--' + flag.replace('_', '-'))
            if args.capacity_probe is not None:
                command.append('--capacity-probe' if args.capacity_probe
                               else '--no-capacity-probe')
            if args.reintroduce:
                command += ['--reintroduce', args.reintroduce]
            command += list(args.files)
            done = subprocess.run(command, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if not os.path.exists(path):
                print('the run in %s mode stopped before it ran a scenario '
                      '(exit %d):\n%s' % (mode, done.returncode,
                                          done.stdout[-3000:]), file=out)
                return EXIT_FAIL
            records[mode] = modes.read(path)
            failed = [r['scenario'] for r in records[mode] if r['failed']]
            print('%s: %d scenarios, %d failed%s' % (
                mode, len(records[mode]), len(failed),
                ''.join('\n  failed: %s' % name for name in failed)),
                file=out)
    alike = modes.report(records[modes.MODES[0]], records[modes.MODES[1]],
                         lambda line: print(line, file=out))
    passed = alike and not any(r['failed'] for found in records.values()
                               for r in found)
    return EXIT_PASS if passed else EXIT_FAIL


def _report_dir(args):
    # Only the option: $HARNESS_REPORT_DIR is the test suite's (a test
    # that runs the CLI must not fill the suite's reports).
    return getattr(args, 'report', None)


def _run_each(loaded, checks, fixtures, out, pool, report_dir=None,
              status=None, recorded=None, fail_fast=False, logs=None):
    """Run every scenario of ``loaded``, say each one's verdict; the exit.

    ``checks``: the checks, or ``scenario -> its checks``.

    Then a summary line. ``fail_fast``: stop at the first that fails and
    say how many did not run (not while ``recorded``: a mode of
    ``--concurrency both`` records every scenario). ``logs``: called
    with each scenario once it ran (Nova's logs of it to the log file).
    """
    from harness.runners import progress as progress_mod
    from harness.runners import runner
    counter = None

    def say(line):
        if counter is None:
            print(line, file=out)
        else:
            counter.say(line, out)

    if len(loaded) > 1 and status is not None:
        counter = progress_mod.Progress(len(loaded), status, 'scenarios')
    failed = []
    ran = 0
    try:
        for scenario in loaded:
            try:
                passed = _run_one(
                    scenario, runner,
                    checks(scenario) if callable(checks) else checks,
                    fixtures, say, pool, report_dir, recorded)
            finally:
                if logs is not None:
                    logs(scenario)
            ran += 1
            if counter is not None:
                counter.advance(failed=not passed)
            if not passed:
                failed.append(scenario.name)
                if fail_fast and recorded is None:
                    break
    finally:
        if counter is not None:
            counter.finish()
    say(summary(ran - len(failed), failed, len(loaded) - ran))
    if failed:
        _say_log(say)
        return EXIT_FAIL
    return EXIT_PASS


def summary(passed, failed, not_run=0):
    """``2 passed, 1 failed: NAME`` (and what ``--fail-fast`` left)."""
    line = '%d passed, %d failed' % (passed, len(failed))
    if failed:
        line += ': %s' % ', '.join(failed)
    if not_run:
        line += ('; stopped at the first failure (--fail-fast): %d '
                 'scenario%s not run' % (not_run, '' if not_run == 1
                                         else 's'))
    return line


def _run_one(scenario, runner, checks, fixtures, say, pool, report_dir,
             recorded=None):
    """Run one scenario, say how it went; whether it passed.

    ``recorded``: a list its timeline is recorded in (``modes.record``).
    """
    say('scenario: %s (%s)' % (scenario.name, scenario.path))
    recorder = None
    if report_dir:
        from harness import report
        recorder = report.Recorder()
    try:
        timeline = runner.run(
            scenario, checks=checks,
            fixtures=[bug.reintroduce() for bug in fixtures],
            progress=lambda line: say('  ' + line), pool=pool,
            observers=[recorder] if recorder else ())
    except fixtures_lib.MultipleExceptions as exc:
        service, error = standup.refusal(exc)
        # Nova's traceback goes to the log, the terminal gets one line.
        logging.getLogger('harness').error(
            'scenario %r: %s', scenario.name,
            standup.one_line(service, error),
            exc_info=(type(error), error, error.__traceback__))
        say('FAILED %s: %s' % (scenario.name,
                               standup.one_line(service, error)))
        return False
    except errors.ScenarioFailed as exc:
        say('FAILED %s' % exc)
        _write_report(say, report_dir, scenario, None, exc, recorder)
        if recorded is not None and exc.timeline is not None:
            from harness.runners import modes
            recorded.append(modes.record(scenario, exc.timeline,
                                         exc.timeline.concurrency))
        return False
    if recorded is not None:
        from harness.runners import modes
        recorded.append(modes.record(scenario, timeline,
                                     timeline.concurrency))
    say(timeline.render())
    missing = [name for check in checks
               for name in check.missing_breaks(scenario)]
    _write_report(say, report_dir, scenario, timeline, None, recorder)
    if missing:
        say('FAILED %s: expected %s to break, but it held'
            % (scenario.name, ', '.join(missing)))
        return False
    from harness.core import known_bugs
    fixed, unchecked = known_bugs.verdict(checks, scenario)
    for line in unchecked:
        say('note: %s' % line)
    if fixed:
        say('FAILED %s: %s' % (scenario.name, '; '.join(fixed)))
        return False
    say('passed: %s\n' % scenario.name)
    return True


def _write_report(say, report_dir, scenario, timeline, failure, recorder):
    if not report_dir:
        return
    from harness import report
    path = report.write_run(report_dir, scenario, timeline, failure,
                            recorder)
    say('report: %s' % path)


def cmd_explore(args, out):
    from harness import bugs
    from harness.core import scenario as scenario_mod
    from harness.runners import shards
    if args.known_findings and not os.path.isdir(args.known_findings):
        raise errors.ScenarioError(
            '--known-findings %s: no such directory' % args.known_findings)
    if args.merge:
        return _explore_merge(args, out)
    shard = args.shard is not None and shards.parse_shard(args.shard)
    loaded = [s for path in args.files for s in scenario_mod.load(path)]
    _check_config(loaded)
    if args.reintroduce:
        bugs.get(args.reintroduce)
    from harness.runners import explorer as explorer_mod
    tasks = [t.strip() for t in args.tasks.split(',') if t.strip()]
    explorer = explorer_mod.Explorer(
        tasks=tasks, depth=args.depth or 1, reintroduce=args.reintroduce,
        workers=args.workers, out_dir=args.out, limit=args.limit,
        invariants=not args.no_invariants,
        kept_cloud=not args.cloud_per_replay,
        prune=args.prune, nested=args.nested,
        replay_timeout=args.replay_timeout,
        progress=lambda line: print(line, file=out, flush=True),
        status=getattr(args, 'status', None))
    if shard:
        # Its failures are grouped and shrunk by the merge.
        document = shards.run(explorer, loaded, *shard)
        for line in shards.summary(document):
            print(line, file=out)
        print('shard file: %s' % shards.write(document, args.out), file=out)
        return EXIT_PASS
    reports = [explorer.explore(scenario) for scenario in loaded]
    return _explored(args, out, zip(loaded, reports), args.reintroduce)


def _explore_merge(args, out):
    from harness.runners import shards
    # The exploration's options are the shards' own.
    given = [option for option, value in (
        ('--shard', args.shard), ('--depth', args.depth),
        ('--limit', args.limit), ('--reintroduce', args.reintroduce))
        if value is not None] + (['--tasks'] if args.tasks else []) + (
        ['--no-invariants'] if args.no_invariants else []) + (
        ['--nested'] if args.nested else []) + (
        ['--prune'] if args.prune else [])
    if given:
        raise errors.ScenarioError(
            '--merge explores with the shards\' options; drop %s'
            % ', '.join(given))
    merged = shards.merge(
        args.files, out_dir=args.out, workers=args.workers,
        kept_cloud=not args.cloud_per_replay,
        replay_timeout=args.replay_timeout,
        progress=lambda line: print(line, file=out, flush=True),
        status=getattr(args, 'status', None))
    return _explored(args, out, merged.explored,
                     merged.options['reintroduce'])


def _explored(args, out, explored, reintroduce):
    """Print (and report) explored ``(scenario, report)`` pairs; the exit."""
    explored = list(explored)
    report_dir = _report_dir(args)
    findings = None
    if getattr(args, 'known_findings', None) and not reintroduce:
        from harness.runners import known as known_mod
        findings = known_mod.Known(args.known_findings)
    new = 0
    for scenario, report in explored:
        print(report.summary(), file=out)
        if report_dir:
            _explore_report(report_dir, scenario, report, reintroduce,
                            lambda line: print(line, file=out))
        known = _known(findings, scenario, report)
        for outcome, finding in zip(report.failed, known):
            if finding:
                print('known finding %s: %s' % (
                    os.path.relpath(finding), str(outcome).split('\n')[0]),
                    file=out)
        new += known.count(None)
    if new:
        _say_log(lambda line: print(line, file=out))
        return EXIT_FAIL
    return EXIT_PASS


def _known(findings, scenario, report):
    """For each failure of ``report``: the finding it is, or None."""
    from harness.runners import explorer as explorer_mod
    reproducers = [outcome.shrunk_path or outcome.same_as
                   for outcome in report.failed]
    return [findings.finding_for(
        explorer_mod.injected_steps(scenario, outcome.injections),
        outcome, reproducer) if findings and reproducer else None
        for outcome, reproducer in zip(report.failed, reproducers)]


def _explore_report(report_dir, scenario, explored, reintroduce, say):
    """The exploration's report, and each shrunk reproducer's own.

    A reproducer's report comes from running it once more, watched.
    """
    from harness import bugs
    from harness.core import invariants
    from harness.core import scenario as scenario_mod
    from harness import report
    from harness.runners import runner
    links = {}
    for outcome in explored.failed:
        if not outcome.shrunk_path:
            continue
        for shrunk in scenario_mod.load(outcome.shrunk_path):
            recorder = report.Recorder()
            fixtures = ([bugs.get(reintroduce).reintroduce()]
                        if reintroduce else [])
            timeline, failure = None, None
            try:
                # The explorer's checks: the probe only if asked for.
                checks = _checks(capacity_probe=invariants.probe_wanted())
                timeline = runner.run(shrunk, checks=checks,
                                      fixtures=fixtures,
                                      observers=[recorder])
            except errors.ScenarioFailed as exc:
                failure = exc
            path = report.write_run(report_dir, shrunk, timeline, failure,
                                    recorder)
            links[outcome.shrunk_path] = os.path.basename(path)
    path = report.write_explore(report_dir, scenario, explored, links)
    say('report: %s' % path)


def cmd_reproduce(args, out):
    from harness.runners import reproduce
    if args.nova_release is not None:
        argv = ['reproduce', args.bug] + (
            ['--report', args.report] if args.report else []) + (
            ['--verbose'] if args.verbose else [])
        return reproduce.on_release(args.nova_release, argv, out)
    code = reproduce.main(args.bug, out, report_dir=_report_dir(args))
    if code:
        _say_log(lambda line: print(line, file=out))
    return code


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
