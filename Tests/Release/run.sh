#!/usr/bin/env bash
# Tests the release (Scripts/release.sh's tarball and wheel) where Swift is not: inside bwrap, with
# /opt/swift masked and a clean environment, a fresh virtual environment gets the clients under test
# and the wheel from pip, then pytest runs Tests/Release against the unpacked tarball and the
# installed wheel.
#
# usage: Tests/Release/run.sh [DIST [PYTEST-ARGS…]]   (DIST: dist by default; with PYTEST-ARGS one
#        pytest runs Tests/Release with them, else two at once: the whole demo and the rest)
#        Tests/Release/run.sh --prepare VENV           makes VENV (a new folder) with the clients under
#        test and not the wheel, Swift hidden: no bundle needed, so it can run while one is made
#        Tests/Release/run.sh --venv VENV [DIST …]     the tests, with VENV made by --prepare (the wheel
#        goes into it) instead of a venv of their own
# needs: bwrap (Debian's bubblewrap); python3 with venv; pip reaching PyPI or its configured mirror.
set -euo pipefail
# Folders named on the command line are the caller's; the rest is the checkout's.
caller=$PWD
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
cd "$(dirname "$0")/../.."
# What pip installs beside the wheel, pinned: the test runner and the clients the tests drive.
clients=("pytest>=7" "aioapns==4.0" "firebase-admin==7.7.0")
pins=$(printf '%s\n' "${clients[@]}")
command -v bwrap >/dev/null || { echo "Tests/Release/run.sh: bwrap is missing (apt-get install bubblewrap)" >&2; exit 1; }
python=$(python3 -c 'import sys; print(sys.executable)')
# hidden VENV HOME: the command prefix that runs what follows in bwrap, the toolchain's folder replaced by
# an empty one, PATH naming VENV's programs and no Swift; only pip's own settings pass through (its
# index or wheel mirror).
hidden() {
  local toolchain
  toolchain=$(dirname "$(dirname "$(dirname "$(command -v swift || echo /opt/swift/usr/bin/swift)")")")
  hidden=(bwrap --dev-bind / / --tmpfs "$toolchain"
          --clearenv --setenv PATH "$1/bin:/usr/local/bin:/usr/bin:/bin" --setenv HOME "$2" --setenv LANG C.UTF-8
          --setenv PYTHONDONTWRITEBYTECODE 1)
  local variable
  for variable in $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p'); do hidden+=(--setenv "$variable" "${!variable}"); done
}
# prepare VENV HOME: a new venv with the clients, and a note of their pins that --venv checks.
prepare() {
  hidden "$1" "$2"
  "${hidden[@]}" "$python" -m venv "$1"
  "${hidden[@]}" "$1/bin/pip" install -q "${clients[@]}"
  echo "$pins" > "$1/authsim-release-tests"
}

venv=
case "${1:-}" in
  --prepare)
    [ -n "${2:-}" ] && [ $# -eq 2 ] || { echo "Tests/Release/run.sh: --prepare takes one folder (usage: --prepare VENV)" >&2; exit 2; }
    venv=$(absolute "$2")
    [ ! -e "$venv" ] || { echo "Tests/Release/run.sh: $2 exists: --prepare makes a new venv" >&2; exit 2; }
    home=$(mktemp -d)
    trap 'rm -rf "$home"' EXIT
    prepare "$venv" "$home"
    exit ;;
  --venv)
    [ -n "${2:-}" ] || { echo "Tests/Release/run.sh: --venv needs a folder made by --prepare" >&2; exit 2; }
    venv=$(cd "$(absolute "$2")" 2>/dev/null && pwd) || { echo "Tests/Release/run.sh: no venv at $2: make it with --prepare $2" >&2; exit 2; }
    [ "$pins" = "$(cat "$venv/authsim-release-tests" 2>/dev/null)" ] \
      || { echo "Tests/Release/run.sh: $2 was not made by this script's --prepare, or with other pins: make it again" >&2; exit 2; }
    shift 2 ;;
esac
dist=dist
[ $# -gt 0 ] && { dist=$(absolute "$1"); shift; }

version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/Utilities/AuthsimVersion.swift)
tarball="$dist/authsim-$version-linux-$(uname -m).tar.gz"
wheel=$(ls "$dist"/authsim-"$version"-py3-none-manylinux_*_"$(uname -m)".whl 2>/dev/null | head -1)
[ -f "$tarball" ] || { echo "Tests/Release/run.sh: no $tarball: run Scripts/release.sh first" >&2; exit 1; }
[ -n "$wheel" ] || { echo "Tests/Release/run.sh: no wheel for $version in $dist: run Scripts/release.sh first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
bundle="$work/authsim-$version-linux-$(uname -m)"
if [ -z "$venv" ]; then
  venv="$work/venv"
  prepare "$venv" "$work"
fi
hidden "$venv" "$work"
hidden+=(--setenv AUTHSIM_BUNDLE "$bundle" --setenv AUTHSIM_VERSION "$version")
# The wheel alone (its programs have no dependencies), installed again if this version is there.
"${hidden[@]}" "$venv/bin/pip" install -q --no-deps --force-reinstall "$wheel"
# The wheel put the programs on PATH.
"${hidden[@]}" sh -c "authsim --version && push-receiver --version && apns-sender --version && redirect-interceptor --version" >/dev/null
pytest=("${hidden[@]}" "$venv/bin/python" -m pytest -q -p no:cacheprovider)
# Arguments narrow the run (a file, -k, --durations…): one pytest, as given.
[ $# -gt 0 ] && { "${pytest[@]}" Tests/Release "$@"; exit; }
# Otherwise two pytest processes at once: the whole demo (two `authsim demo` runs, mostly waiting on
# the SDK's own timers: 46 s here) in one, every other test (about 50 s, one after another) in the
# other; the demo's output is shown when both are done, and either failing fails the run.
demo=Tests/Release/test_recipes.py::test_the_whole_demo
"${pytest[@]}" "$demo" > "$work/demo.log" 2>&1 &
demo_pid=$!
rest_status=0
"${pytest[@]}" Tests/Release --deselect "$demo" || rest_status=$?
demo_status=0
wait "$demo_pid" || demo_status=$?
echo "$demo (a pytest of its own, exit $demo_status):"
cat "$work/demo.log"
[ "$rest_status" = 0 ] && [ "$demo_status" = 0 ] || exit 1
