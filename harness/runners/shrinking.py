"""Shrinking a failure to a small scenario that fails the same way.

The explorer hands a ``Shrinker`` the steps of a replay that failed (up
to the step that failed first: later ones cannot matter) and the
failure's signature (``harness.runners.signatures``). A change is kept
only if the scenario after it, replayed, fails with the same signature:
a shrink cannot slip from one bug to another under the same invariant.

1. Steps, by delta debugging (``ddmin``): remove the whole list, then
   each half, then each quarter, ... then each single step, from the
   last block back; after a removal that fails alike, go on from the
   shorter list (cut to the step it failed at) with blocks a little
   larger. It ends when no single step can go, as the one-by-one search
   before it did, in far fewer replays when many steps can go.
2. Values, where the loader allows: the hosts and flavors no remaining
   step names (nor the scenario's ``config``) are dropped, by the same
   search over them; then each flavor a step uses is halved (vCPUs, RAM,
   disk) while the run still fails alike, unless a remaining step
   expects a number (pinned CPUs, an amount): that was worked out from
   the flavors as they are.

A trial is not replayed when its answer is known: no step left, one the
loader refuses (a confirm with no move before it), one replayed before,
or one that is the first steps of a run known to pass them without a
problem (the scenario's own, recorded before the exploration; or a
replay that failed only at a later step). A run is its steps' (the
determinism tool's proof), so such a prefix passes again, but for the
end-of-run check of injections that never fired, which fails it with
another signature unless that is the failure shrunk.

Branched (``replay_round``), every trial of a step round that needs a
replay is forked from one run of the current steps where it parts from
them, and the round keeps the first that fails alike in the order the
one-by-one search tries them: the same as that search would keep
(``tests/functional/test_explorer_branches.py``).
"""

import json

from harness.core import errors
from harness.core import problems as problems_mod
from harness.core import scenario as scenario_mod


def ddmin(items, first_alike):
    """The fewest of ``items`` (a list) that still fail alike.

    ``first_alike(candidates, items)`` is given ``items`` less one block
    each, from the last block to the first, and returns what the first
    that fails alike keeps (its list, or a shorter one), or None. Blocks
    are the whole list, then halves, quarters, ... single items; after a
    removal the search goes on with one block fewer (at least two).
    """
    granularity = 1
    while items:
        count = min(granularity, len(items))
        bounds = [len(items) * k // count for k in range(count + 1)]
        candidates = [items[:bounds[k]] + items[bounds[k + 1]:]
                      for k in reversed(range(count))]
        kept = first_alike(candidates, items)
        if kept is not None:
            items = kept
            granularity = max(count - 1, 2)
        elif count == len(items):
            break
        else:
            granularity = min(2 * count, len(items))
    return items


class Shrinker(object):
    """Shrinks one failure of ``scenario``'s exploration.

    :param scenario: the scenario explored; its own steps passed (the
        exploration shrinks only after its recorded run did).
    :param replay: ``replay(document)``: the result (``explorer.replay``'s,
        with its ``signature``) of a scenario document run from the start.
    :param replay_round: ``replay_round(documents, base)``: their results,
        each forked from one run of the document ``base`` where its steps
        part from it, or None where they cannot be; not given, each trial
        is replayed from the start.
    """

    def __init__(self, scenario, replay, replay_round=None):
        self.scenario = scenario
        self._replay = replay
        self._replay_round = replay_round
        # Scenarios replayed, and what the shrinking replayed for.
        self.replays = 0
        self.target = None
        base = scenario.document()
        self.hosts = dict(base['hosts'])
        self.flavors = dict(base.get('flavors') or {})
        # Document (JSON) -> (failed, signature, first failing step).
        self._seen = {}
        # Runs known to pass their first steps with no problem: (the
        # document but its steps, as JSON; those steps).
        self._clean = [(_rest(base), base['steps'])]

    def shrink(self, steps, signature=None, failed_at=None):
        """The smallest document that fails as ``steps`` do.

        ``steps`` are raw steps whose replay failed first at their step
        ``failed_at`` with ``signature`` (replayed once to learn them
        when not given: a shard file of an older harness has none).
        """
        if signature is None:
            result = self._run(self.document(steps))
            signature, failed_at = result.get('signature'), result['step']
        else:
            self._learn(self.document(steps), {
                'failed': True, 'signature': signature, 'step': failed_at,
                'inapplicable': False})
        self.target = signature
        if failed_at:
            steps = steps[:failed_at]
        steps = ddmin(steps, self._steps_round)
        self._drop_unnamed(steps)
        self._halve_flavors(steps)
        return self.document(steps)

    def document(self, steps, hosts=None, flavors=None):
        """The scenario with ``steps`` and its hosts and flavors as kept."""
        document = self.scenario.document(steps)
        document['hosts'] = dict(self.hosts if hosts is None else hosts)
        flavors = self.flavors if flavors is None else flavors
        if flavors or 'flavors' in document:
            document['flavors'] = dict(flavors)
        return document

    def trial(self, steps, hosts=None, flavors=None):
        """The document to replay for ``steps``, or None.

        None when its answer is known without a replay (see the module
        docstring).
        """
        if not steps:
            return None
        document = self.document(steps, hosts, flavors)
        try:
            parsed = scenario_mod.parse(document, self.scenario.path,
                                        self.scenario.path)
        except errors.ScenarioError:
            return None
        if self._passes(document, parsed):
            return None
        return document

    # -- the passes ----------------------------------------------------------

    def _steps_round(self, candidates, items):
        documents = [self.trial(steps) for steps in candidates]
        found = self._first_alike(documents, self.document(items))
        if found is None:
            return None
        position, failed_at = found
        return candidates[position][:failed_at]

    def _drop_unnamed(self, steps):
        named = _strings(steps) | _strings(self.scenario.raw.get('config'))
        hosts = [('hosts', name) for name in self.hosts
                 if not self._host_names(name) & named]
        flavors = [('flavors', name) for name in self.flavors
                   if name not in named]
        unnamed = hosts + flavors
        if not unnamed:
            return

        def without(kept):
            drop = set(unnamed) - set(kept)
            return ({n: s for n, s in self.hosts.items()
                     if ('hosts', n) not in drop},
                    {n: s for n, s in self.flavors.items()
                     if ('flavors', n) not in drop})

        def first_alike(candidates, items):
            documents = [self.trial(steps, *without(kept))
                         for kept in candidates]
            found = self._first_alike(documents, None)
            return None if found is None else candidates[found[0]]

        self.hosts, self.flavors = without(ddmin(unnamed, first_alike))

    def _halve_flavors(self, steps):
        if _expects_numbers(steps):
            return
        named = _strings(steps)
        for name in sorted(self.flavors):
            if name not in named:
                continue
            while True:
                smaller = _halved(self.flavors[name])
                if smaller is None:
                    break
                flavors = dict(self.flavors, **{name: smaller})
                if self._first_alike(
                        [self.trial(steps, flavors=flavors)], None) is None:
                    break
                self.flavors = flavors

    # -- replays -------------------------------------------------------------

    def _first_alike(self, documents, base):
        """The first of ``documents`` that fails alike, or None.

        As ``(position, the step it failed at)``; a document that is
        None is not replayed.
        """
        wanted = [d for d in documents
                  if d is not None and _key(d) not in self._seen]
        if self._replay_round is not None and base is not None and (
                len(wanted) > 1):
            results = self._replay_round(wanted, base)
            for document, result in zip(wanted, results or ()):
                self.replays += 1
                self._learn(document, result)
        for position, document in enumerate(documents):
            if document is None:
                continue
            if _key(document) not in self._seen:
                self._run(document)
            failed, signature, step = self._seen[_key(document)]
            if failed and signature == self.target:
                return position, step
        return None

    def _run(self, document):
        self.replays += 1
        result = self._replay(document)
        self._learn(document, result)
        return result

    def _learn(self, document, result):
        self._seen[_key(document)] = (
            result['failed'], result.get('signature'), result['step'])
        if result.get('inapplicable'):
            return
        steps = document['steps']
        if result['failed']:
            steps = steps[:result['step'] - 1]
        self._clean.append((_rest(document), steps))

    def _passes(self, document, parsed):
        """Whether ``document`` is known to pass (see the module doc)."""
        if self.target is not None and (
                self.target.check == problems_mod.UNFIRED) and any(
                step.unit.arms for step in parsed.steps):
            # Its end-of-run check could fail as the failure shrunk did.
            return False
        steps, rest = document['steps'], _rest(document)
        return any(rest == clean_rest and len(steps) <= len(clean)
                   and steps == clean[:len(steps)]
                   for clean_rest, clean in self._clean)

    def _host_names(self, name):
        """The hosts and nodes a ``hosts`` entry makes."""
        spec = self.hosts[name] or {}
        names = set()
        for host in scenario_mod.counted_names(name, spec.get('count')):
            names.add(host)
            if host in self.scenario.hosts:
                names.update(self.scenario.hosts[host].providers())
        return names


# Halved down to these, and no further (a disk of 0 GB is not a smaller
# disk to Nova: it means the image's size).
_LEAST = (('vcpus', 1), ('ram', 64), ('disk', 1))


def _halved(spec):
    """``spec`` with vCPUs, RAM and disk halved; None if none can be."""
    smaller = dict(spec)
    for key, least in _LEAST:
        value = spec.get(key)
        if isinstance(value, int) and value // 2 >= least:
            smaller[key] = value // 2
    return smaller if smaller != spec else None


def _expects_numbers(steps):
    """Whether a step expects an amount written as a number."""
    def numbers(value):
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            return True
        if isinstance(value, dict):
            return any(numbers(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(numbers(v) for v in value)
        return False
    return any(numbers(step.get('expect')) for step in steps)


def _strings(value):
    """Every string in ``value``, keys of mappings too."""
    found = set()
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            found |= _strings(key) | _strings(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            found |= _strings(inner)
    return found


def _rest(document):
    return json.dumps({k: v for k, v in document.items() if k != 'steps'},
                      sort_keys=True, default=repr)


def _key(document):
    return json.dumps(document, sort_keys=True, default=repr)
