"""``inject: {before | after: point, run: task, on: host | role, times?,
server?, at_host?}``: arm a periodic at a race point of a later step.

Or, instead of ``run``/``on``, ``do: {delete | abort_live_migration |
force_complete_live_migration: server}``: send that API request at the
point (``harness.cloud.interject``), as a user whose request lands in the
middle of another operation. The request's own race points are then
passed by the step that was running (the test case allows them).

The point must be one that a later step of the scenario can pass (each
kind declares its ``points``); the loader checks that once every step is
read (``check_points``), so a misspelt or impossible point fails before
any service starts.

A delete sent this way is attached to the step that passes its point
(``Step.interjected``): the invariants take that step's windows and the
delete's (``delete.interjected_windows``: the trackers a move touched
count the deleted guest until their next periodic, bounded by what it
held before and the move's flavor).
"""

from harness.core import errors
from harness.core import names
from harness.core.steps import base
from harness.core.steps import delete as delete_step


class Inject(base.StepKind):
    name = 'inject'

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        check.keys(value, ('before', 'after', 'run', 'on', 'do', 'times',
                           'server', 'at_host'))
        whens = [when for when in ('before', 'after') if when in value]
        if len(whens) != 1:
            check.fail('the step',
                       'say "before: <point>" or "after: <point>"')
        point = check.string(value[whens[0]], whens[0])
        if not names.POINT_NAME.match(point):
            check.fail(whens[0], '%r is not a race point name (a compute '
                       'RPC method such as finish_resize, conductor.<...>, '
                       'scheduler.<...>, instance.host or '
                       'migration.status=<status>)' % point)
        task = on = do = None
        if 'do' in value:
            if 'run' in value or 'on' in value:
                check.fail('do', 'an injection runs a periodic (run, on) '
                           'or sends a request (do), not both')
            do = self._parse_do(check, value['do'])
        else:
            for key in ('run', 'on'):
                if key not in value:
                    check.fail(key, 'missing (or say "do: {delete: '
                               '<server>}" to send a request instead)')
            task = check.string(value['run'], 'run')
            if task not in names.PERIODICS:
                check.fail('run', 'unknown periodic task %r; known: %s'
                           % (task, ', '.join(names.PERIODICS)))
            on = check.string(value['on'], 'on')
            if on not in names.ROLES:
                check.known(on, scenario.hosts, 'on')
        times = value.get('times', 1)
        if times is not None:
            check.integer(times, 'times', minimum=1)
        if value.get('server') is not None:
            check.string(value['server'], 'server')
        if value.get('at_host') is not None:
            check.known(value['at_host'], scenario.hosts, 'at_host')
        args = {'when': whens[0], 'point': point, 'run': task, 'on': on,
                'times': times, 'server': value.get('server'),
                'at_host': value.get('at_host')}
        if do is not None:
            args['do'] = do
        if do is not None and do[0] == 'delete':
            # For the window of a delete in a resize: its new flavor
            # (check_points names the step and the flavor).
            args['flavors'] = {name: flavor.resources() for name, flavor
                               in sorted(scenario.flavors.items())}
            args['move_flavor'] = None
        return args

    @staticmethod
    def _parse_do(check, do):
        check.mapping(do, 'do')
        if len(do) != 1:
            check.fail('do', 'one request: %s' % ' | '.join(
                '{%s: <server>}' % name for name in names.INTERJECTIONS))
        (action, server), = do.items()
        if action not in names.INTERJECTIONS:
            check.fail('do', 'cannot send %s at a race point; known: %s'
                       % (errors.show(action),
                          ', '.join(names.INTERJECTIONS)))
        # Whether the server exists by then is checked once every step is
        # read (check_points).
        return (action, check.string(server, 'do.%s' % action))

    def label(self, args):
        if args.get('do'):
            what = '%s %s' % args['do']
        else:
            what = '%s on %s' % (args['run'], args['on'])
        return 'inject %s %s: %s' % (args['when'], args['point'], what)

    def windows(self, args, before, after, down):
        # Asked for the step a delete was interjected in (see the module
        # docstring); the inject step itself changes nothing.
        if not args or not args.get('do') or args['do'][0] != 'delete':
            return []
        flavor = args['flavors'].get(args.get('move_flavor'))
        return delete_step.interjected_windows(args['do'][1], flavor,
                                               before, after)

    def run(self, cloud, args):
        injection = cloud.race.at(
            args['point'], when=args['when'], host=args.get('at_host'),
            server=args.get('server'), times=args['times'])
        if args.get('do'):
            return injection.do(*args['do'])
        return injection.run(args['run'], host=args['on'])


def check_points(check, steps, kinds):
    """Refuse an injection at a point no later step can pass.

    ``check`` names the file; ``kinds`` maps a step kind to its unit.
    """
    for position, step in enumerate(steps):
        if step.kind != Inject.name:
            continue
        later = [s for s in steps[position + 1:] if s.kind != Inject.name]
        if step.args.get('do'):
            _check_do_target(check.at_step(step.index).field('inject'),
                             step, steps)
        point = step.args['point']
        passing = [other for other in later
                   if point in kinds[other.kind].points]
        if passing:
            if step.args.get('do') and step.args['do'][0] == 'delete':
                _attach(step, passing[0])
            continue
        passable = set()
        for other in later:
            passable |= kinds[other.kind].points
        check.at_step(step.index).fail(step.args['when'], (
            'no later step passes race point %r (later steps: %s; the '
            'points they can pass: %s)' % (
                point, ', '.join(s.kind for s in later) or 'none',
                ', '.join(sorted(passable)) or 'none')))


def _attach(inject, target):
    """Tie a delete to the step it lands in (its first passer)."""
    if not hasattr(target, 'interjected'):
        target.interjected = []
    target.interjected.append(inject)
    if target.kind == 'resize':
        inject.args['move_flavor'] = target.args.get('flavor')


def _check_do_target(check, step, steps):
    """A request's server must be booted in the scenario."""
    action, server = step.args['do']
    booted = {s.args.get('server') for s in steps if s.kind == 'boot'}
    if server not in booted:
        check.fail('do.%s' % action, 'no server %r is booted in this '
                   'scenario (booted: %s)' % (
                       server, ', '.join(sorted(b for b in booted if b))
                       or 'none'))


KIND = Inject()
