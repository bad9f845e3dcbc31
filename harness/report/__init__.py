"""HTML reports of scenario runs: see where accounting went wrong.

One self-contained HTML file per scenario (no network: styles, script and
SVG charts inline), written by ``harness run --report DIR``, ``harness
reproduce --report DIR``, ``harness explore --report DIR``, and by the test
suite under ``$HARNESS_REPORT_DIR`` (``attach``). What a page shows is
described in ``harness.report.page``; ``Recorder`` (a run observer) notes
what the timeline does not keep: which guest holds which pinned CPU, and
what injections fired where.

Importing this package imports nothing of Nova.
"""

import os
import re

from harness.core import errors
from harness.core import profiles as profiles_mod
from harness.report import page as page_mod
from harness.report.recorder import Recorder

__all__ = ['ENV', 'Recorder', 'attach', 'directory', 'write_explore',
           'write_reproduce', 'write_run']

#: Where the test suite writes reports (``attach``), if set.
ENV = 'HARNESS_REPORT_DIR'


def directory():
    """``$HARNESS_REPORT_DIR``, or None when unset or empty."""
    return os.environ.get(ENV) or None


def file_name(name, suffix=''):
    """A file name for a scenario's report: its name, made safe."""
    slug = re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_.')[:120]
    return '%s%s.html' % (slug or 'scenario', suffix)


def profiles(scenario):
    """Host name -> ``HostProfile`` of the scenario's profiled hosts."""
    found = {}
    for name, host in (getattr(scenario, 'hosts', None) or {}).items():
        if host.profile:
            try:
                found[name] = profiles_mod.load_profile(host.profile)
            except errors.ProfileError:
                # The run checked it; a report draws what it can.
                continue
    return found


def _write(path, text):
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path, 'w', encoding='utf-8') as target:
        target.write(text)
    return path


def write_run(out_dir, scenario, timeline, failure=None, recorder=None,
              name=None):
    """Write one run's report in ``out_dir``; return its path.

    :param failure: the ``ScenarioFailed`` that ended the run, if any
        (its timeline is used when ``timeline`` is None).
    :param recorder: the ``Recorder`` that watched the run, if any.
    :param name: the file's name (made safe; by default the scenario's).
    """
    if timeline is None and failure is not None:
        timeline = failure.timeline
    title = getattr(scenario, 'name', None) or name or 'scenario'
    run = page_mod.Run(title, timeline, failure, recorder,
                       profiles(scenario))
    return _write(os.path.join(out_dir, file_name(name or title)),
                  page_mod.run_page(run))


def write_reproduce(out_dir, scenario, installed, reintroduced, intro='',
                    recorders=(None, None), bug_id=None):
    """Write a reproduce report: installed Nova and the bug put back."""
    hosts = profiles(scenario)
    runs = [page_mod.Run(scenario.name, timeline, None, recorder, hosts,
                         key=key)
            for timeline, recorder, key in zip(
                (installed, reintroduced), recorders,
                ('installed', 'reintroduced'))]
    title = ('LP#%s: %s' % (bug_id, scenario.name) if bug_id
             else scenario.name)
    return _write(os.path.join(out_dir, file_name(title)),
                  page_mod.reproduce_page(title, intro, *runs))


def write_explore(out_dir, scenario, explored, links=None):
    """Write an exploration's report (``page.explore_page``); its path."""
    return _write(os.path.join(out_dir, file_name(scenario.name,
                                                  '.explore')),
                  page_mod.explore_page(scenario.name, explored, links))


def attach(test_case, timeline_or_exc, scenario=None, recorder=None,
           out_dir=None):
    """Write a run's report and add it to ``test_case`` as a detail.

    ``timeline_or_exc`` is the run's ``Timeline`` or the
    ``ScenarioFailed`` it raised. The report goes under ``out_dir`` (by
    default ``$HARNESS_REPORT_DIR``; nothing is written when neither is
    set) and is attached as ``report`` (``text/html``), which subunit
    carries and stestr keeps. Returns the path, or None.
    """
    out_dir = out_dir or directory()
    if not out_dir:
        return None
    failure = (timeline_or_exc
               if isinstance(timeline_or_exc, errors.ScenarioFailed)
               else None)
    timeline = None if failure is not None else timeline_or_exc
    test_id = test_case.id() if hasattr(test_case, 'id') else 'test'
    path = write_run(out_dir, scenario, timeline, failure, recorder,
                     name=test_id)
    from testtools import content
    from testtools import content_type
    with open(path, 'rb') as source:
        data = source.read()
    test_case.addDetail('report', content.Content(
        content_type.ContentType('text', 'html', {'charset': 'utf8'}),
        lambda: [data]))
    test_case.addDetail('report-path', content.text_content(path))
    return path
