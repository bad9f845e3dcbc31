"""Proof that each regression test bites, run as the gate runs it.

For every bug file (``harness/bugs/lp<ID>.yaml``): its scenarios pass on
Nova as installed and fail with the bug's reintroduction fixture in
place. Both runs have the invariants on, as the generated regression
tests (``test_regressions.py``) run them: ``invariants.Checker`` with the
invariants the bug keeps on (all but its ``invariants_off``), honouring
each scenario's ``expected_breaks``. The failure must be wrong accounting
(Placement's or a tracker's), read from the problem records
(``Problem.accounting``), not from the words of their messages: a step
that merely errors out proves nothing about the accounting it guards.

Each bug's scenarios run twice, once per side, all installed runs first:
runs of one shape share a kept cloud (``reuse.CloudPool``; the bug put
back is part of the shape, so each side keeps its own).

On a Nova that predates the bug's fix (``Bug.fixed_on``) there is nothing
to put back: the proof is that the bug shows as released, with wrong
accounting on the installed side.
"""

import os

from harness import bugs
from harness.cloud import install
from harness.cloud import reuse
from harness.core import errors
from harness.core import invariants
from harness.runners import runner
from harness import testing
from tests.regressions import test_regressions


class _Registered(object):
    """One bug file (``path``) is registered whole."""

    path = None

    def test_registered_with_story_fix_and_test(self):
        bug = bugs.load(self.path)
        self.assertEqual(bug, bugs.get(bug.id))
        self.assertTrue(os.path.isfile(bug.scenario_path), bug.scenario_path)
        self.assertNotEqual([], list(bug.scenarios))
        self.assertTrue(bug.story.strip())
        if bug.reintroducible:
            fixture = bug.reintroduce()
            self.assertTrue(getattr(fixture, 'stateless', False))
            self.assertIn(bug.fix.split()[0], type(fixture).__doc__,
                          'the reintroduction must name the fixing commit')
        else:
            self.assertRaises(errors.UnknownName, bug.reintroduce)
        # Its test class is generated from the file.
        cls = getattr(test_regressions, 'TestBug%s' % bug.id)
        self.assertEqual(
            len(bug.scenarios),
            len([name for name in dir(cls)
                 if name.startswith('test_bug_%s_' % bug.id)]))


class _Bites(_Registered):
    """The two proofs of one bug file (``path``).

    One generated class per bug (``TestBug<ID>Bites``), so stestr spreads
    the bugs over its workers (``group_regex`` keeps a class together);
    the file is read in the test, so a malformed one fails its own tests.
    """

    def _run(self, bug, scenario, pool, side, fixtures=()):
        checker = invariants.Checker(enabled=bug.invariants)
        timeline = runner.run(
            scenario, keep_going=True, checks=[checker], pool=pool,
            fixtures=list(fixtures),
            test_id='%s.%s' % (self.id(), side))
        return timeline, checker

    def test_passes_installed_fails_reintroduced(self):
        bug = bugs.load(self.path)
        pool = self.useFixture(reuse.CloudPool())
        version = install.nova_version()
        if not bug.fixed_on(version):
            for scenario in bug.scenarios:
                installed, _ = self._run(bug, scenario, pool, 'installed')
                self.assertTrue(
                    any(p.accounting for e in installed for p in e.problems),
                    'LP#%s: %s: Nova %s predates the fix (%s) but shows no '
                    'accounting problem' % (
                        bug.id, scenario.name, '.'.join(map(str, version)),
                        bug.fixed_in_text))
            return
        for scenario in bug.scenarios:
            installed, checker = self._run(bug, scenario, pool, 'installed')
            self.assertEqual(
                [], ['step %d (%s): %s' % (e.index, e.label, p)
                     for e in installed.failed for p in e.problems],
                'LP#%s: %s fails on installed Nova' % (bug.id,
                                                       scenario.name))
            self.assertEqual(
                [], checker.missing_breaks(scenario),
                'LP#%s: %s: expected to break on installed Nova, but held'
                % (bug.id, scenario.name))
        for scenario in bug.scenarios:
            reintroduced, _ = self._run(bug, scenario, pool, 'reintroduced',
                                        fixtures=[bug.reintroduce()])
            problems = [p for e in reintroduced for p in e.problems]
            self.assertTrue(
                any(p.accounting for p in problems),
                'LP#%s: %s: with the bug reintroduced, no accounting '
                'problem (checks that failed: %s)' % (
                    bug.id, scenario.name,
                    sorted({p.check for p in problems}) or 'none'))


def _load_all():
    for path in bugs.paths():
        bug_id = os.path.basename(path)[len('lp'):-len('.yaml')]
        # A bug without a reintroduction module (its file says why, in
        # no_reintroduction) has nothing to bite with: only its
        # registration is proven here; its scenarios run in
        # test_regressions.
        if os.path.isfile(path[:-len('.yaml')] + '.py'):
            name, base = 'TestBug%sBites' % bug_id, _Bites
            doc = 'LP#%s: the regression bites.' % bug_id
        else:
            name, base = 'TestBug%sRegistered' % bug_id, _Registered
            doc = 'LP#%s: registered (no reintroduction).' % bug_id
        globals()[name] = type(name, (base, testing.TestCase), {
            'path': path, '__module__': __name__, '__doc__': doc})


_load_all()
