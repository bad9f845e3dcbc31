"""The Nova release installed, read from its distribution metadata.

Nova-free: the metadata is read without importing ``nova``.
"""

from importlib import metadata

from harness.core import errors


def nova_version():
    """The Nova version under test, as (major, minor, patch) integers.

    From the distribution metadata (pbr writes it for an editable install
    too; set ``PBR_VERSION`` when installing a tree without git history).
    """
    try:
        return parse_version(metadata.version('nova'))
    except metadata.PackageNotFoundError:
        raise errors.SetupError(
            'Nova is not installed in this environment; install it with '
            '`pip install -c upper-constraints.txt -r requirements.txt`, '
            'or a source checkout with `pip install -e <nova tree>`.')


def parse_version(text):
    """``'33.0.2'`` -> ``(33, 0, 2)``; dev suffixes are dropped."""
    parts = []
    for part in str(text).split('.')[:3]:
        digits = ''
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
    if not parts:
        raise errors.SetupError('not a Nova version: %r' % (text,))
    return tuple(parts + [0] * (3 - len(parts)))
