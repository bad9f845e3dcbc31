"""``advance_clock: seconds`` or ``{seconds}``: move virtual time on and
fire, in order, every periodic task that comes due on the way."""

from harness.core import errors
from harness.core.steps import base


class AdvanceClock(base.StepKind):
    name = 'advance_clock'
    summary = ('Move virtual time on, firing in order every periodic task '
               'that comes due on the way.')
    fields = {'seconds': ('number, 0 to 10**9', 'how far; the step may be '
                          'just the number')}
    example = '''\
- boot: {server: vm1, flavor: pin2, host: src}
- stop_compute: src
- advance_clock: 61
  expect: {servers: {vm1: {status: ACTIVE, host: src}}}
'''
    # A periodic may start operations (confirm a resize, delete a server).
    points = base.ANY_POINT

    def parse(self, check, value, scenario, state, error):
        if isinstance(value, dict):
            check.keys(value, ('seconds',), required=('seconds',))
            value = value['seconds']
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0 <= value <= 10 ** 9:
            check.fail('', 'seconds as a number from 0 to 10**9, not %s'
                       % errors.show(value))
        state.clock += value
        return {'seconds': value}

    def label(self, args):
        return 'advance clock %ss' % args['seconds']

    def run(self, cloud, args):
        cloud.clock.advance(args['seconds'])


KIND = AdvanceClock()
