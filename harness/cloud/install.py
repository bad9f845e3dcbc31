"""Where the Nova under test keeps the files its test config needs.

Nova is installed one of two ways:

- from its wheel (a release): ``api-paste.ini`` is wheel data, installed
  under ``<prefix>/etc/nova/``; the distribution's file list says where.
- as a source tree (a developer's checkout, ``pip install -e ~/src/nova``,
  or an unpacked sdist): the file lies in the tree, ``<tree>/etc/nova/``,
  next to the ``nova`` package, where Nova's own tests look for it.

The tree is asked first, found from where ``nova`` is imported (without
importing it), so an editable install wins over whatever the distribution
metadata lists.
"""

from importlib import metadata
import importlib.util
import os

from harness.core import errors
from harness.core import versions

nova_version = versions.nova_version
parse_version = versions.parse_version

PASTE = os.path.join('etc', 'nova', 'api-paste.ini')


def nova_package_dir():
    """The directory of the ``nova`` package imported here, or None."""
    try:
        spec = importlib.util.find_spec('nova')
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def source_tree(package_dir=None):
    """The Nova source tree ``nova`` is imported from, or None.

    A tree (a git checkout, an unpacked sdist) has its ``setup.cfg`` and
    ``etc/nova/api-paste.ini`` next to its ``nova`` package; a wheel's
    site-packages has no ``setup.cfg`` (even where something linked an
    ``etc/nova`` into it, as Nova's own functional tests want).
    """
    package_dir = package_dir or nova_package_dir()
    if package_dir is None:
        return None
    tree = os.path.dirname(package_dir)
    if all(os.path.isfile(os.path.join(tree, name))
           for name in (PASTE, 'setup.cfg')):
        return tree
    return None


def nova_api_paste_ini():
    """Return the absolute path of the Nova under test's api-paste.ini."""
    tree = source_tree()
    if tree is not None:
        return os.path.join(tree, PASTE)
    try:
        dist = metadata.distribution('nova')
    except metadata.PackageNotFoundError:
        raise errors.SetupError(
            'Nova is not installed in this environment; install it with '
            '`pip install -c upper-constraints.txt -r requirements.txt`, '
            'or a source checkout with `pip install -e <nova tree>`.')
    for entry in dist.files or ():
        if entry.name == 'api-paste.ini' and entry.parent.name == 'nova':
            path = os.path.abspath(str(entry.locate()))
            if os.path.exists(path):
                return path
    raise errors.SetupError(
        'The installed Nova %s lists no etc/nova/api-paste.ini among its '
        'files (or the file is gone), and %s is not a source tree with '
        'etc/nova/api-paste.ini; the API cannot be loaded. Reinstall Nova '
        'from its wheel, or install your checkout with '
        '`pip install -e <nova tree>`.'
        % (dist.version, nova_package_dir() or 'no nova package'))


def nova_spawn_module():
    """The Nova module whose ``spawn`` and ``spawn_on`` start Nova's tasks.

    ``nova.thread_pool_factory`` from Nova 34 on, ``nova.utils`` before
    (Nova 32 and 33: the same functions, the executors in its globals).
    """
    import importlib
    try:
        return importlib.import_module('nova.thread_pool_factory')
    except ImportError:
        return importlib.import_module('nova.utils')
