"""Build the older Novas of the release matrix as virtualenvs.

``python tests/export/older_novas.py DIR 32 33`` makes ``DIR/nova32`` and
``DIR/nova33``: a venv of this Python with ``constraints/nova<N>.txt``
installed (a full freeze of that release's Nova, Placement and
libraries; ``--no-deps``, as tox's ``functional-nova<N>`` envs install
it). A venv already built from the same pins is kept (its stamp, the
pins' SHA-256, matches); each one built prints its time. The harness
itself is not installed there: the older-release proofs
(``test_older_releases``) put the checkout on ``PYTHONPATH``.
"""

import hashlib
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
STAMP = 'nova-harness-pins.sha256'


def pins(major):
    return os.path.join(ROOT, 'constraints', 'nova%s.txt' % major)


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def build(folder, major):
    """``folder``/nova<major>, built unless its stamp matches the pins."""
    venv = os.path.join(folder, 'nova%s' % major)
    stamp = os.path.join(venv, STAMP)
    want = digest(pins(major))
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == want:
                print('%s: kept (built from the same pins)' % venv)
                return venv
    start = time.monotonic()
    subprocess.check_call([sys.executable, '-m', 'venv', '--clear', venv])
    subprocess.check_call([
        os.path.join(venv, 'bin', 'python'), '-m', 'pip', 'install',
        '--quiet', '--no-deps', '-r', pins(major)])
    with open(stamp, 'w') as f:
        f.write(want + '\n')
    print('%s: built from constraints/nova%s.txt in %.0f s'
          % (venv, major, time.monotonic() - start))
    return venv


def main(argv=None):
    folder, *majors = sys.argv[1:] if argv is None else argv
    for major in majors:
        if not os.path.exists(pins(major)):
            sys.exit('%s: no such pins file (the release matrix has %s)' % (
                pins(major), ', '.join(sorted(
                    name[len('nova'):-len('.txt')] for name in os.listdir(
                        os.path.join(ROOT, 'constraints'))
                    if name.startswith('nova') and name.endswith('.txt')))))
        build(folder, major)


if __name__ == '__main__':
    main()
