"""Every registered bug's scenarios, as one test class per bug.

Built by ``harness.testing.build_bug_tests`` from the bug files
(``harness/bugs/lp<ID>.yaml``): adding a bug adds its class. One class
per file keeps a bug's scenarios in one stestr worker (``group_regex``);
one test method per scenario, named ``test_bug_<ID>_<n>_<scenario>`` and
tied to the bug with ``related_bug``, so ``stestr run 1944759`` selects
it and a failure links the bug. Each runs with the invariants on, as
``ScenarioTestCase`` runs them, less those the bug's ``invariants_off``
names (with its reason there), honouring the scenario's
``expected_breaks``. They run in shape order across bugs, as the
scenario tests do, so a worker's kept cloud serves a shape's tests in a
row.

Which outcome a test expects depends on the Nova installed: on a release
with the bug's fix (``fixed_in``, ``Bug.fixed_on``) the scenario passes;
on one that predates it, the scenario must show the bug itself, wrong
accounting as the bug put back shows it (``Problem.accounting``), with
no reintroduction: the release matrix (``tox -e functional-nova33``)
proves each fix on real code, before and after.
"""

from harness import testing


def load_tests(loader, standard_tests, pattern):
    return testing.build_bug_tests(loader)


# The classes are this module's too, for runners that look a test up by
# its name or never call load_tests (pytest), and for the bite proofs
# (test_bites.py); load_tests gives the same classes.
globals().update(testing.build_bug_tests().classes)
