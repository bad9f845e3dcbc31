#!/bin/bash
# Install a Nova source tree (editable, as a developer's checkout) and the
# harness into the venv ENVDIR, over the libraries pinned for Nova 34.
#
#   constraints/source.sh ENVDIR WORKDIR
#
# The tree is $NOVA_SOURCE; without it, Nova 34.0.0's sdist is downloaded
# and unpacked under WORKDIR to stand in for one. A tree without git
# history (an sdist) gets its version from PKG-INFO through PBR_VERSION.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
envdir=$1
work=$2
mkdir -p "$work"
pip="$envdir/bin/python -m pip"
tree=${NOVA_SOURCE:-}
if [ -z "$tree" ]; then
    tree=$work/nova-34.0.0
    if [ ! -d "$tree" ]; then
        $pip download --quiet --no-binary :all: --no-deps -d "$work" \
            nova==34.0.0
        tar -xzf "$work/nova-34.0.0.tar.gz" -C "$work"
    fi
fi
tree=$(cd "$tree" && pwd)
if [ ! -f "$tree/etc/nova/api-paste.ini" ] || [ ! -d "$tree/nova/tests" ]; then
    echo "$tree is not a Nova source tree (no etc/nova/api-paste.ini or" \
         "nova/tests)" >&2
    exit 2
fi
if [ ! -e "$tree/.git" ] && [ -z "${PBR_VERSION:-}" ] \
        && [ -f "$tree/PKG-INFO" ]; then
    PBR_VERSION=$(sed -n 's/^Version: //p' "$tree/PKG-INFO")
    export PBR_VERSION
fi
# The tree decides Nova's version: every pin but Nova's applies.
grep -v '^nova==' "$root/upper-constraints.txt" >"$work/constraints.txt"
grep -viE '^nova([<>=! ]|$)' "$root/requirements.txt" >"$work/requirements.txt"
$pip install --quiet -c "$work/constraints.txt" \
    -r "$work/requirements.txt" -r "$root/test-requirements.txt"
$pip install --quiet -c "$work/constraints.txt" -e "$tree"
$pip install --quiet --no-deps -e "$root"
echo "Nova under test: $tree"
