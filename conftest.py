# Plain pytest runs the suite too; the plugin lets pytest 9 run testtools
# cases whose clean-up deletes instance attributes (Nova's TestCase does).
pytest_plugins = ['harness.testing.pytest_plugin']
