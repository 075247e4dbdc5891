#!/usr/bin/env bash
# A user's build of authsim's app side, cold: a package whose one target imports FirebaseAuth and
# calls `Auth.auth().signOut()`, depending on authsim at a commit by URL (a clone of this checkout)
# with its Simulation trait off (`traits: []`, as docs/app-code-on-linux.md says) and with authsim's
# default traits, built from nothing (a scratch folder and a package cache of its own, the manifest
# cache off); beside them, the same package depending on nothing (what SwiftPM, one module and a link
# cost alone). CPU-seconds are user + system of every process the build ran. docs/dependencies.md
# holds the figures.
#
#   Benchmarks/app-build.sh [COMMIT]            the app side at COMMIT (HEAD when none)
#   Benchmarks/app-build.sh --testing [COMMIT]  also a test target that imports AuthsimTesting
#                                               (swift build --build-tests; 10 to 25 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
TESTING=0; [ "${1:-}" = --testing ] && { TESTING=1; shift; }
COMMIT=$(git rev-parse --verify "${1:-HEAD}^{commit}") || { echo "not a commit: ${1:-HEAD}" >&2; exit 2; }
command -v swift >/dev/null || { echo "needs swift" >&2; exit 2; }
WORK=$(mktemp -d /tmp/authsim-appbuild.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
git clone -q --no-checkout . "$WORK/authsim"

# package NAME DEPENDS(0: no, 1: traits off, 2: default traits) TESTS(0|1): a package in $WORK/NAME.
package() {
  local dir="$WORK/$1" deps="" products="" testTarget="" traits=""
  mkdir -p "$dir/Sources/App"
  [ "$2" = 1 ] && traits=", traits: []"
  if [ "$2" != 0 ]; then
    deps=".package(url: \"file://$WORK/authsim\", revision: \"$COMMIT\"$traits)"
    products='.product(name: "FirebaseAuth", package: "authsim")'
    printf 'import FirebaseAuth\n\npublic func signOut() throws { try Auth.auth().signOut() }\n' > "$dir/Sources/App/App.swift"
  else
    printf 'import Foundation\n\npublic func signOut() throws { _ = Date() }\n' > "$dir/Sources/App/App.swift"
  fi
  if [ "$3" = 1 ]; then
    mkdir -p "$dir/Tests/AppTests"
    printf 'import App\nimport AuthsimTesting\nimport Testing\n\n@Test func builds() { _ = Simulation.self }\n' > "$dir/Tests/AppTests/AppTests.swift"
    testTarget=', .testTarget(name: "AppTests", dependencies: ["App", .product(name: "AuthsimTesting", package: "authsim")])'
  fi
  cat > "$dir/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription
let package = Package(name: "$1", platforms: [.macOS(.v15)], dependencies: [$deps],
                      targets: [.target(name: "App", dependencies: [$products])$testTarget])
EOF
}

# cold NAME [swift-build-args…] → "cpu-s user-s system-s wall-s jobs"
cold() {
  local name=$1; shift
  local times
  times=$( { TIMEFORMAT='%U %S %R'; time swift build --package-path "$WORK/$name" --scratch-path "$WORK/$name/.build" \
      --cache-path "$WORK/cache-$name" --manifest-cache none "$@" > "$WORK/$name.log" 2>&1; } 2>&1 ) \
    || { echo "the build of $name failed:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1; }
  local jobs
  jobs=$(grep -o '^\[[0-9]*/[0-9]*\]' "$WORK/$name.log" | tr -d '[]' | cut -d/ -f2 | sort -n | tail -1)
  echo "$times" | awk -v j="${jobs:-0}" '{printf "%.0f %.0f %.0f %.0f %s\n", $1 + $2, $1, $2, $3, j}'
}

row() { # label "cpu user sys wall jobs"
  set -- "$1" $2
  echo "| $1 | $2 ($3 + $4) | $5 | $6 |"
}

echo "### A user's cold build (swift build, debug, $(nproc) cores): authsim at ${COMMIT:0:7}"
echo "| package | CPU-s (user + system) | wall s | build jobs |"
echo "|---|---|---|---|"
package floor 0 0
row "one target, no dependency (SwiftPM's floor)" "$(cold floor)"
package app 1 0
row "one target importing FirebaseAuth, authsim's Simulation trait off" "$(cold app)"
package appdefault 2 0
row "the same with authsim's default traits" "$(cold appdefault)"
if [ $TESTING = 1 ]; then
  package testing 2 1
  row "the same with a test target importing AuthsimTesting (--build-tests)" "$(cold testing --build-tests)"
fi
