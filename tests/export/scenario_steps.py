"""Where each scenario of a file fails on the installed Nova.

``python -m tests.export.scenario_steps FILE`` runs each scenario of
``FILE`` as the finding proofs do (``runner.run``: the scenario's own
expectations, which are what its exported Nova test translates) and
prints one line, ``MARK`` then JSON: the installed Nova's version and,
by scenario name, the index of the step that failed (``null``: the
scenario passed). The older-release proofs (``test_older_releases``) run
it with an older Nova's Python, so the harness's verdict on that release
comes from that release's code.
"""

import json
import sys

from harness.cloud import install
from harness.core import errors
from harness.core import scenario as scenario_mod
from harness.runners import runner

MARK = 'scenario-steps: '


def failing_steps(path):
    """Scenario name -> the index of its failing step (None: it passed)."""
    steps = {}
    for scenario in scenario_mod.load(path):
        try:
            runner.run(scenario)
        except errors.ScenarioFailed as exc:
            if exc.step is None:
                raise
            steps[scenario.name] = exc.step.index
        else:
            steps[scenario.name] = None
    return steps


def main(argv=None):
    path, = sys.argv[1:] if argv is None else argv
    print(MARK + json.dumps({
        'nova': '.'.join(map(str, install.nova_version())),
        'steps': failing_steps(path)}))


if __name__ == '__main__':
    main()
