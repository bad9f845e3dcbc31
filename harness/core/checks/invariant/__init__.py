"""Invariants: one module each, exporting its unit as ``CHECK``.

See ``harness.core.checks.base`` for what a unit declares.
"""
