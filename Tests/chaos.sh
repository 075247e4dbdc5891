#!/usr/bin/env bash
# Chaos with a history check (Tests/Chaos/chaos.py): two `authsim serve --store` nodes on one
# PostgreSQL under concurrent clients while nodes are killed, paused and PostgreSQL restarts; the
# history and the final state are checked afterwards, and --self-test shows each check failing
# when its rule is broken on purpose.
#
#   Tests/chaos.sh                  10 minutes, the debug build (swift build first)
#   Tests/chaos.sh --minutes 1.5    the short form .ci/run runs
#   Tests/chaos.sh --release        against a release build (swift build -c release)
#   Tests/chaos.sh --bin DIR        against the programs in DIR (authsim, apns-sender), built already:
#                                   no swift build (.ci/run gives it the CI bundle's bin/, unpacked)
# Other arguments go to chaos.py (--seed N, --out DIR, --no-faults, --sign-in-clients N).
# Needs: Debian's postgresql, python3 with requests, httpx (HTTP/2) and PyJWT (.ci/run installs them).
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
configuration=debug
bin=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) configuration=release ;;
    --bin)
      [ $# -ge 2 ] || { echo "Tests/chaos.sh: --bin needs a folder" >&2; exit 2; }
      bin=$2; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
if [ -n "$bin" ]; then
  [ "$configuration" = debug ] || { echo "Tests/chaos.sh: --release builds; --bin takes built programs: one or the other" >&2; exit 2; }
  case "$bin" in /*) ;; *) bin=$caller/$bin ;; esac
  for program in authsim apns-sender; do
    [ -x "$bin/$program" ] || { echo "Tests/chaos.sh: --bin $bin has no $program" >&2; exit 2; }
  done
else
  for product in authsim apns-sender; do
    swift build -c "$configuration" --product "$product" > /tmp/authsim-chaos-build.log 2>&1 || { cat /tmp/authsim-chaos-build.log; exit 1; }
  done
  bin=$(swift build -c "$configuration" --show-bin-path)
fi
exec python3 Tests/Chaos/chaos.py --bin "$bin" --self-test "${args[@]}"
