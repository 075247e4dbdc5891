#!/usr/bin/env bash
# Tests the release (Scripts/release.sh's tarball and wheel) where Swift is not: inside bwrap, with
# /opt/swift masked and a clean environment, a fresh virtual environment gets the wheel and the
# clients under test from pip, then pytest runs Tests/Release against the unpacked tarball and the
# installed wheel.
#
# usage: Tests/Release/run.sh [DIST [PYTEST-ARGS…]]   (DIST: dist by default; with PYTEST-ARGS one
#        pytest runs Tests/Release with them, else two at once: the whole demo and the rest)
# needs: bwrap (Debian's bubblewrap); python3 with venv; pip reaching PyPI or its configured mirror.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${1:-dist}
[ $# -gt 0 ] && shift

version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/Utilities/AuthsimVersion.swift)
tarball="$dist/authsim-$version-linux-$(uname -m).tar.gz"
wheel=$(ls "$dist"/authsim-"$version"-py3-none-manylinux_*_"$(uname -m)".whl 2>/dev/null | head -1)
[ -f "$tarball" ] || { echo "Tests/Release/run.sh: no $tarball: run Scripts/release.sh first" >&2; exit 1; }
[ -n "$wheel" ] || { echo "Tests/Release/run.sh: no wheel for $version in $dist: run Scripts/release.sh first" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "Tests/Release/run.sh: bwrap is missing (apt-get install bubblewrap)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
bundle="$work/authsim-$version-linux-$(uname -m)"
python=$(python3 -c 'import sys; print(sys.executable)')

# The toolchain's folder is replaced by an empty one; PATH names no Swift; only pip's own settings
# pass through (its index or wheel mirror).
hidden=(bwrap --dev-bind / / --tmpfs "$(dirname "$(dirname "$(dirname "$(command -v swift || echo /opt/swift/usr/bin/swift)")")")"
        --clearenv --setenv PATH "$work/venv/bin:/usr/local/bin:/usr/bin:/bin" --setenv HOME "$work" --setenv LANG C.UTF-8 --setenv PYTHONDONTWRITEBYTECODE 1
        --setenv AUTHSIM_BUNDLE "$bundle" --setenv AUTHSIM_VERSION "$version")
for variable in $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p'); do hidden+=(--setenv "$variable" "${!variable}"); done

"${hidden[@]}" "$python" -m venv "$work/venv"
"${hidden[@]}" "$work/venv/bin/pip" install -q "$wheel" "pytest>=7" "aioapns==4.0" "firebase-admin==7.7.0"
# The wheel put the programs on PATH.
"${hidden[@]}" sh -c "authsim --version && push-receiver --version && apns-sender --version && redirect-interceptor --version" >/dev/null
pytest=("${hidden[@]}" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider)
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
