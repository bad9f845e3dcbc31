"""Determinism: every scenario and regression test, run N times, compared.

    harness determinism [--runs 50] [--busy K] [--workers 2]
                        [--select REGEX] [--json OUT] [--dump DIR]
                        [--resume REPORT] [--timeout S]
                        [--hash-seeds S1,S2,...]
                        [--scenarios DIR]... [--no-bugs] [--tests NAME]...

What it runs are the tests ``harness.testing.build_tests`` builds from
scenario files, as a ``load_tests`` hook does (one test per scenario):
those of each ``--scenarios`` folder (or file), by default the
checkout's ``tests/functional/scenarios`` when the harness runs from a
checkout; and the regression tests ``build_bug_tests`` builds from the
bug registry (``harness/bugs``), unless ``--no-bugs``. ``--tests NAME``
adds the tests of a module, or of every ``test*.py`` of a package, that
unittest loads by that name (``tox -e determinism`` adds the checkout's
``tests.regressions``: the bite proofs and race-point tests). Each is
listed by its test ID, named as the checkout's own test modules name
them (``tests.functional.test_scenarios.Boot.test_1_...``, so ``stestr
run`` takes the ID too); a folder elsewhere names its tests
``test_<folder>.<Class>.<test>``. Each run is the test itself, so a
scenario runs with its test class's settings (``periodic_idempotence``,
``invariants``, expected breaks, a bug put back, any set-up the class
adds) without this tool repeating them.

It watches a run through the harness's observer hooks
(``harness.core.hooks.observing``): the clouds it stands up, the scenarios
it runs, every step's timeline entry (snapshot and problems) and every
race point passed. Nothing of the harness is patched, and no test source
is read: what a test runs is what the hooks say it ran.

Per run it records (``records``):

- the verdict: ``pass``, ``skip: REASON`` or ``fail``/``error`` with the
  exception's message, its volatile parts (UUIDs, addresses, temporary
  paths, wall-clock times) normalised;
- a digest of its timelines, as data (``timeline_record``): per scenario
  run, per step, the whole snapshot (providers with inventories, usages and
  generations; allocations; trackers with their NUMA cells; servers;
  migrations) and the problem records, every field but the UUIDs;
- a digest of its race points (``points_record``): the passages each step
  recorded and the passages of every cloud the test stood up (a test that
  drives a cloud without the runner has only these), each with all its
  fields (point, when, host, server, Nova's write count, deferral, roles);
- the scenarios it ran (to name scenario files no test ran);
- the hash seed its process had (``PYTHONHASHSEED``, see below).

Runs go round-robin (first run of every test, then the second...) to
``--workers`` spawned processes, each of which runs many (``pool``).
``--busy K`` keeps K more processes burning CPU while it runs. A test is
flaky when its runs give more than one verdict, timeline or race-point
digest; for each, the first lines where two runs differ are printed
(``compare``; ``--dump DIR`` writes every distinct record of a flaky test
in full, one line a field).

A run in a worker with no result after ``--timeout`` seconds is recorded
as hung (verdict ``hang``; every greenthread's stack written to a file
named in the output) and the remaining runs go on in fresh workers.

A long check can be done in parts (``report``). SIGINT or SIGTERM stops
it and still reports (and writes ``--json``) the runs done so far;
``--resume REPORT`` then takes that report's runs as done and runs only
the rest, and its report covers them all. The report records the code it
ran (a digest of ``harness/`` and ``tests/`` and of any scenario folder
outside them, the record format compared, and Python's, Nova's and
Placement's versions); a report of other code, or made with another
``--busy``, ``--select``, ``--hash-seeds`` or choice of tests, is
refused: runs of different code or under different load do not add up to
one check.

Python's hash seed is pinned for every run (``harness.runners.cli``'s
``pin_hash_seed``; tox sets ``PYTHONHASHSEED=0``): Nova and Placement
choose between equals by set order, and that order follows the seed
(Placement's ``_merge_candidates`` returns ``list()`` of a set of
allocation requests and Nova claims a host's first candidate, so which
of two equal NVMe devices a guest gets is the seed's choice). A test's
timeline may so differ between seeds; its verdict must not, or it passes
only under the pinned seed and fails for whoever runs it unpinned.
``--hash-seeds S1,S2,...`` (integers 0 to 4294967295, no repeats) runs
run number N (1-based, as the round-robin numbers them) under seed
``S[(N-1) % len(S)]``: one seed's runs after the other, each seed's in a
pool of ``--workers`` processes spawned with ``PYTHONHASHSEED`` set to it
(a hung run's fresh workers too), and each run records the seed its
worker had. A test is then flaky when its runs give more than one
verdict (under any seeds), or more than one timeline or race-point
digest under one seed; timelines or race points that differ only
between seeds are listed apart, as seed-dependent, with the seeds of
each digest and where two seeds' first differ, and do not fail the
check. ``--workers 0`` cannot run under another seed (a process's seed
is fixed when it starts), so ``--hash-seeds`` needs workers, even for a
seed this process has. Without the option the workers keep this
process's (pinned) seed, as before; a run's seed is recorded all the
same. ``--resume`` refuses a report made with other ``--hash-seeds``.

Exit status: 0 every test gave one verdict and, per hash seed, one
timeline and one race-point record; 1 a flake, a hang, a worker process
that died or ran under another seed than asked; 2 bad arguments; 130
interrupted.

The rooms, one job each: ``records`` (a run as data, digests, texts and
where two differ), ``compare`` (per test: flaky or steady, the table),
``suite`` (which tests, and running one, watched), ``pool`` (worker
processes, the watchdog, busy processes, hash seeds), ``report`` (the
JSON report and its resumption, the code identity), ``check`` (the runs,
round-robin, pool by pool) and ``cli`` (the command).
"""

import os

#: The checkout the harness runs from (when it runs from one): where its
#: scenario folder is found and what a report's code identity digests.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PROG = 'harness determinism'
