"""``python -m harness.runners.determinism``: as ``harness determinism``."""

import sys

from harness.runners.determinism import cli

sys.exit(cli.main())
