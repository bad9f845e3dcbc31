"""Scenarios exported as tests in Nova's own style (``harness export``).

``nova_test.export`` writes a scenario file's scenarios as one Python
module that runs in Nova's tree with Nova's runner and imports nothing of
the harness: the steps through ``integrated_helpers``' helpers, the
expectations as Nova's assertions. Each step kind and expectation key
that has a faithful translation has a unit (``steps``, ``expect``),
registered by name as the checks are; the rest are refused by name
(``Refused``), never translated into a weaker test.
"""
