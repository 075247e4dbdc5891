#!/usr/bin/env bash
# Fuzzes the parsers that take hostile input with libFuzzer, each for a set time.
#
#   Fuzz/run.sh [TARGET|all] [SECONDS]      default: all targets, 60 s each
#
# Builds authsim-fuzz with -D FUZZING, AddressSanitizer and libFuzzer (-sanitize=fuzzer), in
# .build-fuzz: libFuzzer's main drives LLVMFuzzerTestOneInput, and AUTHSIM_FUZZ_TARGET picks the
# target. (-sanitize-coverage=edge alone gives trace-pc-guard, which this libFuzzer refuses.) Seeds come from Fuzz/corpus/TARGET;
# new inputs go to .build-fuzz/corpus/TARGET; a crash leaves crash-* / leak-* / timeout-* files in
# .build-fuzz/artifacts/, to be copied into Fuzz/regressions/TARGET/ (the tests replay them).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
seconds="${2:-60}"

configuration="${FUZZ_CONFIGURATION:-debug}"
swift build -c "$configuration" --product authsim-fuzz --scratch-path .build-fuzz \
  -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address \
  -Xlinker -u -Xlinker LLVMFuzzerRunDriver -Xlinker --export-dynamic-symbol=LLVMFuzzerRunDriver
binary="$(swift build -c "$configuration" --scratch-path .build-fuzz --show-bin-path)/authsim-fuzz"

targets=("$target")
if [ "$target" = all ]; then
  targets=(provider-token push-request payload redirect-url plist scenario-file apple-token
           toolkit-body toolkit-json http2-frames emulator-import state-files ipa gateway-message
           inspector-query)
fi
mkdir -p .build-fuzz/artifacts
status=0
for name in "${targets[@]}"; do
  mkdir -p ".build-fuzz/corpus/$name"
  echo "── $name: ${seconds} s"
  # -rss_limit_mb and -malloc_limit_mb make unbounded allocation a failure; -timeout a hang.
  extra=()
  asan="${ASAN_OPTIONS:-}"
  # Foundation's PropertyListSerialization leaks a 48-byte CFError on every malformed plist
  # (swift-corelibs-foundation, its error path, not this toolkit): LeakSanitizer would stop there.
  if [ "$name" = plist ]; then extra+=(-detect_leaks=0); asan="detect_leaks=0"; fi
  # A dictionary per format (field names, stamps, frame words) where one helps.
  if [ -f "Fuzz/dict/$name.dict" ]; then extra+=(-dict="Fuzz/dict/$name.dict"); fi
  if ! ASAN_OPTIONS="$asan" LSAN_OPTIONS="suppressions=Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" AUTHSIM_FUZZ_TARGET="$name" "$binary" "${extra[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
       -artifact_prefix=".build-fuzz/artifacts/$name-" -print_final_stats=1 \
       ".build-fuzz/corpus/$name" "Fuzz/corpus/$name"; then
    echo "✘ $name: libFuzzer found a problem; see .build-fuzz/artifacts/$name-*" >&2
    status=1
  fi
done
exit $status
