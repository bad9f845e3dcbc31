"""Progress of a long run: done/total, failures so far, time left.

On a terminal the status is one line redrawn in place (``\\r``); other
lines go above it (``say``). Elsewhere (a CI log, a pipe) it is a plain
line when at least ``every`` seconds passed since the last one, and at the
end, so that logs do not fill with carriage returns. The commands show it
on stderr: their stdout, the results, reads the same in every run.
"""

import sys
import time


def duration(seconds):
    """``1h02m``, ``3m05s``, ``42s``."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        return '%dh%02dm' % (seconds // 3600, seconds % 3600 // 60)
    if seconds >= 60:
        return '%dm%02ds' % (seconds // 60, seconds % 60)
    return '%ds' % seconds


class Progress(object):
    """Counts finished items of ``total`` and shows how far along it is.

    :param what: the items' name (``scenarios``, ``replays``, ``runs``).
    :param tty: whether ``stream`` is a terminal (default: ask it).
    :param clock: seconds, monotonic (tests give their own).
    :param every: seconds between plain lines when not on a terminal.
    :param failed_word: what the failures are called (``changed``).
    """

    def __init__(self, total, stream=None, what='items', tty=None,
                 clock=time.monotonic, every=30.0, failed_word='failed'):
        self.total = total
        self.stream = stream or sys.stdout
        self.what = what
        if tty is None:
            isatty = getattr(self.stream, 'isatty', None)
            tty = bool(isatty and isatty())
        self.tty = tty
        self.clock = clock
        self.every = every
        self.failed_word = failed_word
        self.done = 0
        self.failed = 0
        self.started = clock()
        self._last_time = None
        self._final = False
        self._shown = 0

    def line(self):
        text = '%d/%d %s done, %d %s' % (
            self.done, self.total, self.what, self.failed, self.failed_word)
        if 0 < self.done < self.total:
            elapsed = self.clock() - self.started
            left = elapsed / self.done * (self.total - self.done)
            text += ', ~%s left' % duration(left)
        elif self.done >= self.total:
            text += ' in %s' % duration(self.clock() - self.started)
        return text

    def advance(self, failed=False, count=1):
        """``count`` more items finished (``failed``: they failed)."""
        self.done += count
        if failed:
            self.failed += count
        self._show(final=self.done >= self.total)

    def say(self, text, out=None):
        """A line of output above the status line.

        On ``out`` (by default the status's own stream).
        """
        out = out or self.stream
        if self.tty and self._shown:
            self.stream.write('\r' + ' ' * self._shown + '\r')
            self.stream.flush()
            self._shown = 0
        out.write(text + '\n')
        out.flush()
        if self.tty and self.done:
            self._draw()
        self.stream.flush()

    def finish(self):
        """End the status line (on a terminal: move past it)."""
        if self.tty and self._shown:
            self.stream.write('\n')
            self._shown = 0
        elif not self.tty and not self._final:
            self._plain()
            self._final = True
        self.stream.flush()

    def _show(self, final=False):
        if self.tty:
            self._draw()
        else:
            now = self.clock()
            if (final or self._last_time is None
                    or now - self._last_time >= self.every):
                self._plain()
                self._final = final
        self.stream.flush()

    def _draw(self):
        text = self.line()
        pad = max(0, self._shown - len(text))
        self.stream.write('\r' + text + ' ' * pad)
        self._shown = len(text)

    def _plain(self):
        text = self.line()
        self.stream.write('progress: %s\n' % text)
        self._last_time = self.clock()
