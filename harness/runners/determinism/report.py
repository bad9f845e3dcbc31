"""The report of a check: its runs as JSON, resumed, and what they ran.

``to_json`` writes every run, the per-test summaries and the texts of
each distinct record; ``load_report`` reads one back for ``--resume``,
refusing a report of other code (``code_identity``) or other settings.
``dump`` writes the texts of the tests that differ; ``orphans`` names the
scenarios no test ran.
"""

import dataclasses
import hashlib
import json
import os
import re
import sys

from harness.runners import determinism
from harness.runners.determinism import compare
from harness.runners.determinism import records
from harness.runners import options

# What the runs are runs of: the harness (with its host profiles) and the
# tests.
CODE_DIRS = ('harness', 'fixtures', 'tests')


def code_identity(root=None, scenarios=()):
    """What a report's runs ran, to tell whether two reports add up.

    A digest of every file under ``CODE_DIRS`` of ``root`` (the
    checkout; caches left out) and under each folder (or of each file)
    of ``scenarios`` outside them, the record format, and the versions
    of Python, Nova and Placement.
    """
    from importlib import metadata
    root = root or determinism.ROOT
    tops = [os.path.join(root, top) for top in CODE_DIRS]
    tops += [os.path.abspath(path) for path in scenarios
             if not _under(os.path.abspath(path), tops)]
    sha = hashlib.sha256()
    for top in tops:
        walked = []
        for directory, subdirs, files in os.walk(top):
            # Pruned here, as the walk goes: caches and hidden directories
            # are not code.
            subdirs[:] = [d for d in subdirs if d != '__pycache__'
                          and not d.startswith('.')]
            walked.append((directory, sorted(files)))
        if os.path.isfile(top):
            # A scenario file given alone.
            walked.append((os.path.dirname(top), [os.path.basename(top)]))
        for directory, files in sorted(walked):
            for name in files:
                if name.endswith(('.pyc', '.pyo')):
                    continue
                path = os.path.join(directory, name)
                sha.update(os.path.relpath(path, root).encode('utf-8'))
                sha.update(b'\0')
                with open(path, 'rb') as source:
                    sha.update(source.read())
                sha.update(b'\0')
    identity = {'files': sha.hexdigest()[:16],
                'record_format': records.RECORD_FORMAT,
                'python': '%d.%d.%d' % sys.version_info[:3]}
    for dist in ('nova', 'openstack-placement'):
        try:
            identity[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            identity[dist] = None
    return identity


def _under(path, tops):
    return any(path == top or path.startswith(top + os.sep) for top in tops)


@dataclasses.dataclass
class Report(object):
    runs: list
    texts: dict
    wall: float
    # Scenarios no test ran (only known after a whole, unselected check).
    orphans: list = dataclasses.field(default_factory=list)
    # Runs that gave no result in time: dicts with item, number, stacks.
    hangs: list = dataclasses.field(default_factory=list)
    hang_dir: str = ''
    interrupted: bool = False
    error: str = ''
    # Wall time of the report this one resumed (its runs are in ``runs``).
    earlier_wall: float = 0.0

    @property
    def summaries(self):
        return compare.summarise(self.runs, self.texts)


def orphans(runs, root=None):
    """Scenario IDs in the files next to those run that no run ran.

    The directories are those of the scenarios the hooks saw run, so no
    scenario folder is named here; a file that does not load is left to
    its own test (which fails on it).
    """
    import glob

    root = root or determinism.ROOT
    seen = {scenario for run in runs for scenario, _ in run.scenarios}
    directories = sorted({os.path.dirname(path) for run in runs
                          for _, path in run.scenarios if path})
    if not directories:
        return []
    from harness.core import errors
    from harness.core import scenario as scenario_mod

    found = []
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(root, directory,
                                                  '*.yaml'))):
            try:
                loaded = scenario_mod.load(path)
            except errors.ScenarioError:
                continue
            found.extend(s.id for s in loaded if s.id not in seen)
    return found


def to_json(report, args, identity=None):
    texts = {}
    for (item, key), text in sorted(report.texts.items()):
        texts.setdefault(item, {})[key] = text
    return {
        'settings': args,
        'code': identity or code_identity(),
        'wall_seconds': report.wall,
        'earlier_wall_seconds': report.earlier_wall,
        'interrupted': report.interrupted,
        'error': report.error,
        'orphans': report.orphans,
        'hangs': [{key: hang.get(key) for key in (
            'item', 'number', 'timeout', 'stacks_path')}
            for hang in report.hangs],
        'flaky': sum(1 for s in report.summaries if s.flaky),
        'seed_dependent': sum(1 for s in report.summaries
                              if s.seed_dependent),
        'items': [{
            'id': s.item, 'runs': s.runs, 'flaky': s.flaky,
            'mean_seconds': s.mean_seconds, 'scenarios': s.scenarios,
            'verdicts': dict(s.verdicts), 'timelines': dict(s.timelines),
            'points': dict(s.points),
            'divergence': s.divergence() if s.flaky else [],
            'seed_dependent': s.seed_dependent,
            'seed_dependence': s.seed_dependence(),
            # Per hash seed (JSON keys are strings): its runs' numbers
            # and digests.
            'by_seed': {str(seed): {
                'runs': runs.numbers, 'verdicts': dict(runs.verdicts),
                'timelines': dict(runs.timelines),
                'points': dict(runs.points)}
                for seed, runs in s.by_seed.items()},
        } for s in report.summaries],
        'runs': [dataclasses.asdict(run) for run in report.runs],
        # Each distinct timeline and recording text, by test and digest:
        # what a resumed check needs to show how a new run differs.
        'texts': texts,
    }


#: Settings a resumed check must share with the report it resumes: the
#: load and the tests. Each with what a report made before it was a
#: setting ran with.
RESUME_SETTINGS = {'busy': None, 'select': None, 'hash_seeds': None,
                   'scenarios': None, 'no_bugs': False, 'tests': None}


def _setting_text(value):
    if isinstance(value, list):
        return ','.join(str(item) for item in value)
    return str(value)


def load_report(path, args, identity=None):
    """The ``Report`` of ``--resume PATH``, if it adds up with this check.

    One ``UsageError`` naming the file and what differs otherwise.
    """
    try:
        with open(path) as source:
            data = json.load(source)
        runs = [compare.Run(**run) for run in data['runs']]
        texts = {(item, key): text for item, by_key in
                 data['texts'].items() for key, text in by_key.items()}
        code, settings = data['code'], data['settings']
        hangs = [dict(hang) for hang in data['hangs']]
        wall = float(data['wall_seconds'])
    except OSError as exc:
        raise options.UsageError('--resume %s: %s'
                                 % (path, exc.strerror or exc))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise options.UsageError(
            '--resume %s: not a report of this tool (%s: %s)'
            % (path, type(exc).__name__, exc))
    identity = identity or code_identity()
    if code != identity:
        differ = sorted(key for key in set(code) | set(identity)
                        if code.get(key) != identity.get(key))
        raise options.UsageError(
            '--resume %s: its runs ran other code (%s: %s there, %s here)'
            % (path, ', '.join(differ),
               ', '.join(str(code.get(k)) for k in differ),
               ', '.join(str(identity.get(k)) for k in differ)))
    for name, before in RESUME_SETTINGS.items():
        theirs = settings.get(name, before)
        if theirs != getattr(args, name):
            option = '--' + name.replace('_', '-')
            raise options.UsageError(
                '--resume %s: it ran with %s %s, this check with %s %s' % (
                    path, option, _setting_text(theirs), option,
                    _setting_text(getattr(args, name))))
    return Report(runs, texts, wall, hangs=hangs)


def dump(summaries, directory):
    """Write each flaky or seed-dependent test's distinct texts.

    Returns the paths. A seed-dependent test's are those of its seeds.
    """
    paths = []
    for summary in summaries:
        if not (summary.flaky or summary.seed_dependent):
            continue
        os.makedirs(directory, exist_ok=True)
        slug = re.sub(r'[^A-Za-z0-9_.-]+', '_', summary.item)[:150]
        for key, text in sorted(summary.texts.items()):
            path = os.path.join(directory, '%s.run%d.%s.txt' % (
                slug, summary.first_runs.get(key, 0), key))
            with open(path, 'w') as target:
                target.write(text + '\n')
            paths.append(path)
    return paths
