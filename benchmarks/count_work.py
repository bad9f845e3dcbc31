"""Is it the same work? Nova's, counted in Nova's tests and the harness's.

For each pair that ``compare_nova.py`` times, runs Nova's own test and the
harness's scenario, on a cloud of its own and on a kept cloud (each once
to warm up, then once counted), and prints side by side what Nova and
Placement were asked to do: SQL statements by verb (every engine of the
process), Placement requests and Nova API requests by method and path.
Counts, not times: they do not depend on the machine's load, and they
show whether the harness's runs are the work of Nova's tests, no more, no
less (a test that polls makes more GETs).

Four columns: Nova's whole test; its steps alone (the test method, less
the services it starts, which is what a run on a kept cloud is left to
do); the scenario on a cloud of its own (standing it up included); and on
a kept cloud (``reuse.CloudPool``: put back and settled, as
``compare_nova.py`` times it).

    python benchmarks/count_work.py [--link-api-paste] [--top 12]
"""

import argparse
import collections
import functools
import importlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import compare_nova  # noqa: E402

UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
# Nova's tests name flavors by id, the harness's by name: both are "X".
FLAVOR = re.compile(r'^/flavors/[^/]+')


def _kind(key):
    return key.split(' ', 1)[0]


class Counting(object):
    """Counts SQL statements and API requests while ``on`` is set.

    While a Nova test's method runs, outside the services it starts,
    ``steps`` counts the same things apart.
    """

    def __init__(self):
        self.counts = collections.Counter()
        self.steps = collections.Counter()
        self.on = False
        self.stepping = False

    def _add(self, key):
        if self.on:
            self.counts[key] += 1
            if self.stepping:
                self.steps[key] += 1

    def install(self):
        import sqlalchemy
        from sqlalchemy import event

        from nova import test
        from nova.tests.functional.api import client
        from nova.tests.functional import fixtures as func_fixtures

        event.listen(sqlalchemy.engine.Engine, 'before_cursor_execute',
                     self._statement)
        for name in ('_fake_get', '_fake_put', '_fake_post',
                     '_fake_delete'):
            self._wrap(func_fixtures.PlacementFixture, name,
                       'placement %s' % name[len('_fake_'):].upper())
        self._wrap(client.TestOpenStackClient, 'api_request', 'nova-api')
        # Services a test's method starts are its set-up, not its steps.
        self._stepping_within(test.TestCase, 'start_service', False)

    def _statement(self, conn, cursor, statement, *args):
        self._add('sql %s' % statement.split(None, 1)[0].upper())

    def install_steps(self, nova_test):
        """Count ``nova_test``'s method apart (less starting services)."""
        module, cls_name, method = nova_test.rsplit('.', 2)
        owner = getattr(importlib.import_module(module), cls_name)
        self._stepping_within(owner, method, True)

    def _stepping_within(self, owner, name, stepping):
        real = getattr(owner, name)
        counting = self

        @functools.wraps(real)
        def within(this, *args, **kwargs):
            before, counting.stepping = counting.stepping, stepping
            try:
                return real(this, *args, **kwargs)
            finally:
                counting.stepping = before
        setattr(owner, name, within)

    def _wrap(self, owner, name, label):
        real = getattr(owner, name)
        counting = self

        # PlacementFixture's fakes take (client, url), the API client's
        # api_request (url).
        at = 1 if label.startswith('placement') else 0

        def counted(this, *args, **kwargs):
            if counting.on:
                method = (kwargs.get('method', 'GET')
                          if label == 'nova-api' else '')
                path = FLAVOR.sub('/flavors/X',
                                  UUID.sub('X', args[at].split('?')[0]))
                counting._add(' '.join(
                    part for part in (label, method, path) if part))
            return real(this, *args, **kwargs)
        setattr(owner, name, counted)

    def count(self, func, *args):
        self.counts = collections.Counter()
        self.steps = collections.Counter()
        self.on = True
        try:
            func(*args)
        finally:
            self.on = False
        return self.counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--link-api-paste', action='store_true')
    parser.add_argument('--top', type=int, default=12,
                        help='request rows per pair, most made '
                             'first (default 12)')
    args = parser.parse_args(argv)
    # Patches eventlet first.
    from harness.cloud import fixture as cloud  # noqa: F401
    from harness.cloud import reuse
    import nova.tests.functional  # noqa: F401
    if args.link_api_paste:
        compare_nova.link_api_paste()
    counting = Counting()
    counting.install()
    columns = ('nova', 'steps', 'harness', 'kept')
    for name, nova_test, scenario_path in compare_nova.PAIRS:
        counting.install_steps(nova_test)
        # Each side once to warm up: first-use costs belong to neither.
        compare_nova.run_nova(nova_test)
        whole_test = counting.count(compare_nova.run_nova, nova_test)
        sides = [whole_test, counting.steps]
        compare_nova.run_harness(scenario_path)
        sides.append(counting.count(compare_nova.run_harness, scenario_path))
        # A kept cloud lives only while no Nova test runs in this process.
        with reuse.CloudPool() as pool:
            compare_nova.run_harness(scenario_path, pool)  # stands it up
            compare_nova.run_harness(scenario_path, pool)
            sides.append(counting.count(compare_nova.run_harness,
                                        scenario_path, pool))
        print()
        print(name)
        print('  %-44s' % '' + ''.join(' %8s' % c for c in columns))
        kinds = collections.OrderedDict()
        for counts in sides:
            for key in counts:
                kinds.setdefault(_kind(key), None)
        row = '  %-44s' + ' %8d' * len(sides)
        for kind in kinds:
            print(row % (kind + ' (all)', *[
                sum(v for k, v in counts.items() if _kind(k) == kind)
                for counts in sides]))
        keys = sorted(set().union(*sides), key=lambda k: (
            -max(counts[k] for counts in sides), k))
        statements = [k for k in keys if _kind(k) == 'sql']
        requests = [k for k in keys if _kind(k) != 'sql'][:args.top]
        for key in statements + requests:
            print(row % (key[:44], *[counts[key] for counts in sides]))


if __name__ == '__main__':
    main()
