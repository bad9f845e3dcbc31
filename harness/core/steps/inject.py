"""``inject: {before | after: point, run: task, on: host | role, times?,
server?, at_host?}``: arm a periodic at a race point of a later step.

The point must be one that a later step of the scenario can pass (each
kind declares its ``points``); the loader checks that once every step is
read (``check_points``), so a misspelt or impossible point fails before
any service starts.
"""

from harness.core import names
from harness.core.steps import base


class Inject(base.StepKind):
    name = 'inject'

    def parse(self, check, value, scenario, state, error):
        check.mapping(value, 'the step')
        check.keys(value, ('before', 'after', 'run', 'on', 'times',
                           'server', 'at_host'), required=('run', 'on'))
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
        return {'when': whens[0], 'point': point, 'run': task, 'on': on,
                'times': times, 'server': value.get('server'),
                'at_host': value.get('at_host')}

    def label(self, args):
        return 'inject %s %s: %s on %s' % (
            args['when'], args['point'], args['run'], args['on'])

    def run(self, cloud, args):
        return cloud.race.at(
            args['point'], when=args['when'], host=args.get('at_host'),
            server=args.get('server'), times=args['times']).run(
            args['run'], host=args['on'])


def check_points(check, steps, kinds):
    """Refuse an injection at a point no later step can pass.

    ``check`` names the file; ``kinds`` maps a step kind to its unit.
    """
    for position, step in enumerate(steps):
        if step.kind != Inject.name:
            continue
        later = [s for s in steps[position + 1:] if s.kind != Inject.name]
        point = step.args['point']
        if any(point in kinds[other.kind].points for other in later):
            continue
        passable = set()
        for other in later:
            passable |= kinds[other.kind].points
        check.at_step(step.index).fail(step.args['when'], (
            'no later step passes race point %r (later steps: %s; the '
            'points they can pass: %s)' % (
                point, ', '.join(s.kind for s in later) or 'none',
                ', '.join(sorted(passable)) or 'none')))


KIND = Inject()
