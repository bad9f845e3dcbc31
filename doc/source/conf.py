"""Sphinx configuration of nova-harness's documentation (tox -e docs)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The local extension that generates the reference from the registries.
sys.path.insert(0, os.path.join(HERE, '_exts'))

project = 'nova-harness'
copyright = '2026, the nova-harness developers'
author = 'the nova-harness developers'

extensions = ['harness_reference']

# Read from the installed harness: the version it carries.
try:
    import harness
    release = version = harness.__version__
except ImportError:  # pragma: no cover - the docs env installs it
    release = version = 'unknown'

master_doc = 'index'
exclude_patterns = []
pygments_style = 'sphinx'
# Alabaster is Sphinx's default theme: no network and no git at build time.
html_theme = 'alabaster'
html_theme_options = {
    'description': "Real Nova and Placement in one process, checked per "
                   "step.",
    'fixed_sidebar': True,
    'page_width': '1200px',
}
html_static_path = []
html_last_updated_fmt = None
nitpicky = False
# Options such as --merge stay two hyphens, not an en dash.
smartquotes = False
