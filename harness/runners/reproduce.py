"""``harness reproduce BUG``: the bug's scenarios on Nova as installed and
with the bug put back, the two allocation timelines side by side.

Both sides run as the gate runs the bug's regression test: with the
invariants on (less the bug's ``invariants_off``), honouring each
scenario's ``expected_breaks``. The verdict reads the problem records,
not their words: a scenario reproduces the bug when installed Nova has
no problem (and every expected break shows) and the bug put back has
wrong accounting (``Problem.accounting``). The scenarios come from the
package (``harness/bugs/lp<ID>.yaml``), so this runs from a wheel too.

Exit 0 when every scenario reproduces the bug, 1 otherwise. With
``report_dir``, an HTML report per scenario shows the two runs side by
side (``harness.report``).

On a Nova that predates the bug's fix (the bug's ``fixed_in``), the bug
is there as released: a scenario then shows the bug when installed Nova
has wrong accounting; the reintroduced side is run all the same, for
the comparison. ``on_release`` runs all this on another Nova of the
release matrix, in the Python of its tox env.
"""

import os
import subprocess

from harness.core import errors

# Where tox keeps the matrix's envs: this checkout's .tox, or $TOX_WORK_DIR.
HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def release_python(release, environ=None):
    """The Python of the matrix's tox env for Nova ``release``."""
    environ = os.environ if environ is None else environ
    name = 'functional-nova%d' % release
    places = [environ.get('TOX_WORK_DIR'), os.path.join(os.getcwd(), '.tox'),
              os.path.join(HARNESS_ROOT, '.tox')]
    for place in places:
        if place:
            python = os.path.join(place, name, 'bin', 'python')
            if os.path.isfile(python):
                return python
    raise errors.SetupError(
        'no tox env %s for Nova %d (looked in %s); make it with '
        '`tox -e %s --notest` in the harness checkout' % (
            name, release, ', '.join(p for p in places if p), name))


def on_release(release, argv, out):
    """``harness ARGV`` run by Nova ``release``'s Python; its exit code.

    This harness (the package this module is in) comes first on that
    Python's path, so the code under test is the same on every release.
    """
    python = release_python(release)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [HARNESS_ROOT] + [p for p in [os.environ.get('PYTHONPATH')] if p]))
    out.flush()
    result = subprocess.run(
        [python, '-m', 'harness.runners.cli'] + list(argv), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out.write(result.stdout)
    return result.returncode


def main(bug_id, out, report_dir=None):
    from harness import bugs
    bug = bugs.get(bug_id)
    if not bug.reintroducible:
        bug.reintroduce()       # one clear error, before any service starts
    scenarios = list(bug.scenarios)
    from harness.cloud import install
    from harness.cloud import reuse
    from harness.core import invariants
    from harness.core import timeline as timeline_mod
    from harness.runners import runner
    version = install.nova_version()
    release = '.'.join(map(str, version))
    fixed = bug.fixed_on(version)
    print('LP#%s: %s\n%s\nfixed by %s\n%s\n'
          % (bug.id, bug.title, bug.link, bug.fix, bug.story), file=out)
    print('Nova %s %s the fix (fixed in %s)\n' % (
        release, 'has' if fixed else 'PREDATES',
        bug.fixed_in_text or 'a release not recorded'), file=out)

    recorders = {}

    def run(scenario, pool, fixtures=()):
        checker = invariants.Checker(enabled=bug.invariants)
        observers = []
        if report_dir:
            from harness import report
            observers.append(report.Recorder())
            recorders[id(scenario), bool(fixtures)] = observers[0]
        timeline = runner.run(scenario, keep_going=True, checks=[checker],
                              fixtures=list(fixtures), pool=pool,
                              observers=observers)
        return timeline, checker.missing_breaks(scenario)

    # All installed runs first, then all with the bug put back: runs of
    # one shape share the pool's cloud (the bug put back is part of it).
    with reuse.CloudPool() as pool:
        installed = [run(scenario, pool) for scenario in scenarios]
        reintroduced = [run(scenario, pool, [bug.reintroduce()])
                        for scenario in scenarios]
    shows = True
    for scenario, (before, held), (after, _) in zip(scenarios, installed,
                                                    reintroduced):
        print('scenario: %s' % scenario.name, file=out)
        text, _ = timeline_mod.side_by_side(
            before, after, 'installed', 'reintroduced')
        print(text, file=out)
        for name, timeline in (('installed Nova', before),
                               ('with the bug reintroduced', after)):
            failed = timeline.failed
            if not failed:
                print('%s: every expectation held' % name, file=out)
            for entry in failed:
                print('%s: step %d (%s):\n    %s' % (
                    name, entry.index, entry.label,
                    '\n    '.join(str(p) for p in entry.problems)),
                    file=out)
        if held:
            print('installed Nova: expected to break, but held: %s'
                  % ', '.join(held), file=out)
        if fixed:
            here = (not before.failed and not held
                    and any(p.accounting for entry in after
                            for p in entry.problems))
            said = ('the bug shows when reintroduced and not on installed '
                    'Nova' if here else 'the bug does NOT show as it should')
        else:
            here = any(p.accounting for entry in before
                       for p in entry.problems)
            said = ('the bug shows on Nova %s as released' % release
                    if here else 'the bug does NOT show on Nova %s, which '
                    'predates its fix' % release)
        shows = shows and here
        print('-> %s\n' % said, file=out)
        if report_dir:
            from harness import report
            path = report.write_reproduce(
                report_dir, scenario, before, after,
                intro='%s (%s), fixed by %s. %s' % (
                    bug.title, bug.link, bug.fix, bug.story),
                recorders=(recorders.get((id(scenario), False)),
                           recorders.get((id(scenario), True))),
                bug_id=bug.id)
            print('report: %s\n' % path, file=out)
    print('verdict: %s' % (('reproduced' if fixed else
                            'present in Nova %s' % release) if shows
                           else 'not reproduced'), file=out)
    return 0 if shows else 1
