"""Progress lines: redrawn in place on a terminal, plain lines elsewhere."""

import io

from harness.runners import progress
from harness import testing


class Clock(object):

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class TestProgress(testing.TestCase):

    def make(self, tty, total=4, every=30.0):
        self.clock = Clock()
        self.out = io.StringIO()
        return progress.Progress(total, self.out, 'runs', tty=tty,
                                 clock=self.clock, every=every)

    def test_line_has_done_total_failures_and_time_left(self):
        counter = self.make(tty=False)
        self.clock.now += 10
        counter.advance()
        self.clock.now += 10
        counter.advance(failed=True)
        # 20 s for 2 of 4: 20 s more.
        self.assertEqual('2/4 runs done, 1 failed, ~20s left',
                         counter.line())

    def test_finished_says_how_long_it_took(self):
        counter = self.make(tty=False, total=1)
        self.clock.now += 75
        counter.advance()
        self.assertEqual('1/1 runs done, 0 failed in 1m15s', counter.line())

    def test_not_a_terminal_gets_plain_lines_now_and_then(self):
        counter = self.make(tty=False, every=30)
        counter.advance()           # the first one shows
        self.clock.now += 5
        counter.advance()           # too soon
        self.clock.now += 30
        counter.advance()           # 30 s on
        self.clock.now += 1
        counter.advance()           # the last one shows
        counter.finish()            # and is not repeated
        lines = self.out.getvalue().splitlines()
        self.assertEqual(['1/4', '3/4', '4/4'],
                         [line.split()[1] for line in lines])
        self.assertTrue(all(line.startswith('progress: ') for line in lines))
        self.assertNotIn('\r', self.out.getvalue())

    def test_terminal_redraws_one_line_and_says_lines_above_it(self):
        counter = self.make(tty=True, total=2)
        counter.advance(failed=True)
        counter.say('scenario: b')
        counter.advance()
        counter.finish()
        text = self.out.getvalue()
        self.assertTrue(text.startswith('\r1/2 runs done, 1 failed'))
        # The status is wiped, the line said, the status drawn again.
        self.assertIn('\rscenario: b\n\r1/2 runs done', text)
        # The last drawing pads over the longer one before it, then ends.
        self.assertEqual('2/2 runs done, 1 failed in 0s',
                         text.rsplit('\r', 1)[1].rstrip())
        self.assertTrue(text.endswith('\n'))
        self.assertEqual(1, text.count('\n', 0, text.index('scenario: b')
                                       + len('scenario: b') + 1))

    def test_durations(self):
        self.assertEqual('42s', progress.duration(42))
        self.assertEqual('3m05s', progress.duration(185))
        self.assertEqual('1h02m', progress.duration(3720))

    def test_asks_the_stream_whether_it_is_a_terminal(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True
        self.assertTrue(progress.Progress(1, Tty()).tty)
        self.assertFalse(progress.Progress(1, io.StringIO()).tty)
