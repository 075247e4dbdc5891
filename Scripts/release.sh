#!/usr/bin/env bash
# Makes authsim's relocatable release from this source tree, for machines without Swift:
#
#   dist/authsim-<version>-linux-<arch>.tar.gz     authsim (Swift's standard library and Foundation linked
#                                                  in) and the links that make it the other three programs,
#                                                  its resources, the README and docs/, licences
#   dist/authsim-<version>-py3-none-manylinux_<glibc>_<arch>.whl
#                                                  the same binaries as a Python package, with the
#                                                  inspector's client and the pytest plugin
#
# Usage: Scripts/release.sh [--out DIR] [--skip-build | --debug]
#   --out DIR      where the tarball and the wheel go (default: dist)
#   --skip-build   package what .build/static already holds (after a build of the same tree)
#   --debug        package the debug build (`swift build`'s objects in .build, linked again by SwiftPM's
#                  own link command with the standard library and Foundation static, into a folder of
#                  its own): the same bundle, unoptimized, in about half a minute where the debug build is
#                  done, and .build left as it was. For CI, which has just built and tested that build: it
#                  proves the packaging and the programs with Swift hidden, not the optimizer.
#                  The bundle holds NOT-A-RELEASE; never ship it.
#
# The version is Utilities.AuthsimVersion's (Sources/Utilities/AuthsimVersion.swift), the only place
# it is written. The build goes to its own scratch folder (.build/static), so it does not disturb
# the debug and release builds: about 9 minutes cold on 2 cores, a minute when little changed.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --skip-build) build=0; shift ;;
    --debug) build=debug; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/Utilities/AuthsimVersion.swift)
[ -n "$version" ] || { echo "release.sh: no version in Sources/Utilities/AuthsimVersion.swift" >&2; exit 1; }
arch=$(uname -m)
products=(authsim push-receiver apns-sender redirect-interceptor)
scratch=.build/static
bin="$scratch/release"
binary="$bin/authsim"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# One binary is all four programs: authsim runs push-receiver, apns-sender or redirect-interceptor
# when started under that name (ProgramCommands), and the bundle links those names to it. Four
# binaries would each carry Foundation's ICU data: about 120 MB of tarball instead of about 35.
if [ "$build" = 1 ]; then
  echo "release.sh: building authsim (release, --static-swift-stdlib)…" >&2
  swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product authsim >&2
elif [ "$build" = debug ]; then
  # The debug objects were compiled against the shared Foundation, whose modules name only the
  # shared libraries to link: the static ones' own dependencies (_FoundationICU, _FoundationCollections,
  # …) are therefore named here, every static library of the toolchain in one group, from which the
  # linker takes only what is used (in any order).
  static_libs="$(dirname "$(dirname "$(command -v swift)")")/lib/swift_static/linux"
  [ -d "$static_libs" ] || { echo "release.sh: --debug needs the toolchain's static libraries in $static_libs" >&2; exit 1; }
  group=(-Xlinker --start-group)
  for archive in "$static_libs"/lib*.a; do
    library=$(basename "$archive" .a)
    group+=(-Xlinker "-l${library#lib}")
  done
  group+=(-Xlinker --end-group)
  # The debug build's authsim, linked again by SwiftPM's own link command with -static-stdlib, into
  # the stage: .build is left as it is. (`swift build --static-swift-stdlib` would plan the build
  # again and relink .build's authsim, and the next swift build would plan and link it back.) It is
  # built first only when it is missing or a source is newer: SwiftPM plans the whole build again
  # whenever its environment differs from the last build's, this script's included (about 10 s).
  bin=$(swift build --show-bin-path)
  stale="not built yet"
  [ -x "$bin/authsim" ] && stale=$(find Package.swift Sources -newer "$bin/authsim" -printf '%p is newer than it' -quit)
  if [ -n "$stale" ]; then
    echo "release.sh: building the debug build's authsim ($stale)…" >&2
    swift build --product authsim >&2
  fi
  echo "release.sh: linking the debug build's authsim (-static-stdlib)…" >&2
  link=()
  mapfile -d '' link < <(python3 Scripts/swiftpm-link-command.py .build/debug.yaml "$bin/authsim" "$stage/authsim")
  [ ${#link[@]} -gt 0 ] || { echo "release.sh: no link command for authsim in .build/debug.yaml" >&2; exit 1; }
  "${link[@]}" -static-stdlib "${group[@]}" >&2
  binary="$stage/authsim"
fi
[ -x "$binary" ] || { echo "release.sh: $binary is missing: run without --skip-build" >&2; exit 1; }

# The newest glibc symbol version the binary needs names the wheel's manylinux tag.
glibc=$(objdump -T "$binary" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
glibc_minor=${glibc#GLIBC_2.}

name="authsim-$version-linux-$arch"
mkdir -p "$out"
root="$stage/$name"
mkdir -p "$root/bin"
# Symbols stripped: about half of the binary is debug information.
strip -o "$root/bin/authsim" "$binary"
for product in "${products[@]:1}"; do ln -s authsim "$root/bin/$product"; done
# Foundation's Bundle.module looks for a target's resources beside the executable.
cp -R "$bin"/*.resources "$root/bin/"
cp -R Scenarios Payloads "$root/"
# The documentation, as in the repository: the README and docs/ (`authsim docs` lists and prints them).
cp README.md "$root/README.md"
cp -R docs "$root/docs"
cp LICENSE "$root/LICENSE"
if [ "$build" = debug ]; then
  echo "A debug build of authsim $version (Scripts/release.sh --debug), unoptimized: for testing the packaging, not for use." > "$root/NOT-A-RELEASE"
fi
{
  echo "authsim $version links these into its executables; each one's licence follows."
  echo "(Every Swift package this source tree resolves is listed; not every binary links every one.)"
  echo
  echo "==== Swift (standard library, Foundation, Dispatch): /opt/swift/usr/share/swift/LICENSE.txt"
  cat "$(dirname "$(dirname "$(command -v swift)")")/share/swift/LICENSE.txt" 2>/dev/null || echo "(Apache License 2.0 with Runtime Library Exception; the toolchain's copy was not found)"
  for checkout in .build/checkouts/*/; do
    package=$(basename "$checkout")
    for file in "$checkout"LICENSE* "$checkout"NOTICE*; do
      [ -f "$file" ] || continue
      echo
      echo "==== $package: $(basename "$file")"
      cat "$file"
    done
  done
} > "$root/THIRD_PARTY_LICENSES"
# Every library the binary loads from the system, from ldd itself, so the summary cannot miss one.
needs=$(ldd "$root/bin/authsim" | awk '{print $1}' | grep -v -e '^linux-vdso' -e '/ld-linux' -e '^ld-linux' | sort -u | paste -sd ' ')
{
  echo "authsim $version for Linux $arch needs from the system: $needs"
  echo "(glibc 2.$glibc_minor or newer, libstdc++ of GCC 12 or newer, OpenSSL 3's libcrypto and libssl, zlib: Debian 12+ and"
  echo "Ubuntu 22.04+ have them all). push-receiver, apns-sender and redirect-interceptor are links to authsim."
  echo
  echo "authsim:"
  ldd "$root/bin/authsim" | sed 's/ (0x[0-9a-f]*)//' | sed 's/^/  /'
} > "$root/SHARED_LIBRARIES"

tarball="$out/$name.tar.gz"
tar -C "$stage" -czf "$tarball" "$name"
echo "$tarball"

python3 Python/make_wheel.py --bundle "$root" --version "$version" \
  --platform "manylinux_2_${glibc_minor}_$arch" --out "$out"
