"""``harness reproduce BUG``: the bug's scenario on Nova as installed and
with the bug put back, the two allocation timelines side by side.

Exit 0 when the bug shows only when put back, 1 otherwise.
"""


def main(bug_id, out):
    from harness import bugs
    from harness.core import scenario as scenario_mod
    bug = bugs.get(bug_id)
    scenarios = scenario_mod.load(bug.scenario_path)
    from harness.runners import runner
    from harness.core import timeline as timeline_mod
    print('LP#%s: %s\n%s\nfixed by %s\n%s\n'
          % (bug.id, bug.title, bug.link, bug.fix, bug.story), file=out)
    shows = True
    for scenario in scenarios:
        print('scenario: %s' % scenario.name, file=out)
        installed = runner.run(scenario, keep_going=True)
        reintroduced = runner.run(scenario, keep_going=True,
                                  fixtures=[bug.reintroduce()])
        text, _ = timeline_mod.side_by_side(
            installed, reintroduced, 'installed', 'reintroduced')
        print(text, file=out)
        for name, timeline in (('installed Nova', installed),
                               ('with the bug reintroduced', reintroduced)):
            failed = timeline.failed
            if not failed:
                print('%s: every expectation held' % name, file=out)
            for entry in failed:
                print('%s: step %d (%s):\n    %s' % (
                    name, entry.index, entry.label,
                    '\n    '.join(entry.problems)), file=out)
        here = bool(reintroduced.failed) and not installed.failed
        shows = shows and here
        print('-> %s\n' % (
            'the bug shows when reintroduced and not on installed Nova'
            if here else 'the bug does NOT show as it should'), file=out)
    print('verdict: %s' % ('reproduced' if shows else 'not reproduced'),
          file=out)
    return 0 if shows else 1
