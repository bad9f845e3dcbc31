#!/bin/bash
# Regenerate constraints/nova<N>.txt, the pins of one Nova release of the
# matrix (tox -e functional-nova<N>).
#
#   constraints/make.sh 31 <openstack/requirements checkout or git dir>
#
# Nova's runtime dependencies are pinned by that release's own
# upper-constraints (openstack/requirements, branch stable/<series>): the
# libraries Nova was released and tested with. The harness's test tools
# (pytest 9, hypothesis, hacking) are newer than some of those branches pin,
# so theirs come from our upper-constraints.txt. Everything is installed into
# a fresh Python 3.11 venv and frozen.
set -euo pipefail
cd "$(dirname "$0")/.."
major=$1
reqs=$2
case $major in
    31) series=2025.1 nova=31.3.1 placement=13.0.1 ;;
    32) series=2025.2 nova=32.2.1 placement=14.0.0 ;;
    33) series=2026.1 nova=33.0.2 placement=15.0.0 ;;
    *) echo "unknown Nova release $major" >&2; exit 2 ;;
esac
if [ -d "$reqs/.git" ]; then reqs=$reqs/.git; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ours='^(pytest|pluggy|iniconfig|hypothesis|hacking|flake8|pycodestyle|pyflakes|coverage|sortedcontainers)='
git --git-dir="$reqs" show "origin/stable/$series:upper-constraints.txt" \
    | grep -viE "$ours" >"$work/uc.txt"
grep -iE "$ours" upper-constraints.txt >>"$work/uc.txt"
# The harness's runtime requirements less the Nova and Placement it is
# released with (requirements.txt asks for the newest).
grep -viE '^(nova|openstack-placement)([<>=! ]|$)' requirements.txt \
    >"$work/requirements.txt"
python3.11 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet -c "$work/uc.txt" \
    "nova==$nova" "openstack-placement==$placement" \
    -r "$work/requirements.txt" -r test-requirements.txt reno
{
    echo "# Pins of the Nova $major ($series) matrix entry: Nova $nova, Placement"
    echo "# $placement, their libraries as of openstack/requirements stable/$series,"
    echo "# our test tools as of upper-constraints.txt. Regenerate with"
    echo "# constraints/make.sh $major <openstack/requirements checkout>."
    "$work/venv/bin/pip" freeze --exclude-editable | sort -f
} >"constraints/nova$major.txt"
echo "wrote constraints/nova$major.txt"
