"""Where an installed Nova keeps the files its test config needs.

Nova's test config looks for ``api-paste.ini`` under its source tree
(``<site-packages>/etc/nova``), but the wheel installs it as data under
``<prefix>/etc/nova/``. Ask the installed distribution where it put it.
"""

from importlib import metadata
import os

from harness.core import errors


def nova_api_paste_ini():
    """Return the absolute path of the installed Nova's api-paste.ini."""
    try:
        dist = metadata.distribution('nova')
    except metadata.PackageNotFoundError:
        raise errors.SetupError(
            'Nova is not installed in this environment; install it with '
            '`pip install -c upper-constraints.txt -r requirements.txt`.')
    for entry in dist.files or ():
        if entry.name == 'api-paste.ini' and entry.parent.name == 'nova':
            path = os.path.abspath(str(entry.locate()))
            if os.path.exists(path):
                return path
    raise errors.SetupError(
        'The installed Nova %s lists no etc/nova/api-paste.ini among its '
        'files (or the file is gone); the API cannot be loaded. Reinstall '
        'Nova from its wheel.' % dist.version)
