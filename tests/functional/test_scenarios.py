"""Every scenario file in tests/functional/scenarios, as test methods.

Built by ``harness.testing.build_tests``, as a user's ``load_tests``
builds theirs: one test class per file (so stestr's group_regex keeps a
file in one worker) and one test method per scenario in it, its ID
carrying the file name, the scenario name and its bug IDs, so ``stestr
run resize_confirm`` or ``stestr run 1944759`` selects them.

A file's scenarios are numbered with those of one cloud shape together
(the number in a test's name is its place in that order). The first one
stands for its file when the gate compares runs with and without checks
for one scenario per file (``cases.COMPARE_ENV``). And they run in shape
order across files: consecutive scenarios of a shape share the worker's
kept cloud, so each shape's cloud stands up about once per worker, not
once per file (files share shapes: two fake hosts, two developer hosts).
"""

import os

from harness import testing

SCENARIO_DIR = os.path.join(os.path.dirname(__file__), 'scenarios')


def load_tests(loader, standard_tests, pattern):
    return testing.build_tests(SCENARIO_DIR, loader)


# The classes are this module's too, for runners that look a test up by
# its name (``python -m testtools.run ID``) or never call load_tests
# (pytest); load_tests gives the same classes.
globals().update(testing.build_tests(SCENARIO_DIR).classes)
