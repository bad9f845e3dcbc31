"""Give a fresh checkout's stestr the tests' times, so its workers balance.

stestr splits the tests between its workers by the times its repository
(``.stestr``) recorded in earlier runs. A fresh clone (every gate run)
has none, so stestr deals the test classes out in turn, blind: on
2026-12-06 one functional worker ran 12 minutes, the other under 9.
``tests/test-times.json`` holds each test's time from a gate run; the
test envs give the repository, before stestr starts, the times it has
none of. A time the repository has is never changed: a developer's runs
keep their own. A test not in the file (new, renamed) is scheduled as
stestr does any test it has no time for.

    python tools/test_times.py           # add the times .stestr lacks
    python tools/test_times.py --save    # write the file from .stestr

Refresh the file from a gate-like run (``tox -e py3,functional`` on a
two-core machine) when the suite's shape changes a lot.
"""

import argparse
from dbm import dumb
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIMES_FILE = os.path.join('tests', 'test-times.json')


def _times_db(root):
    # stestr's file repository keeps the times in a dumb dbm of this name
    # (stestr.repository.file, pinned by the constraints).
    return os.path.join(root, '.stestr', 'times.dbm')


def has_times(root):
    path = _times_db(root) + '.dat'
    return os.path.exists(path) and os.path.getsize(path) > 0


def seed(root=ROOT):
    with open(os.path.join(root, TIMES_FILE)) as f:
        times = json.load(f)
    if not os.path.isdir(os.path.join(root, '.stestr')):
        # stestr's own initialisation (its format file), as `stestr init`.
        from stestr.repository import util
        util.get_repo_initialise(repo_url=root)
    db = dumb.open(_times_db(root), 'c')
    try:
        missing = [test_id for test_id in times if test_id not in db]
        for test_id in missing:
            db[test_id] = str(times[test_id])
    finally:
        db.close()
    return ('stestr: %d test times added from %s (it balances its '
            'workers by them)' % (len(missing), TIMES_FILE))


def save(root=ROOT):
    if not has_times(root):
        sys.exit('no test times in %s: run the tests first' % os.path.join(
            root, '.stestr'))
    db = dumb.open(_times_db(root), 'r')
    try:
        times = {key.decode(): round(float(db[key]), 1) for key in db.keys()
                 if key.startswith(b'tests.')}
    finally:
        db.close()
    with open(os.path.join(root, TIMES_FILE), 'w') as f:
        json.dump(times, f, indent=0, sort_keys=True)
        f.write('\n')
    return 'wrote %d test times to %s' % (len(times), TIMES_FILE)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--save', action='store_true',
                        help='write %s from .stestr' % TIMES_FILE)
    args = parser.parse_args(argv)
    print(save() if args.save else seed())


if __name__ == '__main__':
    main()
