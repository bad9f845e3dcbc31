"""Each compute of a test in Nova's tree its own host-local options.

Nova's test config is one per process, so two computes of one test read
the same ``cpu_dedicated_set``, reserved memory or ``[pci]
device_spec``, where in a deployment each compute has its own
``nova.conf``. ``PerHostConfig`` gives a host its own values of those
options (``harness.cloud.perhost``: the modules that read them on a
compute's behalf see a proxy that answers with the value of the compute
whose code runs); every other read, and a host with no value of its own,
sees Nova's config as ``test.flags`` sets it.
"""

import fixtures

# First: it runs the harness's Nova parts in the concurrency mode Nova's
# test package chose, before harness.cloud would choose its own.
from harness.testing import in_nova  # noqa: F401,I100

from harness.cloud import perhost  # noqa: E402
from harness.core import errors  # noqa: E402

#: group (``None`` for ``[DEFAULT]``) -> the options a host may set.
OPTIONS = perhost.OPTIONS
#: The Nova modules whose reads of those options go by host.
MODULES = perhost.MODULES


class PerHostConfig(fixtures.Fixture):
    """Host-local options by compute host, for a test in Nova's tree.

    ``set_host(host, {group: {option: value}})`` gives ``host`` its own
    values (``'DEFAULT'`` or ``None`` for ``[DEFAULT]``), replacing what
    it had; values as Nova's config gives them (``cpu_dedicated_set``
    the string ``'2-7,10-15'``, ``[pci] device_spec`` a list of JSON
    strings). It applies to the compute's reads from then on: set a
    host's values before its compute (re)starts, as its ``nova.conf``
    would be edited. ``get(host, option, group)`` is the value the
    host's compute reads.
    """

    def _setUp(self):
        # One per process: the harness's clouds, and a second fixture of
        # one test, share the one in place.
        self._conf = (perhost.installed()
                      or self.useFixture(perhost.PerHostConf()))

    def set_host(self, host, options):
        values = {}
        for group, group_options in options.items():
            group = None if group in (None, 'DEFAULT') else group
            for name, value in group_options.items():
                if name not in OPTIONS.get(group, ()):
                    raise errors.HarnessError(
                        'PerHostConfig: [%s] %s is not an option a host '
                        'sets for itself (those are: %s)' % (
                            group or 'DEFAULT', name, ', '.join(
                                '[%s] %s' % (known or 'DEFAULT', option)
                                for known, names in sorted(
                                    OPTIONS.items(), key=str)
                                for option in sorted(names))))
                values[(group, name)] = value
        self._conf.set_host(host, values)

    def get(self, host, option, group='DEFAULT'):
        """The value of ``option`` that ``host``'s compute reads.

        Its own, else Nova's config's (as ``test.flags`` set it).
        """
        key = (None if group in (None, 'DEFAULT') else group, option)
        own = self._conf.overrides.get(host, {})
        if key in own:
            return own[key]
        conf = perhost.CONF
        return getattr(conf if key[0] is None else getattr(conf, group),
                       option)
