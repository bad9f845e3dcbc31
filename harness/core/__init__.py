"""The Nova-free core: scenarios, snapshots, expectations, invariants.

Nothing under ``harness.core`` imports Nova or eventlet
(``tests/unit/test_layers.py`` proves it): the loader, the checks and
the unit tests run without standing anything up.
"""
