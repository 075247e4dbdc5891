#!/usr/bin/env bash
# Runs the whole test suite N times (default 10) and says which tests failed, and how often.
# The last B runs (default 3; --busy B) run with both cores, or --cores C, kept busy by other
# processes, as on a loaded CI machine. Builds once first (swift build --build-tests), then runs
# `swift test --skip-build`, the README's test command without the build. Exit status 0 only when
# every run passed. Logs: .build/stress/run-K.log. See docs/testing.md.
#
#   Tests/stress.sh            10 runs, the last 3 busy
#   Tests/stress.sh 5 --busy 5 5 runs, all busy
#   Tests/stress.sh 3 --filter ScenarioFileTests
set -uo pipefail
cd "$(dirname "$0")/.."

runs=10 busy=3 cores=$(nproc) filter=()
while [ $# -gt 0 ]; do
  case "$1" in
    --busy) busy="${2:?--busy needs a number}"; shift 2 ;;
    --cores) cores="${2:?--cores needs a number}"; shift 2 ;;
    --filter) filter=(--filter "${2:?--filter needs a pattern}"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) runs="$1"; shift ;;
    *) echo "stress.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
case "$runs$busy$cores" in *[!0-9]*) echo "stress.sh: runs, --busy and --cores take whole numbers" >&2; exit 64 ;; esac
[ "$busy" -le "$runs" ] || busy=$runs

logs=.build/stress
mkdir -p "$logs"
echo "building the tests…"
if ! swift build --build-tests >"$logs/build.log" 2>&1; then
  tail -20 "$logs/build.log" >&2
  echo "stress.sh: the build failed ($logs/build.log)" >&2
  exit 1
fi

burners=()
stop_burners() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
  burners=()
}
trap stop_burners EXIT INT TERM

failed_runs=0
declare -A failures=()
for run in $(seq 1 "$runs"); do
  load=quiet
  if [ "$run" -gt $((runs - busy)) ] && [ ${#burners[@]} -eq 0 ]; then
    for _ in $(seq 1 "$cores"); do
      ( trap 'exit 0' TERM; while :; do :; done ) &
      burners+=($!)
    done
  fi
  [ ${#burners[@]} -gt 0 ] && load="busy ($cores cores burning)"
  log="$logs/run-$run.log"
  start=$(date +%s.%N)
  swift test --skip-build "${filter[@]}" >"$log" 2>&1
  status=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  summary=$(grep -E '^(✔|✘) Test run with' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    echo "run $run/$runs, $load: passed in ${seconds} s — ${summary:-no summary}"
  else
    failed_runs=$((failed_runs + 1))
    echo "run $run/$runs, $load: FAILED (exit $status) in ${seconds} s — ${summary:-no summary; see $log}"
    # A test's failure line: ✘ Test "name" … failed after …; a crash leaves no such line.
    found=0
    while IFS= read -r name; do
      [ -n "$name" ] || continue
      failures["$name"]=$(( ${failures["$name"]:-0} + 1 ))
      found=1
    done < <(grep -E '^✘ Test .* failed after' "$log" | sed -E 's/^✘ Test (.*) (with [0-9]+ test cases )?failed after.*/\1/' | sort -u)
    if [ "$found" -eq 0 ]; then
      failures["(no failed test named: crash or timeout; see $log)"]=$(( ${failures["(no failed test named: crash or timeout; see $log)"]:-0} + 1 ))
    fi
  fi
done
stop_burners

echo
echo "$((runs - failed_runs)) of $runs runs passed ($busy busy)."
if [ ${#failures[@]} -gt 0 ]; then
  echo "failed tests (runs failed of $runs):"
  for name in "${!failures[@]}"; do printf '  %3d  %s\n' "${failures[$name]}" "$name"; done | sort -rn
  exit 1
fi
