"""The HTML report, opened in headless Chromium (Debian's package).

Two runs, one cloud each: a passing cold migration on fake hosts with a
periodic injected on the source, and a failing run on a profiled host
(dev-1s-8c-smt2) whose expectation is wrong on purpose. Chromium renders
each report (``--dump-dom``, scripts run) and takes a screenshot; the
tests read the rendered page: one chart point per step per series, the
injection marked at its step, the wrong cell and only it highlighted, the
CPU map showing each guest's pinned CPUs, and a screenshot that is not
blank. Without Chromium they fail and say how to install it (CI does, in
``.ci/run``).
"""

import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import fixtures

from harness.core import errors
from harness.core import scenario as scenario_mod
from harness import report
# Nova patches the process for eventlet when it is first imported: load it
# with this module, not inside the first test (harness.leaks fails that).
from harness.runners import runner
from harness import testing
from tests.unit.test_report import Elements

BROWSERS = ('/usr/bin/chromium', 'chromium', 'chromium-browser')
FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
         '--disable-background-networking', '--disable-component-update',
         '--disable-sync')

# Cold migration, documented behaviour: while the migration waits, the
# migration consumer holds the flavor on the source and the instance on
# the destination; confirm drops the source side.
PASSING = """
name: cold migrate with a source periodic before finish_resize
hosts: {src: {driver: fake}, dst: {driver: fake}}
flavors: {small: {vcpus: 1, ram: 512, disk: 1}}
steps:
  - boot: {server: vm1, flavor: small, host: src}
    expect: {allocations: {vm1: {src: small}}}
  - inject: {before: finish_resize, run: update_available_resource,
             on: source}
  - migrate: {server: vm1, host: dst}
    expect:
      allocations: {vm1: {dst: small}, migration(vm1): {src: small}}
  - confirm: vm1
    expect: {allocations: {vm1: {dst: small}}}
"""

# Two guests of 2 dedicated vCPUs each on one profiled host: each holds 2
# PCPU. The second step's expectation says 3 for vm2, which is wrong on
# purpose: the report must highlight exactly vm2's cell on h1 at step 2
# (an allocations expectation lists every consumer, so vm1 is there too).
FAILING = """
name: two pinned guests, a wrong expectation
hosts: {h1: {profile: dev-1s-8c-smt2}}
flavors:
  pin2: {vcpus: 2, ram: 512, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
steps:
  - boot: {server: vm1, flavor: pin2, host: h1}
    expect: {allocations: {vm1: {h1: pin2}}}
  - boot: {server: vm2, flavor: pin2, host: h1}
    expect:
      allocations:
        vm1: {h1: pin2}
        vm2: {h1: {PCPU: 3, MEMORY_MB: 512, DISK_GB: 1}}
"""


def browser():
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def png_colours(data):
    """Distinct RGB colours in a PNG (8-bit RGB or RGBA), every 5th pixel.

    Decoded here (zlib and the five PNG row filters): no imaging package.
    """
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, colour = struct.unpack('>IIBB', body[:10])
        elif kind == b'IDAT':
            idat.append(body)
        pos += 12 + length
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = width * bpp
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xff
            elif kind == 2:
                line[i] = (line[i] + up) & 0xff
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xff
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (
                    up if pb <= pc else corner)
                line[i] = (line[i] + pred) & 0xff
        for i in range(0, stride, bpp * 5):
            colours.add(bytes(line[i:i + 3]))
        previous = line
    return colours


class ReportInBrowser(testing.TestCase):

    def setUp(self):
        super().setUp()
        self.browser = browser()
        if self.browser is None:
            self.fail('Chromium is not installed: the report browser tests '
                      'need it (apt-get install -y chromium '
                      'chromium-driver; CI installs it in .ci/run)')
        self.out = self.useFixture(fixtures.TempDir()).path

    def run_scenario(self, text):
        path = os.path.join(self.out, 'scenario.yaml')
        with open(path, 'w') as target:
            target.write(text)
        [scenario] = scenario_mod.load(path)
        recorder = report.Recorder()
        try:
            timeline = runner.run(scenario, test_id=self.id(),
                                  observers=[recorder])
            failure = None
        except errors.ScenarioFailed as exc:
            timeline, failure = exc.timeline, exc
        path = report.write_run(self.out, scenario, timeline, failure,
                                recorder)
        return scenario, timeline, failure, path

    def chromium(self, *args):
        profile = tempfile.mkdtemp(dir=self.out)
        result = subprocess.run(
            [self.browser] + list(FLAGS) + ['--user-data-dir=' + profile]
            + list(args), capture_output=True, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr[-2000:])
        return result.stdout

    def rendered(self, path, fragment=''):
        url = 'file://%s%s' % (path, fragment)
        return Elements(self.chromium('--dump-dom', url).decode('utf-8'))

    def screenshot_colours(self, path):
        shot = os.path.join(self.out, 'shot.png')
        self.chromium('--window-size=1000,800', '--screenshot=' + shot,
                      'file://' + path)
        with open(shot, 'rb') as source:
            return png_colours(source.read())


class TestPassingReport(ReportInBrowser):

    def test_charts_marks_and_screenshot(self):
        scenario, timeline, failure, path = self.run_scenario(PASSING)
        self.assertIsNone(failure)
        doc = self.rendered(path)
        steps = [str(e.index) for e in timeline]
        self.assertEqual(['0', '1', '2', '3', '4'], steps)
        self.assertEqual(['passed'], [s['data-verdict'] for s in doc.select(
            'section', **{'class': 'run'})])
        # Fake hosts: VCPU, MEMORY_MB, DISK_GB, on each host; each series
        # a point per step, the value the snapshot holds.
        charts = {(c['data-host'], c['data-rc'])
                  for c in doc.select('svg', **{'class': 'chart'})}
        self.assertEqual({(h, rc) for h in ('src', 'dst')
                          for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB')}, charts)
        for host, rc in charts:
            for series in ('usage', 'capacity'):
                points = doc.points(host, rc, series)
                self.assertEqual(steps, [p['data-step'] for p in points],
                                 (host, rc, series))
            self.assertEqual(
                [str(e.snapshot.usage(host, rc)) for e in timeline],
                [p['data-value'] for p in doc.points(host, rc, 'usage')])
        # While migrating, both hosts hold the flavor's vCPU.
        self.assertEqual(['0', '1', '1', '1', '0'], [
            p['data-value'] for p in doc.points('src', 'VCPU', 'usage')])
        # The injected periodic fired in the migrate step (3), and only
        # there; every chart marks it.
        marks = doc.select('g', **{'class': 'mark'})
        self.assertEqual({'3'}, {m['data-step'] for m in marks})
        self.assertEqual(len(charts), len(marks))
        self.assertEqual([], doc.select('td', **{'class': 'wrong'}))
        colours = self.screenshot_colours(path)
        self.assertGreater(len(colours), 1, 'the screenshot is blank')
        # The green "passed" badge is on screen.
        self.assertIn(bytes((0x2a, 0x7d, 0x2a)), colours)


class TestFailingReport(ReportInBrowser):

    def test_wrong_cell_cpu_map_and_screenshot(self):
        scenario, timeline, failure, path = self.run_scenario(FAILING)
        self.assertIsNotNone(failure)
        self.assertEqual(2, failure.step.index)
        doc = self.rendered(path)
        self.assertEqual(['FAILED'], [s['data-verdict'] for s in doc.select(
            'section', **{'class': 'run'})])
        # Exactly one cell is wrong: vm2's on h1, at step 2.
        wrong = [(c['data-step'], c['data-consumer'], c['data-provider'])
                 for c in doc.select('td', **{'class': 'wrong'})]
        self.assertEqual([('2', 'vm2', 'h1')], wrong)
        # The map opens at the failing step; it shows each guest on the
        # CPUs the tracker pinned for it: 2 each, 4 in all, as the
        # snapshot has them.
        shown = [d['data-step'] for d in doc.select(
            'div', **{'class': 'numa-step'}) if 'hidden' not in d]
        self.assertEqual(['2'], shown)
        pinned = set(timeline.entries[-1].snapshot.trackers['h1']
                     .pinned_cpus)
        self.assertEqual(4, len(pinned))
        by_guest, cores = {}, []
        in_step = None
        for tag, attrs in doc.found:
            classes = attrs.get('class', '').split()
            if tag == 'div' and 'numa-step' in classes:
                in_step = attrs['data-step']
            if in_step != '2' or tag != 'span':
                continue
            if 'core' in classes:
                cores.append(set())
            if 'cpu' in classes and 'data-cpu' in attrs:
                cores[-1].add(int(attrs['data-cpu']))
            if 'pinned' in classes:
                by_guest.setdefault(attrs['data-guest'], set()).add(
                    int(attrs['data-cpu']))
        self.assertEqual({'vm1', 'vm2'}, set(by_guest))
        self.assertEqual([2, 2], [len(c) for c in by_guest.values()])
        self.assertEqual(pinned, by_guest['vm1'] | by_guest['vm2'])
        # SMT siblings side by side: h1's 8 cores are the pairs
        # (n, n + 8), as its profile says.
        self.assertEqual([{n, n + 8} for n in range(8)], cores)
        # Selecting step 1 in the page shows vm1 alone.
        doc = self.rendered(path, '#step=1')
        shown = [d['data-step'] for d in doc.select(
            'div', **{'class': 'numa-step'}) if 'hidden' not in d]
        self.assertEqual(['1'], shown)
        colours = self.screenshot_colours(path)
        self.assertGreater(len(colours), 1, 'the screenshot is blank')
        # The red "FAILED" badge is on screen.
        self.assertIn(bytes((0xb3, 0x26, 0x1e)), colours)
