#!/usr/bin/env bash
# Chaos with a history check (Tests/Chaos/chaos.py): two `authsim serve --store` nodes on one
# PostgreSQL under concurrent clients while nodes are killed, paused and PostgreSQL restarts; the
# history and the final state are checked afterwards, and --self-test shows each check failing
# when its rule is broken on purpose.
#
#   Tests/chaos.sh                  10 minutes, the debug build (swift build first)
#   Tests/chaos.sh --minutes 1.5    the short form .ci/run runs
#   Tests/chaos.sh --release        against a release build (swift build -c release)
# Other arguments go to chaos.py (--seed N, --out DIR, --no-faults, --sign-in-clients N).
# Needs: Debian's postgresql, python3 with requests, httpx (HTTP/2) and PyJWT (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=debug
args=()
for arg in "$@"; do
  case "$arg" in
    --release) configuration=release ;;
    *) args+=("$arg") ;;
  esac
done
for product in authsim apns-sender; do
  swift build -c "$configuration" --product "$product" > /tmp/authsim-chaos-build.log 2>&1 || { cat /tmp/authsim-chaos-build.log; exit 1; }
done
bin=$(swift build -c "$configuration" --show-bin-path)
exec python3 Tests/Chaos/chaos.py --bin "$bin" --self-test "${args[@]}"
