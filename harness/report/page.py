"""The HTML of a report: one self-contained file, scripts and styles inline.

A run's section shows, step by step (``data-step`` is the step's number,
0 the start):

- the steps, what fired at each (injected periodics, requests, faults) and
  what each check found wrong;
- per provider (``data-host``) and resource class (``data-rc``): usage
  against capacity across the steps, an SVG chart (``harness.report.svg``);
  for PCPU also the CPUs the host's tracker has pinned;
- per host with NUMA cells: each cell's CPUs, SMT siblings side by side
  (from the host profile), which guest holds each pinned CPU
  (``data-guest``) and the page pools, with a step selector;
- allocations by consumer (rows) and provider (columns), the tracker's
  view under them; a cell a check found wrong has ``class="wrong"`` and
  shows what was expected against what was found.

CPU classes in the NUMA map: ``shared`` (for unpinned guests), ``host``
(neither), ``free`` (dedicated, not pinned), ``pinned`` (the tracker
counts it and a guest's record holds it), ``orphan`` (the tracker counts
it, no guest's record holds it) and ``unpinned`` (a guest's record holds
it, the tracker does not count it: what LP#1944759's window looks like).
"""

from html import escape
import re
import zlib

from harness.core import snapshot as snapshot_mod
from harness.core import timeline as timeline_mod
# By their own names, not through harness.report, whose __init__
# imports this module (tests/unit/test_layers.py).
from harness.report.recorder import Extra
from harness.report.svg import chart as svg_chart

RESOURCE_CLASSES = ('VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB')
USAGE, TRACKER = '(usage)', '(tracker)'
ROW_NAMES = {USAGE: 'usage', TRACKER: 'tracker'}
# Colours for guests, picked by a stable hash of the name.
PALETTE = ('#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b',
           '#e377c2', '#17becf', '#bcbd22', '#7f7f7f', '#d62728')


class Run(object):
    """One run as a report shows it.

    :param name: the scenario's name.
    :param timeline: its ``Timeline`` (so far, if it failed).
    :param failure: the ``ScenarioFailed`` that ended it, if any.
    :param recorder: the ``Recorder`` that watched it, if any.
    :param profiles: host name -> ``HostProfile`` of profiled hosts.
    :param key: ``data-run`` of its section (two runs on one page).
    """

    def __init__(self, name, timeline, failure=None, recorder=None,
                 profiles=None, key='run'):
        self.name = name
        self.timeline = timeline or timeline_mod.Timeline()
        self.entries = list(timeline.entries) if timeline else []
        self.failure = failure
        self.profiles = profiles or {}
        self.key = key
        # The step the NUMA maps open at (None: the first that failed, or
        # the last).
        self.default_step = None
        self.extras = [recorder.extra(e) if recorder is not None
                       else Extra() for e in self.entries]

    @property
    def failed(self):
        return self.failure is not None or any(
            e.problems for e in self.entries)

    def problems(self, entry):
        found = list(entry.problems)
        failure = self.failure
        if (failure is not None and failure.step is not None
                and failure.step.index == entry.index):
            found += [p for p in failure.problems if p not in found]
        return found


# -- which cells a problem is about ------------------------------------------

def host_providers(snap, host):
    """The providers of ``host``: its compute nodes' roots, or its name."""
    found = set(snapshot_mod.host_roots(snap).get(host, ()))
    if host in snap.providers:
        found.add(host)
    return found


def wrong_cells(problem, snap):
    """The ``(consumer, provider)`` cells a problem is about.

    Cells of the allocations table: ``consumer`` is ``USAGE`` for
    Placement's usage row and ``TRACKER`` for the tracker's.
    """
    subject = problem.subject or ''
    check = problem.check
    match = re.match(r'^provider (\S+?)(, (\S+))?( generation)?$', subject)
    if match:
        return {(USAGE, match.group(1))}
    match = re.match(r'^host (\S+?)(,| cell | CPU |$)', subject)
    if match:
        return {(TRACKER, p) for p in host_providers(snap, match.group(1))}
    if check == 'usages':
        return {(USAGE, p) for p in host_providers(snap, subject)}
    if check in ('tracker', 'pinned_cpus'):
        host = subject.split()[0] if subject else ''
        return {(TRACKER, p) for p in host_providers(snap, host)}
    match = re.match(r'^(\S+) on (\S+)$', subject)
    if match:
        consumer, where = match.groups()
        providers = host_providers(snap, where) or {where}
        return {(consumer, p) for p in providers}
    if check in ('servers', 'migrations', 'providers', 'step',
                 'injection_unfired'):
        return set()
    # A consumer: the providers it was expected at or holds.
    providers = set(snap.allocations_of(subject))
    for value in (problem.expected, problem.actual):
        if isinstance(value, dict):
            for host in value:
                providers |= host_providers(snap, host)
    return {(subject, p) for p in providers}


def wrong_charts(problem, snap):
    """``(provider, resource class or None)`` pairs a problem is about."""
    match = re.match(r'^provider (\S+?)(, (\S+))?$', problem.subject or '')
    if match:
        return {(match.group(1), match.group(3))}
    if problem.check in ('usages', 'tracker', 'pinned_cpus'):
        host = (problem.subject or '').split(' ')[0]
        rc = 'PCPU' if problem.check == 'pinned_cpus' else None
        return {(p, rc) for p in host_providers(snap, host)}
    match = re.match(r'^host (\S+?)(,| cell | CPU |$)', problem.subject or '')
    if match:
        return {(p, None) for p in host_providers(snap, match.group(1))}
    return set()


def _expected_text(problem, snap, provider):
    """What the cell should have held, as the problem says, or None."""
    expected = problem.expected
    if expected is None:
        return None
    if isinstance(expected, dict):
        for host, part in expected.items():
            if provider in host_providers(snap, host) or host == provider:
                return _fmt(part)
        if not all(isinstance(k, str) and k.isupper() for k in expected):
            return '-'
        return _fmt(expected)
    # What of the cell it is about: the subject less the host or provider.
    what = re.sub(r'^(host|provider) \S+?(, |$)', '', problem.subject or '')
    if not what or what == provider or provider in host_providers(
            snap, what):
        what = problem.check
    return '%s: %s' % (what, _fmt(expected))


def _fmt(value):
    if isinstance(value, dict):
        if all(isinstance(v, (int, float)) for v in value.values()):
            return timeline_mod.resources_short(value) or '-'
        return ', '.join('%s: %s' % (k, _fmt(v))
                         for k, v in sorted(value.items(), key=str))
    if isinstance(value, (list, tuple, set, frozenset)):
        return '[%s]' % ', '.join(str(v) for v in value)
    return str(value)


# -- the page -----------------------------------------------------------------

STYLE = '''
body{font:14px/1.4 system-ui,sans-serif;margin:1.2em;color:#222;
 background:#fff}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.4em;
 border-bottom:1px solid #ccc}h3{font-size:1em;margin:.8em 0 .3em}
.verdict{display:inline-block;padding:.15em .6em;border-radius:4px;
 color:#fff;font-weight:bold}.verdict.pass{background:#2a7d2a}
.verdict.fail{background:#b3261e}pre.failure{background:#fff3f2;
 border-left:4px solid #b3261e;padding:.5em;white-space:pre-wrap}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ccc;
 padding:.2em .45em;vertical-align:top;text-align:left}
th{background:#f2f2f2}tr.failed td{background:#fff3f2}
td.wrong{background:#ffd6d2;outline:2px solid #b3261e}
.expected{color:#b3261e;font-size:.85em}.got{font-size:.85em}
.marks{color:#6a3d9a}.charts{display:flex;flex-wrap:wrap;gap:.6em}
svg.chart{background:#fcfcfc;border:1px solid #ddd;max-width:100%;
 height:auto}figure{margin:0}figcaption{font-weight:bold;font-size:.9em}
svg .axis{stroke:#888}svg text{font-size:10px;fill:#444}
svg .series polyline{fill:none;stroke-width:2}
svg .usage polyline,svg .usage line{stroke:#1f77b4}
svg .usage circle{fill:#1f77b4}
svg .capacity polyline,svg .capacity line{stroke:#999;stroke-dasharray:5 3}
svg .capacity circle{fill:#999}
svg .tracker polyline,svg .tracker line{stroke:#ff7f0e;stroke-width:6;
 stroke-opacity:.55}svg .tracker circle{fill:#ff7f0e;r:6px;opacity:.7}
svg .mark line{stroke:#6a3d9a;stroke-dasharray:3 3}
svg .mark polygon{fill:#6a3d9a}svg .wrong-band{fill:#ffd6d2}
svg .legend line{stroke-width:3}
.numa-host{margin:.5em 0}.numa-cells{display:flex;gap:1em;flex-wrap:wrap}
.numa-cell{border:1px solid #999;border-radius:6px;padding:.4em}
.cores{display:flex;flex-wrap:wrap;gap:4px;max-width:36em}
.core{display:flex;border:1px solid #bbb;border-radius:4px;padding:2px;
 gap:2px}.cpu{display:inline-block;width:3.2em;height:2.6em;
 text-align:center;font-size:11px;border-radius:3px;border:1px solid #ccc;
 line-height:1.2;padding-top:2px;box-sizing:border-box}
.cpu small{display:block;font-size:10px;overflow:hidden}
.cpu.host{background:#eee;color:#999}.cpu.shared{background:#e8f0fe}
.cpu.free{background:#fff}.cpu.pinned{color:#fff;font-weight:bold}
.cpu.orphan{background:#222;color:#fff}
.cpu.unpinned{background:repeating-linear-gradient(45deg,#fff,#fff 4px,
 #ffd6d2 4px,#ffd6d2 8px);border:2px solid #b3261e}
.numa-host.wrong .numa-cell{border-color:#b3261e}
.legend-cpus .cpu{width:auto;padding:2px 6px;height:auto}
.side-by-side{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.side-by-side>section{min-width:0;overflow-x:auto}
tr.outcome.failed td{background:#fff3f2}
tr.divergence td{background:#fff3c4}tr.divergence td:first-child{
 border-left:4px solid #e6a700}
'''

SCRIPT = '''
function showStep(select){
  var run=select.closest('section.run');
  run.querySelectorAll('.numa-step').forEach(function(div){
    div.hidden=(div.dataset.step!==select.value);});
}
document.querySelectorAll('select.step-select').forEach(function(select){
  var m=/step=(\\d+)/.exec(location.hash);
  if(m&&select.querySelector('option[value="'+m[1]+'"]'))select.value=m[1];
  select.addEventListener('change',function(){showStep(select);});
  showStep(select);
});
'''


def page(title, body):
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<title>%s</title><style>%s</style></head><body>%s'
            '<script>%s</script></body></html>\n'
            % (escape(title), STYLE, body, SCRIPT))


def run_page(run):
    """A whole page for one run."""
    return page('harness: %s' % run.name,
                '<h1>%s</h1>%s' % (escape(run.name), section(run)))


def section(run):
    """One run: verdict, steps, charts, NUMA maps, allocations."""
    verdict = 'FAILED' if run.failed else 'passed'
    parts = ['<section class="run" data-run="%s" data-verdict="%s">'
             % (escape(run.key), verdict),
             '<p><span class="verdict %s">%s</span> %d steps%s</p>'
             % ('fail' if run.failed else 'pass', verdict,
                len(run.entries) - 1,
                ', <span class="concurrency">Nova in %s mode</span>'
                % escape(run.timeline.concurrency)
                if run.timeline.concurrency else '')]
    if run.failure is not None:
        parts.append('<pre class="failure">%s</pre>'
                     % escape(str(run.failure).split('\n\ntimeline so far')
                              [0]))
    parts.append(steps_table(run))
    parts.append(charts(run))
    parts.append(numa_maps(run))
    parts.append(allocation_tables(run))
    parts.append('</section>')
    return ''.join(parts)


def steps_table(run):
    rows = ['<h2>Steps</h2><table class="steps"><tr><th>#</th><th>step</th>'
            '<th>what fired</th><th>found wrong</th></tr>']
    for entry, extra in zip(run.entries, run.extras):
        problems = run.problems(entry)
        rows.append(
            '<tr data-step="%d"%s><td>%d</td><td>%s</td>'
            '<td class="marks">%s</td><td>%s</td></tr>' % (
                entry.index, ' class="failed"' if problems else '',
                entry.index, escape(entry.label),
                '<br>'.join(escape(text) for _, text in extra.marks),
                '<br>'.join(escape(str(p)) for p in problems) or 'ok'))
    rows.append('</table>')
    return ''.join(rows)


def _providers(run):
    names = set()
    for entry in run.entries:
        names |= set(entry.snapshot.providers)
    return sorted(names)


def charts(run):
    labels = ['%d %s' % (e.index, e.label) for e in run.entries]
    marks = {}
    for position, extra in enumerate(run.extras):
        if extra.marks:
            marks[position] = [text for _, text in extra.marks]
    wrong = {}
    for position, entry in enumerate(run.entries):
        for problem in run.problems(entry):
            for provider, rc in wrong_charts(problem, entry.snapshot):
                wrong.setdefault((provider, rc), set()).add(position)
    out = ['<h2>Usage against capacity</h2>'
           '<p>Placement\'s usage and capacity ((total - reserved) x '
           'allocation ratio) of each provider, step by step; for PCPU also '
           'the CPUs its tracker has pinned. A purple dashed line marks a '
           'step where an injected periodic, request or fault fired (hover '
           'its triangle for where); a red band, a step where a check found '
           'it wrong.</p>']
    for provider in _providers(run):
        rcs = [rc for rc in RESOURCE_CLASSES if any(
            rc in e.snapshot.providers.get(provider, _NO_RP).inventories
            for e in run.entries)]
        if not rcs:
            continue
        out.append('<div class="host-charts" data-host="%s"><h3>%s</h3>'
                   '<div class="charts">' % (escape(provider),
                                             escape(provider)))
        for rc in rcs:
            series = [('usage', 'usage', []),
                      ('capacity', 'capacity', [])]
            pinned = rc == 'PCPU' and any(
                e.snapshot.trackers.get(provider) is not None
                and e.snapshot.trackers[provider].cells for e in run.entries)
            if pinned:
                # Drawn first, under Placement's usage: where the two
                # agree the wider line shows around the narrower.
                series.insert(0, ('tracker pinned', 'tracker', []))
            for entry in run.entries:
                rp = entry.snapshot.providers.get(provider)
                inventory = rp.inventories.get(rc) if rp else None
                series[-2][2].append(rp.usages.get(rc, 0) if inventory
                                     else None)
                series[-1][2].append(_capacity(inventory) if inventory
                                     else None)
                if pinned:
                    tracker = entry.snapshot.trackers.get(provider)
                    series[0][2].append(len(tracker.pinned_cpus)
                                        if tracker else None)
            bad = wrong.get((provider, rc), set()) | wrong.get(
                (provider, None), set())
            out.append('<figure><figcaption>%s %s</figcaption>%s</figure>' % (
                escape(provider), rc, svg_chart(
                    series, labels, marks, bad, '%s %s' % (provider, rc),
                    {'data-host': provider, 'data-rc': rc,
                     'data-run': run.key})))
        out.append('</div></div>')
    return ''.join(out)


class _NoProvider(object):
    inventories = {}


_NO_RP = _NoProvider()


def _capacity(inventory):
    value = ((inventory['total'] - inventory.get('reserved', 0))
             * inventory.get('allocation_ratio', 1.0))
    return int(value) if float(value).is_integer() else value


def _colour(guest):
    return PALETTE[zlib.crc32(guest.encode('utf-8')) % len(PALETTE)]


def numa_maps(run):
    nodes = sorted({node for e in run.entries
                    for node, tracker in e.snapshot.trackers.items()
                    if tracker.cells})
    if not nodes:
        return ''
    default = _default_step(run)
    options = ''.join(
        '<option value="%d"%s>%d %s</option>' % (
            e.index, ' selected' if e.index == default else '', e.index,
            escape(e.label)) for e in run.entries)
    key = escape(run.key)
    out = ['<h2 id="%s-numa">NUMA cells and pinned CPUs</h2>'
           '<p>Each box is a physical core with its SMT siblings; a '
           'coloured CPU is pinned by the tracker and held by the guest '
           'named in it (its record\'s NUMA topology). '
           '<span class="legend-cpus"><span class="cpu shared">shared'
           '</span> <span class="cpu free">dedicated, free</span> '
           '<span class="cpu host">host</span> <span class="cpu orphan">'
           'pinned, no guest holds it</span> <span class="cpu unpinned">'
           'a guest holds it, not pinned</span></span></p>'
           '<label>step <select class="step-select" data-run="%s">%s'
           '</select></label>' % (key, key, options)]
    for position, entry in enumerate(run.entries):
        out.append('<div class="numa-step" data-step="%d"%s>'
                   % (entry.index, '' if entry.index == default
                      else ' hidden'))
        wrong_hosts = set()
        for problem in run.problems(entry):
            for consumer, provider in wrong_cells(problem, entry.snapshot):
                if consumer == TRACKER:
                    wrong_hosts.add(provider)
        for node in nodes:
            tracker = entry.snapshot.trackers.get(node)
            if tracker is None:
                continue
            guests = run.extras[position].guests.get(tracker.host, {})
            out.append(_numa_host(node, tracker, guests,
                                  run.profiles.get(tracker.host),
                                  node in wrong_hosts))
        out.append('</div>')
    return ''.join(out)


def _default_step(run):
    if run.default_step is not None:
        return run.default_step
    for entry in run.entries:
        if run.problems(entry):
            return entry.index
    return run.entries[-1].index if run.entries else 0


def _numa_host(node, tracker, guests, profile, wrong):
    out = ['<div class="numa-host%s" data-host="%s"><h3>%s</h3>'
           '<div class="numa-cells">' % (' wrong' if wrong else '',
                                         escape(node), escape(node))]
    for cell in tracker.cells:
        cores = _cores(cell, profile)
        out.append('<div class="numa-cell" data-cell="%d"><b>cell %d</b> '
                   'memory %d/%d MB, %d pinned<div class="cores">'
                   % (cell.id, cell.id, cell.memory_usage, cell.memory_mb,
                      len(cell.pinned_cpus)))
        for core in cores:
            out.append('<span class="core">%s</span>' % ''.join(
                _cpu(cpu, cell, guests) for core_cpu in [core]
                for cpu in core_cpu))
        out.append('</div>')
        out.append(_pages(cell))
        out.append('</div>')
    out.append('</div></div>')
    return ''.join(out)


def _cores(cell, profile):
    """The cell's CPUs grouped by physical core, siblings together."""
    cpus = set(cell.cpus) | set(cell.pcpus)
    if profile is not None:
        for spec in profile.cells:
            if spec.id == cell.id:
                cores = [sorted(core) for core in
                         sorted(spec.siblings, key=min)]
                listed = {c for core in cores for c in core}
                return cores + [[c] for c in sorted(cpus - listed)]
    return [[c] for c in sorted(cpus)]


def _cpu(cpu, cell, guests):
    guest = guests.get(cpu)
    pinned = cpu in cell.pinned_cpus
    style = ''
    if pinned and guest:
        css, style = 'pinned', ' style="background:%s"' % _colour(guest)
    elif pinned:
        css, guest = 'orphan', '?'
    elif guest:
        css = 'unpinned'
    elif cpu in cell.pcpus:
        css = 'free'
    elif cpu in cell.cpus:
        css = 'shared'
    else:
        css = 'host'
    return ('<span class="cpu %s" data-cpu="%d"%s%s title="CPU %d: %s">%d'
            '<small>%s</small></span>' % (
                css, cpu, ' data-guest="%s"' % escape(guest) if guest else '',
                style, cpu, css + (' by %s' % guest if guest else ''), cpu,
                escape(guest or '')))


def _pages(cell):
    if not cell.pages:
        return ''
    rows = ''.join(
        '<tr data-page-kb="%d"><td>%s</td><td>%d</td><td>%d</td><td>%d</td>'
        '</tr>' % (size, _page_name(size), page.get('total', 0),
                   page.get('used', 0), page.get('reserved', 0))
        for size, page in sorted(cell.pages.items()))
    return ('<table class="pages"><tr><th>pages</th><th>total</th>'
            '<th>used</th><th>reserved</th></tr>%s</table>' % rows)


def _page_name(kib):
    for name, size in (('1G', 1024 * 1024), ('2M', 2048), ('4K', 4)):
        if kib == size:
            return name
    return '%dK' % kib


def allocation_tables(run):
    providers = _providers(run)
    default = _default_step(run)
    out = ['<h2 id="%s-allocations">Allocations by consumer and provider'
           '</h2>'
           '<p>Rows are consumers, columns providers; the usage row is '
           'Placement\'s, the tracker row what each compute\'s resource '
           'tracker counts. A cell a check found wrong is red, with what '
           'was expected.</p>' % escape(run.key)]
    for entry in run.entries:
        snap = entry.snapshot
        wrong = {}
        for problem in run.problems(entry):
            for cell in wrong_cells(problem, snap):
                wrong.setdefault(cell, []).append(problem)
        consumers = sorted(snap.allocations)
        consumers += sorted({c for c, _ in wrong if c not in consumers
                             and c not in (USAGE, TRACKER)})
        out.append('<details class="allocations" data-step="%d"%s>'
                   '<summary>step %d: %s%s</summary><table><tr>'
                   '<th>consumer</th>%s</tr>' % (
                       entry.index, ' open' if (entry.index == default
                                                or wrong) else '',
                       entry.index, escape(entry.label),
                       ' &mdash; found wrong' if wrong else '',
                       ''.join('<th>%s</th>' % escape(p) for p in providers)))
        for consumer in consumers + [USAGE, TRACKER]:
            out.append('<tr data-consumer="%s"><th>%s</th>' % (
                escape(consumer), escape(ROW_NAMES.get(consumer, consumer))))
            for provider in providers:
                out.append(_alloc_cell(entry, consumer, provider,
                                       wrong.get((consumer, provider))))
            out.append('</tr>')
        out.append('</table></details>')
    return ''.join(out)


def _alloc_cell(entry, consumer, provider, problems):
    snap = entry.snapshot
    if consumer == USAGE:
        rp = snap.providers.get(provider)
        text = timeline_mod.resources_short(rp.usages) if rp else ''
    elif consumer == TRACKER:
        text = _tracker_text(snap.trackers.get(provider))
    else:
        text = timeline_mod.resources_short(
            snap.allocations_of(consumer).get(provider, {}))
    attrs = ' data-step="%d" data-consumer="%s" data-provider="%s"' % (
        entry.index, escape(consumer), escape(provider))
    if not problems:
        return '<td%s>%s</td>' % (attrs, escape(text or '-'))
    expected = [t for t in (_expected_text(p, snap, provider)
                            for p in problems) if t is not None]
    return ('<td class="wrong"%s title="%s"><div class="got">got %s</div>%s'
            '</td>' % (attrs, escape('\n'.join(str(p) for p in problems)),
                       escape(text or '-'),
                       ''.join('<div class="expected">expected %s</div>'
                               % escape(t) for t in expected)
                       or '<div class="expected">%s</div>'
                       % escape(str(problems[0]))))


def _tracker_text(tracker):
    if tracker is None:
        return ''
    text = 'vcpus %d/%d, mem %d/%d, disk %d/%d' % (
        tracker.vcpus_used, tracker.vcpus, tracker.memory_mb_used,
        tracker.memory_mb, tracker.local_gb_used, tracker.local_gb)
    if tracker.cells:
        text += ', pinned [%s]' % snapshot_mod.format_cpus(
            tracker.pinned_cpus)
    return text


# -- two runs side by side ----------------------------------------------------

def reproduce_page(title, intro, installed, reintroduced):
    """Installed Nova and the bug put back, side by side.

    The first step whose allocations or pinned CPUs differ is marked
    (``id="first-divergence"``, as ``timeline.side_by_side`` finds it).
    """
    rows = ['<h2>Side by side</h2><table class="compare"><tr><th>#</th>'
            '<th>step</th><th>installed</th><th>reintroduced</th></tr>']
    left, right = installed.entries, reintroduced.entries
    _, first = timeline_mod.side_by_side(
        installed.timeline, reintroduced.timeline, 'installed',
        'reintroduced')
    if first is not None:
        # Both sides' maps open where they part.
        entry = left[first] if first < len(left) else right[first]
        installed.default_step = reintroduced.default_step = entry.index
    for position in range(max(len(left), len(right))):
        a = left[position] if position < len(left) else None
        b = right[position] if position < len(right) else None
        entry = a or b
        diverges = position == first
        rows.append('<tr data-step="%d"%s><td>%d</td><td>%s%s</td>%s%s</tr>'
                    % (entry.index, ' class="divergence" '
                       'id="first-divergence"' if diverges else '',
                       entry.index, escape(entry.label),
                       ' <b>&larr; first divergence</b>' if diverges else '',
                       _compare_cell(a), _compare_cell(b)))
    rows.append('</table>')
    body = ('<h1>%s</h1><p>%s</p>%s<div class="side-by-side">'
            '<section><h2>installed Nova</h2>%s</section>'
            '<section><h2>bug reintroduced</h2>%s</section></div>'
            % (escape(title), escape(intro), ''.join(rows),
               section(installed), section(reintroduced)))
    return page('harness: %s' % title, body)


def _compare_text(entry):
    return (timeline_mod.allocations_cell(entry.snapshot),
            timeline_mod.pinned_cell(entry.snapshot))


def _compare_cell(entry):
    if entry is None:
        return '<td>(not reached)</td>'
    allocations, pinned = _compare_text(entry)
    return ('<td%s>%s<br><small>pinned %s</small></td>'
            % (' class="wrong"' if entry.problems else '',
               escape(allocations), escape(pinned)))


# -- an exploration -----------------------------------------------------------

def explore_page(title, report, links=None):
    """Every interleaving an exploration tried, failures grouped by problem.

    ``report`` is the explorer's (``outcomes``: each replay's injections,
    verdict, step and problems); ``links`` maps a shrunk reproducer's path
    to its own report's file name.
    """
    links = links or {}
    groups = {}
    for outcome in report.outcomes:
        if outcome.failed:
            kind = '%s: %s' % (outcome.label, outcome.problems[0].kind
                               if outcome.problems else 'failed')
            groups.setdefault(kind, []).append(outcome)
    out = ['<h1>%s</h1><p>%d interleavings tried, %d failed, in %d '
           'kinds of problem.</p>' % (escape(title), report.tried,
                                      len(report.failed), len(groups))]
    for number, (kind, outcomes) in enumerate(sorted(groups.items()), 1):
        reproducers = [o.shrunk_path for o in outcomes if o.shrunk_path]
        out.append('<section class="problem" data-kind="%s"><h2>%d. %s '
                   '(%d)</h2>' % (escape(kind), number, escape(kind),
                                  len(outcomes)))
        for path in reproducers:
            target = links.get(path)
            out.append('<p>reproducer: <code>%s</code>%s</p>' % (
                escape(path), ' &mdash; <a class="reproducer" href="%s">'
                'its report</a>' % escape(target) if target else ''))
        out.append(_outcome_rows(outcomes))
        out.append('</section>')
    out.append('<h2>Every interleaving</h2>')
    out.append(_outcome_rows(report.outcomes))
    return page('harness explore: %s' % title, ''.join(out))


def _outcome_rows(outcomes):
    rows = ['<table class="outcomes"><tr><th>injections</th><th>verdict'
            '</th><th>found wrong</th></tr>']
    for outcome in outcomes:
        where = ' + '.join(str(i) for i in outcome.injections) or (
            'no injection')
        verdict = 'failed' if outcome.failed else 'ok'
        found = ''
        if outcome.failed:
            found = 'step %s (%s): %s' % (
                outcome.step, outcome.label,
                '; '.join(str(p) for p in outcome.problems))
        rows.append('<tr class="outcome%s" data-verdict="%s"><td>%s</td>'
                    '<td>%s</td><td>%s</td></tr>' % (
                        ' failed' if outcome.failed else '', verdict,
                        escape(where), verdict, escape(found)))
    rows.append('</table>')
    return ''.join(rows)
