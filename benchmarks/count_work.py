"""Is it the same work? Nova's, counted in Nova's tests and the harness's.

For each pair that ``compare_nova.py`` times, runs Nova's own test and the
harness's scenario (once to warm up, then once counted) and prints, side
by side, what Nova and Placement were asked to do: SQL statements by verb
(every engine of the process), Placement requests and Nova API requests
by method and path. Counts, not times: they do not depend on the
machine's load, and they show whether the harness's runs are the work of
Nova's tests, no more, no less (a test that polls makes more GETs).

    python benchmarks/count_work.py [--link-api-paste] [--top 12]
"""

import argparse
import collections
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
    """Counts SQL statements and API requests while ``on`` is set."""

    def __init__(self):
        self.counts = collections.Counter()
        self.on = False

    def install(self):
        import sqlalchemy
        from sqlalchemy import event

        from nova.tests.functional.api import client
        from nova.tests.functional import fixtures as func_fixtures

        event.listen(sqlalchemy.engine.Engine, 'before_cursor_execute',
                     self._statement)
        for name in ('_fake_get', '_fake_put', '_fake_post',
                     '_fake_delete'):
            self._wrap(func_fixtures.PlacementFixture, name,
                       'placement %s' % name[len('_fake_'):].upper())
        self._wrap(client.TestOpenStackClient, 'api_request', 'nova-api')

    def _statement(self, conn, cursor, statement, *args):
        if self.on:
            self.counts['sql %s' % statement.split(None, 1)[0].upper()] += 1

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
                counting.counts[' '.join(
                    part for part in (label, method, path) if part)] += 1
            return real(this, *args, **kwargs)
        setattr(owner, name, counted)

    def count(self, func, *args):
        self.counts = collections.Counter()
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
    from harness import cloud  # noqa: F401  (patches eventlet first)
    import nova.tests.functional  # noqa: F401
    if args.link_api_paste:
        compare_nova.link_api_paste()
    counting = Counting()
    counting.install()
    for name, nova_test, scenario_path in compare_nova.PAIRS:
        sides = []
        for func, arg in ((compare_nova.run_nova, nova_test),
                          (compare_nova.run_harness, scenario_path)):
            func(arg)   # warm up: first-use costs belong to neither
            sides.append(counting.count(func, arg))
        print()
        print(name)
        print('  %-52s %8s %8s' % ('', 'nova', 'harness'))
        kinds = collections.OrderedDict()
        for counts in sides:
            for key in counts:
                kinds.setdefault(_kind(key), None)
        for kind in kinds:
            totals = [sum(v for k, v in counts.items() if _kind(k) == kind)
                      for counts in sides]
            print('  %-52s %8d %8d' % (kind + ' (all)', *totals))
        keys = sorted(set(sides[0]) | set(sides[1]),
                      key=lambda k: (-max(sides[0][k], sides[1][k]), k))
        statements = [k for k in keys if _kind(k) == 'sql']
        requests = [k for k in keys if _kind(k) != 'sql'][:args.top]
        for key in statements + requests:
            print('  %-52s %8d %8d' % (key[:52], sides[0][key],
                                       sides[1][key]))


if __name__ == '__main__':
    main()
