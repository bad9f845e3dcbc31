"""An exploration split into shards, and the shards merged.

``harness explore --shard I/N`` runs the baseline of each scenario (every
shard runs it: it is deterministic, and each shard needs its plan), then
replays only its share of the runnable interleavings (``Split``): those
whose index in the plan is ``I`` modulo ``N``, or with ``--nested``
whole groups of the pairs that share their first injection, so that a
shard nests them as one run does; and writes what it found to
``shard-I-of-N.json``: no grouping, no shrinking. ``harness explore
--merge FILES`` reads the N files, puts the results back in plan order,
and concludes as one run does (``Explorer.conclude``: failures grouped
by step and first problem, each kind shrunk once), so N shards merged
report what one run reports.

A shard file (``FORMAT``, ``VERSION``) is JSON::

    {"format": "harness-explore-shard", "version": 1,
     "shard": {"index": I, "count": N},
     "options": {"tasks": [...], "depth": 2, "reintroduce": null,
                 "limit": null, "invariants": true, "nested": false,
                 "prune": false},
     "scenarios": [{
         "file": "tests/.../resize_confirm.yaml", "name": "...",
         "fingerprint": "<sha256 of the scenario as written>",
         "baseline": RESULT, "candidates": 1456, "runnable": 800,
         "plan": "<sha256 of every runnable interleaving, in order>",
         "inapplicable": 3, "seconds": 812.5, "plan_seconds": 2.5,
         "replays": [{"index": I, "injections": [INJECTION...],
                      "result": RESULT}, ...]}]}

A RESULT is ``explorer.replay``'s: ``failed``, ``step``, ``label``,
``problems`` (``Problem`` records, field by field), ``inapplicable``,
``phases``, the baseline's ``points``, and for a failure its
``signature`` (what its shrinking keeps to:
``harness.runners.signatures``; a file without one has its failure
replayed once more to learn it), and ``nested`` if it was forked from
a run of its first injection alone. ``inapplicable`` counts this shard's
replays whose injection could not run (the merge counts them from the
results, and ``candidates - runnable`` once); ``plan_seconds`` is the
part of ``seconds`` the plan took (its baseline run), which every shard
spends. Values a check compared (``expected``, ``actual``) keep their
Python types through ``encode``. A file written before ``nested`` or
``prune`` was an option (no ``options.nested``, ``options.prune``) was
explored without it.
"""

import dataclasses
import hashlib
import json
import os
import re
import time

from harness.core import errors
from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod
from harness.runners import explorer as explorer_mod
from harness.runners import signatures

FORMAT = 'harness-explore-shard'
VERSION = 1
# The options every shard of one exploration must share (Explorer's).
# ``prune`` changes no outcome (the soundness proof), but a merged
# summary's "pruned" counts are one exploration's only if every shard
# pruned alike.
OPTIONS = ('tasks', 'depth', 'reintroduce', 'limit', 'invariants',
           'nested', 'prune')


def parse_shard(text):
    """``(I, N)`` from ``--shard I/N``; a ScenarioError if it is not one."""
    found = re.match(r'^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$', str(text))
    if found:
        index, count = int(found.group(1)), int(found.group(2))
        if count >= 1 and index < count:
            return index, count
    raise errors.ScenarioError(
        '--shard is I/N, shard I of N counted from 0 (0 <= I < N, N >= 1),'
        ' not %s' % errors.show(text))


def indexes(total, index, count):
    """The plan indexes shard ``index`` of ``count`` replays."""
    return range(index, total, count)


def first_injections(runnable):
    """Plan indexes of ``runnable``, grouped by their first injection.

    The groups in the order their first member comes in the plan, each
    in plan order: the pairs a nested run forks from one run of their
    first injection alone (``explorer.replay_branched``).
    """
    found = {}
    for index, injections in enumerate(runnable):
        found.setdefault(injections[0], []).append(index)
    return list(found.values())


class Split(object):
    """Which plan indexes each of ``count`` shards replays.

    Plain: index ``I`` modulo ``count`` (``indexes``), scenario by
    scenario. Nested: whole ``first_injections`` groups, so that a
    shard forks the pairs of a first injection from one run of it as
    one run does (split over N shards, each would run the single again
    and fork a few pairs from it). The groups are balanced by size,
    largest first, each to the shard with the fewest pairs so far (the
    lowest index among equals), over the scenarios in order: a group's
    size falls along the plan (a pair's second injection comes later
    than its first), so dealing groups round-robin would hand shard 0
    the largest of each round in every scenario. Pairs stand for time:
    a nested pair costs its run from its second injection on, its
    single's run is shared by its group.

    ``shares`` is called once per scenario, in order: the balance
    carries from one scenario to the next.
    """

    def __init__(self, count, nested=False):
        self.count = count
        self.nested = nested
        self.loads = [0] * count

    def shares(self, runnable):
        """Each shard's plan indexes of one scenario's ``runnable``.

        ``count`` lists, each in plan order; plain, only the number of
        interleavings counts.
        """
        if not self.nested:
            return [list(indexes(len(runnable), index, self.count))
                    for index in range(self.count)]
        shares = [[] for _ in range(self.count)]
        # sorted is stable: among groups of one size, plan order.
        for group in sorted(first_injections(runnable), key=len,
                            reverse=True):
            least = min(range(self.count),
                        key=lambda index: (self.loads[index], index))
            shares[least].extend(group)
            self.loads[least] += len(group)
        return [sorted(share) for share in shares]


def file_name(index, count):
    return 'shard-%d-of-%d.json' % (index, count)


# -- running a shard ----------------------------------------------------------

def run(explorer, scenarios, index, count):
    """Shard ``index`` of ``count`` of exploring ``scenarios``: a document.

    ``explorer`` is an ``Explorer``; its options are recorded so that the
    merge shrinks with the same ones.
    """
    document = {'format': FORMAT, 'version': VERSION,
                'shard': {'index': index, 'count': count},
                'options': _options(explorer), 'scenarios': []}
    split = Split(count, explorer.nested)
    with explorer.kept():
        for scenario in scenarios:
            started = time.monotonic()
            plan = explorer.plan(scenario)
            planned = time.monotonic() - started
            mine = split.shares(plan.runnable)[index]
            results = explorer.replay_plan(plan, mine)
            document['scenarios'].append({
                'file': scenario.path, 'name': scenario.name,
                'fingerprint': fingerprint(scenario),
                'baseline': _result(plan.baseline),
                'candidates': plan.candidates,
                'runnable': len(plan.runnable),
                'plan': _plan_digest(plan.runnable),
                'inapplicable': sum(1 for r in results
                                    if r['inapplicable']),
                'seconds': time.monotonic() - started,
                'plan_seconds': planned,
                'replays': [{'index': i, 'injections': [
                    _injection(injection)
                    for injection in plan.runnable[i]],
                    'result': _result(result)}
                    for i, result in zip(mine, results)]})
    return document


def summary(document):
    """A line per scenario of a shard: what it replayed and found."""
    index, count = document['shard']['index'], document['shard']['count']
    lines = []
    for entry in document['scenarios']:
        replays = entry['replays']
        if entry['baseline']['failed']:
            found = 'its run without injections failed'
        else:
            found = ('%d of %d interleavings replayed, %d failed, %d not '
                     'applicable' % (
                         len(replays), entry['runnable'],
                         sum(1 for r in replays if r['result']['failed']),
                         entry['inapplicable']))
            nested = [r for r in replays if r['result'].get('nested')]
            if document['options'].get('nested'):
                # Each forked from a run of its first injection alone:
                # those runs are replays too.
                found += (', %d forked from %d runs of their first '
                          'injection' % (len(nested), len({
                              json.dumps(r['injections'][0], sort_keys=True)
                              for r in nested})))
        lines.append('%s: shard %d/%d: %s, in %.1f s (its plan %.1f s)' % (
            entry['name'], index, count, found, entry['seconds'],
            entry.get('plan_seconds', 0.0)))
    return lines


def write(document, out_dir):
    """Write a shard's document into ``out_dir``; its path."""
    os.makedirs(out_dir, exist_ok=True)
    shard = document['shard']
    path = os.path.join(out_dir, file_name(shard['index'], shard['count']))
    with open(path, 'w', encoding='utf-8') as out:
        json.dump(document, out, indent=1, sort_keys=True)
        out.write('\n')
    return path


def fingerprint(scenario):
    """The scenario as written, hashed: shards must explore the same."""
    return _digest(scenario.raw)


# -- merging ------------------------------------------------------------------

@dataclasses.dataclass
class Merged(object):
    """Shard files read and checked: one exploration's results."""
    options: dict
    shards: int
    # Per scenario: its shard entry (of the first file), the runnable
    # interleavings and their results, in plan order.
    scenarios: list
    # ``(scenario, report)`` for each, once ``merge`` concluded them.
    explored: list = dataclasses.field(default_factory=list)


def load(paths):
    """Read and check the shard files of one exploration (``Merged``).

    Refuses, with one ScenarioError naming the file: a malformed file,
    shards of different scenarios or options, shards of different
    counts, a shard given twice or missing, a replay given twice or by
    no shard, a shard that replayed other than its share (``Split``),
    shards whose baseline runs planned different interleavings.
    """
    if not paths:
        raise errors.ScenarioError('--merge needs the shard files')
    documents = [(path, read(path)) for path in paths]
    first_path, first = documents[0]
    count = first['shard']['count']
    given = {}
    for path, document in documents:
        shard = document['shard']
        if shard['count'] != count:
            raise errors.ScenarioError(
                '%s: shard %d of %d, but %s is of %d shards'
                % (path, shard['index'], shard['count'], first_path, count))
        if shard['index'] in given:
            raise errors.ScenarioError(
                'shard %d of %d is given twice: %s and %s'
                % (shard['index'], count, given[shard['index']], path))
        given[shard['index']] = path
        _same_exploration(path, document, first_path, first)
    missing = sorted(set(range(count)) - set(given))
    if missing:
        raise errors.ScenarioError(
            'shard%s %s of %d missing (have %s)' % (
                's' if len(missing) > 1 else '',
                ', '.join(str(i) for i in missing), count,
                ', '.join(paths)))
    split = Split(count, first['options']['nested'])
    scenarios = []
    for number, entry in enumerate(first['scenarios']):
        runnable = [None] * entry['runnable']
        results = [None] * entry['runnable']
        seconds = 0.0
        for path, document in documents:
            mine = document['scenarios'][number]
            seconds = max(seconds, mine['seconds'])
            for replay in mine['replays']:
                at = replay['index']
                if not 0 <= at < len(runnable) or (
                        runnable[at] is not None):
                    raise errors.ScenarioError(
                        '%s: scenario %r: field "replays": plan index %d '
                        '%s' % (path, entry['name'], at,
                                'is replayed twice'
                                if 0 <= at < len(runnable) else
                                'is not in the plan of %d' % len(runnable)))
                runnable[at] = replay['injections']
                results[at] = replay['result']
        if split.nested:
            # The groups are known once the shards' interleavings are.
            missing = [at for at, found in enumerate(runnable)
                       if found is None]
            if missing:
                raise errors.ScenarioError(
                    '%s: scenario %r: field "replays": no shard replays '
                    'plan indexes %s' % (', '.join(paths), entry['name'],
                                         _span(missing)))
            _same_plan(first_path, entry, runnable)
            _split_as(documents, number, entry, split.shares([
                tuple(_from_injection(i) for i in injections)
                for injections in runnable]))
        else:
            _split_as(documents, number, entry, split.shares(runnable))
            _same_plan(first_path, entry, runnable)
        scenarios.append(dict(entry, runnable=runnable, results=results,
                              seconds=seconds))
    return Merged(first['options'], count, scenarios)


def _split_as(documents, number, entry, shares):
    """Refuse a shard whose replays of a scenario are not its share."""
    for path, document in documents:
        shard = document['shard']
        done = [replay['index']
                for replay in document['scenarios'][number]['replays']]
        expected = shares[shard['index']]
        if done != expected:
            raise errors.ScenarioError(
                '%s: scenario %r: field "replays": shard %d of %d '
                'replays plan indexes %s, not %s'
                % (path, entry['name'], shard['index'], shard['count'],
                   _span(expected), _span(done)))


def _same_plan(first_path, entry, runnable):
    if _digest(runnable) != entry['plan']:
        raise errors.ScenarioError(
            '%s: scenario %r: the shards\' interleavings are not those '
            'of their plan (field "plan")' % (first_path, entry['name']))


def merge(paths, out_dir=None, workers=None, progress=None,
          kept_cloud=True, status=None, replay_timeout=None):
    """Merge shard files (``Merged``): reports as one run's.

    Failures are grouped and each kind shrunk once, with the shards'
    options (``--reintroduce``, invariants); reproducers go to
    ``out_dir``; ``replay_timeout``: the shrinking's (``Explorer``'s; no
    option of the shards': it changes no outcome). ``explored`` holds
    ``(scenario, report)`` pairs; a
    report's ``seconds`` is its slowest shard's plus the merge's own.
    """
    merged = load(paths)
    options = merged.options
    explorer = explorer_mod.Explorer(
        tasks=options['tasks'], depth=options['depth'],
        reintroduce=options['reintroduce'], limit=options['limit'],
        invariants=options['invariants'], nested=options['nested'],
        prune=options['prune'], out_dir=out_dir, workers=workers,
        progress=progress, kept_cloud=kept_cloud, status=status,
        replay_timeout=replay_timeout)
    with explorer.kept():
        for entry in merged.scenarios:
            started = time.monotonic()
            scenario = _scenario(entry)
            plan = explorer_mod.Plan(
                scenario, _from_result(entry['baseline']),
                entry['candidates'],
                [tuple(_from_injection(i) for i in injections)
                 for injections in entry['runnable']])
            report = explorer.conclude(
                plan, [_from_result(r) for r in entry['results']])
            report.seconds = entry['seconds'] + time.monotonic() - started
            merged.explored.append((scenario, report))
    return merged


def read(path):
    """A shard file's document, its shape checked."""
    try:
        with open(path, encoding='utf-8') as source:
            document = json.load(source)
    except FileNotFoundError:
        raise errors.ScenarioError('%s: no such shard file' % path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise errors.ScenarioError('%s: not a shard file of harness explore '
                                   '(%s)' % (path, exc))
    check = _Check(path)
    check.mapping(document, 'the file')
    if document.get('format') != FORMAT:
        check.fail('format', 'is %r in a shard file' % FORMAT)
    if document.get('version') != VERSION:
        check.fail('version', 'is %d here, not %s' % (
            VERSION, errors.show(document.get('version'))))
    shard = check.field(document, 'shard', dict)
    count = check.field(shard, 'count', int, 'shard.count')
    index = check.field(shard, 'index', int, 'shard.index')
    if not 0 <= index < count:
        check.fail('shard', 'index %d of %d shards' % (index, count))
    options = check.field(document, 'options', dict)
    # Written before they were options: explored without them.
    options.setdefault('nested', False)
    options.setdefault('prune', False)
    for key in OPTIONS:
        if key not in options:
            check.fail('options.%s' % key, 'is missing')
    for number, entry in enumerate(check.field(document, 'scenarios', list)):
        where = 'scenarios[%d]' % number
        check.mapping(entry, where)
        for key, kind in (('file', str), ('name', str), ('fingerprint', str),
                          ('baseline', dict), ('candidates', int),
                          ('runnable', int), ('plan', str),
                          ('inapplicable', int),
                          ('seconds', (int, float)), ('replays', list)):
            check.field(entry, key, kind, '%s.%s' % (where, key))
        _check_result(check, entry['baseline'], where + '.baseline')
        for at, replay in enumerate(entry['replays']):
            field = '%s.replays[%d]' % (where, at)
            check.mapping(replay, field)
            check.field(replay, 'index', int, field + '.index')
            check.field(replay, 'injections', list, field + '.injections')
            _check_result(check, check.field(
                replay, 'result', dict, field + '.result'),
                field + '.result')
            try:
                [_from_injection(i) for i in replay['injections']]
            except (TypeError, KeyError, ValueError):
                check.fail(field + '.injections', 'are not injections')
    return document


class _Check(object):
    """Refusals naming the shard file and the field."""

    def __init__(self, path):
        self.path = path

    def fail(self, field, text):
        raise errors.ScenarioError(
            '%s: not a shard file of harness explore: field "%s" %s'
            % (self.path, field, text))

    def mapping(self, value, field):
        if not isinstance(value, dict):
            self.fail(field, 'must be a mapping')

    def field(self, mapping, key, kind, field=None):
        field = field or key
        if key not in mapping:
            self.fail(field, 'is missing')
        value = mapping[key]
        if not isinstance(value, kind) or (
                isinstance(value, bool) and kind is not bool):
            self.fail(field, 'is %s' % errors.show(value))
        return value


def _check_result(check, result, field):
    for key, kind in (('failed', bool), ('inapplicable', bool),
                      ('label', str), ('problems', list),
                      ('phases', dict)):
        check.field(result, key, kind, '%s.%s' % (field, key))
    if result['failed'] and not isinstance(result.get('step'), int):
        check.fail(field + '.step', 'is not a step index')
    try:
        [_from_problem(p) for p in result['problems']]
    except (TypeError, KeyError, ValueError):
        check.fail(field + '.problems', 'are not problem records')
    signature = result.get('signature')
    if signature is not None and not (
            isinstance(signature, list)
            and len(signature) == len(signatures.Signature._fields)
            and all(isinstance(part, str) for part in signature)):
        check.fail(field + '.signature', 'is %s, not a failure\'s '
                   'signature' % errors.show(signature))


def _same_exploration(path, document, first_path, first):
    if document['options'] != first['options']:
        differ = sorted(key for key in OPTIONS
                        if document['options'][key] != first['options'][key])
        raise errors.ScenarioError(
            '%s: explored with other options than %s (%s)'
            % (path, first_path, '; '.join(
                'field "options.%s": %s, not %s' % (
                    key, json.dumps(document['options'][key]),
                    json.dumps(first['options'][key]))
                for key in differ)))
    ours = [(e['file'], e['name'], e['fingerprint'])
            for e in document['scenarios']]
    theirs = [(e['file'], e['name'], e['fingerprint'])
              for e in first['scenarios']]
    if ours != theirs:
        raise errors.ScenarioError(
            '%s: a shard of other scenarios than %s (%s)' % (
                path, first_path, ', '.join(
                    '%s: %r' % (f, n) for f, n, _ in ours) or 'none'))
    for mine, entry in zip(document['scenarios'], first['scenarios']):
        mine = dict(mine, failed=mine['baseline']['failed'])
        entry = dict(entry, failed=entry['baseline']['failed'])
        for key in ('failed', 'candidates', 'runnable', 'plan'):
            if mine[key] != entry[key]:
                raise errors.ScenarioError(
                    '%s: scenario %r: its run without injections planned '
                    'other interleavings than in %s (field "%s"): a run '
                    'that is not deterministic, or another Nova'
                    % (path, entry['name'], first_path, key))


def _scenario(entry):
    """The scenario a shard explored, as it was when it did."""
    for scenario in scenario_mod.load(entry['file']):
        if scenario.name == entry['name']:
            if fingerprint(scenario) != entry['fingerprint']:
                raise errors.ScenarioError(
                    '%s: scenario %r changed since the shards explored it'
                    % (entry['file'], entry['name']))
            return scenario
    raise errors.ScenarioError('%s: no scenario named %r, which the shards '
                               'explored' % (entry['file'], entry['name']))


def _span(found):
    found = list(found)
    if len(found) > 6:
        return '[%s, ... %d in all]' % (
            ', '.join(str(i) for i in found[:3]), len(found))
    return str(found)


def _options(explorer):
    return {'tasks': list(explorer.tasks), 'depth': explorer.depth,
            'reintroduce': explorer.reintroduce, 'limit': explorer.limit,
            'invariants': explorer.invariants,
            'nested': bool(explorer.nested), 'prune': bool(explorer.prune)}


def _digest(value):
    return hashlib.sha256(json.dumps(
        value, sort_keys=True, default=repr).encode('utf-8')).hexdigest()


def _plan_digest(runnable):
    return _digest([[_injection(i) for i in injections]
                    for injections in runnable])


# -- records ------------------------------------------------------------------

def encode(value):
    """A value as JSON that ``decode`` turns back into it.

    Tuples, sets and mappings (whatever their keys) are tagged; a value
    of any other type keeps only its ``repr``.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {'tuple': [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {'set': sorted((encode(v) for v in value), key=_digest)}
    if isinstance(value, dict):
        return {'dict': [[encode(k), encode(v)] for k, v in value.items()]}
    return {'repr': repr(value)}


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, inner), = value.items()
    if tag == 'tuple':
        return tuple(decode(v) for v in inner)
    if tag == 'set':
        return {decode(v) for v in inner}
    if tag == 'dict':
        return {decode(k): decode(v) for k, v in inner}
    if tag == 'repr':
        return inner
    raise ValueError('unknown tag %r' % tag)


def _problem(problem):
    return {field.name: encode(getattr(problem, field.name))
            for field in dataclasses.fields(problems_mod.Problem)}


def _from_problem(record):
    return problems_mod.Problem(**{
        field.name: decode(record[field.name])
        for field in dataclasses.fields(problems_mod.Problem)})


def _injection(injection):
    return {'at': encode(dataclasses.astuple(injection.at)),
            'task': injection.task, 'hosts': list(injection.hosts)}


def _from_injection(record):
    return explorer_mod.Injection(explorer_mod.Point(*decode(record['at'])),
                                  record['task'], tuple(record['hosts']))


def _result(result):
    record = {key: result[key] for key in ('failed', 'step', 'label',
                                           'inapplicable', 'phases')}
    record['problems'] = [_problem(p) for p in result['problems']]
    record['points'] = encode(list(result.get('points', [])))
    if result.get('signature') is not None:
        record['signature'] = list(result['signature'])
    if result.get('pruned'):
        # State caching (explorer.PRUNED): counted in the merged summary.
        record['pruned'] = result['pruned']
    if result.get('nested'):
        # Forked from its first injection's run (Report.nested).
        record['nested'] = True
    if result.get('healed'):
        # Tracker lags caught up early, excused (Report.healed).
        record['healed'] = result['healed']
    return record


def _from_result(record):
    result = dict(record, problems=[_from_problem(p)
                                    for p in record['problems']],
                  points=decode(record.get('points', [])))
    if record.get('signature') is not None:
        result['signature'] = signatures.Signature(*record['signature'])
    return result
