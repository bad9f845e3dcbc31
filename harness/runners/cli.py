"""``harness``: run scenarios, list bugs, reproduce a bug, check determinism.

    harness run FILE...        run scenario files; a line per step, then
                               the timeline; exit 0 pass, 1 fail, 2 bad
                               input
    harness explore FILE...    inject periodics at every race point of
                               the moves in the scenarios, check, shrink
                               what fails; exit 0 clean, 1 found, 2 bad
                               input
    harness bugs               the registered bugs: title, link, fix
    harness reproduce BUG      run the bug's scenario on Nova as installed
                               and with the bug reintroduced, and show the
                               two allocation timelines side by side;
                               exit 0 when the bug shows only when
                               reintroduced, 1 otherwise, 2 for an
                               unknown bug
    harness determinism [OPTIONS]
                               run every scenario and regression test N
                               times, report any whose verdict, timeline
                               or race points change; exit 0 steady, 1
                               flaky or hung, 2 bad arguments, 130
                               interrupted (``harness determinism -h``)

Bad input (a malformed scenario, an unknown bug) is one message naming
the file, the step and the field, before any service starts.
"""

import argparse
import logging
import sys
import warnings

from harness.core import errors

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse's own usage errors exit 2 too, as bad input should.
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, 'harness: error: %s\n' % message)


def build_parser():
    parser = _Parser(prog='harness', description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    run = sub.add_parser('run', help='run scenario files')
    run.add_argument('files', nargs='+', metavar='FILE')
    run.add_argument('--no-invariants', action='store_true',
                     help='check only the scenarios\' own expectations')
    run.add_argument('--no-periodic-check', action='store_true',
                     help='skip the periodic-idempotence invariant')
    run.add_argument('--reintroduce', metavar='BUG',
                     help='run with this fixed bug put back into Nova')
    run.add_argument('--cloud-per-scenario', action='store_true',
                     help='stand up a cloud for every scenario (by '
                     'default scenarios of one shape share a cloud, put '
                     'back to its state before their first step)')
    explore = sub.add_parser(
        'explore', help='inject periodics at every race point of moves')
    explore.add_argument('files', nargs='+', metavar='SCENARIO')
    explore.add_argument('--tasks', default='',
                         help='more periodic tasks to inject, comma '
                              'separated (update_available_resource is '
                              'always tried)')
    explore.add_argument('--depth', type=int, default=1, choices=(1, 2),
                         help='injections per replay')
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
    sub.add_parser('bugs', help='list the registered bugs')
    reproduce = sub.add_parser(
        'reproduce', help='show a bug: installed Nova vs reintroduced')
    reproduce.add_argument('bug', metavar='BUG')
    # Its options are the module's own (``harness determinism -h``): they
    # are passed through to its main, which parses and checks them, so
    # that they are defined, and their errors worded, in one place.
    sub.add_parser('determinism', add_help=False,
                   help='run every scenario and regression test N times; '
                        'report those that change between runs')
    return parser


def main(argv=None, out=None):
    out = out or sys.stdout
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == 'determinism':
        from harness.runners import determinism
        return determinism.main(rest, out=out)
    if rest:
        # What parse_args would say: only determinism takes options
        # parsed elsewhere.
        parser.error('unrecognized arguments: %s' % ' '.join(rest))
    _quiet_logging()
    try:
        if args.command == 'bugs':
            return cmd_bugs(out)
        if args.command == 'run':
            return cmd_run(args, out)
        if args.command == 'explore':
            return cmd_explore(args, out)
        return cmd_reproduce(args.bug, out)
    except (errors.ScenarioError, errors.ProfileError,
            errors.UnknownName) as exc:
        print('harness: %s' % exc, file=sys.stderr)
        return EXIT_BAD_INPUT


def _quiet_logging():
    # Nova's services log to the test's log capture; on a terminal only
    # warnings and worse belong next to the harness's own lines.
    logging.getLogger().setLevel(logging.WARNING)
    warnings.filterwarnings('ignore', category=DeprecationWarning)


def _checks(no_invariants=False, no_periodic_check=False):
    if no_invariants:
        return []
    from harness.core import invariants
    return [invariants.Checker(periodic_idempotence=not no_periodic_check)]


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


def cmd_run(args, out):
    from harness.core import scenario as scenario_mod
    # Load everything first: bad input stops us before any service starts
    # (and before Nova is even imported).
    loaded = [s for path in args.files for s in scenario_mod.load(path)]
    _check_config(loaded)
    fixtures = []
    if args.reintroduce:
        from harness import bugs
        fixtures.append(bugs.get(args.reintroduce))
    checks = _checks(args.no_invariants, args.no_periodic_check)
    from harness.cloud import reuse
    with reuse.CloudPool() as pool:
        return _run_each(loaded, checks, fixtures, out,
                         None if args.cloud_per_scenario else pool)


def _run_each(loaded, checks, fixtures, out, pool):
    from harness.runners import runner
    for scenario in loaded:
        print('scenario: %s (%s)' % (scenario.name, scenario.path), file=out)
        try:
            timeline = runner.run(
                scenario, checks=checks,
                fixtures=[bug.reintroduce() for bug in fixtures],
                progress=lambda line: print('  ' + line, file=out),
                pool=pool)
        except errors.ScenarioFailed as exc:
            print('FAILED %s' % exc, file=out)
            return EXIT_FAIL
        print(timeline.render(), file=out)
        missing = [name for check in checks
                   for name in check.missing_breaks(scenario)]
        if missing:
            print('FAILED %s: expected %s to break, but it held'
                  % (scenario.name, ', '.join(missing)), file=out)
            return EXIT_FAIL
        print('passed: %s\n' % scenario.name, file=out)
    return EXIT_PASS


def cmd_explore(args, out):
    from harness import bugs
    from harness.core import scenario as scenario_mod
    loaded = [s for path in args.files for s in scenario_mod.load(path)]
    _check_config(loaded)
    if args.reintroduce:
        bugs.get(args.reintroduce)
    from harness.runners import explorer as explorer_mod
    tasks = [t.strip() for t in args.tasks.split(',') if t.strip()]
    explorer = explorer_mod.Explorer(
        tasks=tasks, depth=args.depth, reintroduce=args.reintroduce,
        workers=args.workers, out_dir=args.out, limit=args.limit,
        invariants=not args.no_invariants,
        kept_cloud=not args.cloud_per_replay,
        progress=lambda line: print(line, file=out, flush=True))
    reports = [explorer.explore(scenario) for scenario in loaded]
    for report in reports:
        print(report.summary(), file=out)
    return EXIT_FAIL if any(r.failed for r in reports) else EXIT_PASS


def cmd_reproduce(bug_id, out):
    from harness.runners import reproduce
    return reproduce.main(bug_id, out)


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
