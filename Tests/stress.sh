#!/usr/bin/env bash
# Runs the whole test suite N times (default 10) and says which tests failed, and how often.
# The last B runs (default 3; --busy B) run with both cores, or --cores C, kept busy by other
# processes, as on a loaded CI machine. Builds once first (swift build --build-tests), then runs
# `swift test --skip-build`, the README's test command without the build. Exit status 0 only when
# every run passed. Logs: .build/stress/run-K.log. A run still going after --hang-after seconds
# (default 600, ten times a busy run) is taken as hung: the tests it started and never finished, the
# test process's threads (gdb) and open files go to run-K.hang, and it is killed. See docs/testing.md.
#
#   Tests/stress.sh            10 runs, the last 3 busy
#   Tests/stress.sh 5 --busy 5 5 runs, all busy
#   Tests/stress.sh 3 --filter ScenarioFileTests
set -uo pipefail
cd "$(dirname "$0")/.."

runs=10 busy=3 cores=$(nproc) filter=() hang_after=600
while [ $# -gt 0 ]; do
  case "$1" in
    --busy) busy="${2:?--busy needs a number}"; shift 2 ;;
    --cores) cores="${2:?--cores needs a number}"; shift 2 ;;
    --filter) filter=(--filter "${2:?--filter needs a pattern}"); shift 2 ;;
    --hang-after) hang_after="${2:?--hang-after needs seconds}"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) runs="$1"; shift ;;
    *) echo "stress.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
case "$runs$busy$cores$hang_after" in *[!0-9]*) echo "stress.sh: runs, --busy, --cores and --hang-after take whole numbers" >&2; exit 64 ;; esac
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

# A hung run's evidence, then its end, in $2.hang: the tests started and not finished (from its
# log), every process under the test run as a tree, the Python clients' stacks, and the threads
# (gdb, when installed) and open files of every other program but Chromium's and PostgreSQL's.
hung() { # swift-test-pid log
  local evidence="${2%.log}.hang"
  {
    echo "still running after $hang_after s; tests started and not finished:"
    python3 - "$2" <<'EOF'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if m := re.match(r'◇ Test "(.*)" started\.', line): started.append(m.group(1))
    if m := re.match(r'[✔✘] Test "(.*?)" (with \d+ test cases? )?(passed|failed)', line): ended.add(m.group(1))
for name in started:
    if name not in ended: print("  " + name)
EOF
    # Every process under the test process (its programs, their clients, their browsers), as a tree.
    local all=() queue=("$1") pid
    while [ ${#queue[@]} -gt 0 ]; do
      pid=${queue[0]}; queue=("${queue[@]:1}")
      for child in $(pgrep -P "$pid"); do all+=("$child"); queue+=("$child"); done
    done
    echo; echo "processes under the test run:"
    [ ${#all[@]} -gt 0 ] && ps -o pid,ppid,stat,etime,time,args --forest -p "$1,$(IFS=,; echo "${all[*]}")" | cut -c1-220
    # Python clients (Tests/Clients/hang_dump.py) write every thread's stack when sent SIGUSR1.
    local stacks="${TMPDIR:-/tmp}/authsim-python-stacks"
    for pid in "${all[@]}"; do
      [ -f "$stacks/$pid.txt" ] || continue
      kill -USR1 "$pid" 2>/dev/null && sleep 1
      echo; echo "python process $pid's threads:"; cat "$stacks/$pid.txt"
    done
    # Swift programs' threads (gdb, when installed) and open files; not Chromium's many processes.
    for pid in "${all[@]}"; do
      case "$(cat /proc/"$pid"/comm 2>/dev/null)" in chromium*|chrome*|python*|postgres|bash|sh|env|"") continue ;; esac
      echo; echo "process $pid: $(tr '\0' ' ' < /proc/"$pid"/cmdline | cut -c1-200)"
      ls -l /proc/"$pid"/fd 2>/dev/null | awk 'NR > 1 {print "  " $NF}' | sort | uniq -c | sort -rn
      command -v gdb >/dev/null && timeout 120 gdb -p "$pid" -batch -ex "thread apply all bt 24" 2>&1
    done
    for pid in "${all[@]}"; do kill "$pid" 2>/dev/null; done
  } > "$evidence" 2>&1
  kill "$1" 2>/dev/null
}

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
  rm -f "${log%.log}.hang"
  start=$(date +%s.%N)
  swift test --skip-build "${filter[@]}" >"$log" 2>&1 &
  tests=$!
  # The bound is a guard on a hang, never a wait a test relies on.
  ( trap 'kill $nap 2>/dev/null; exit 0' TERM; sleep "$hang_after" & nap=$!; wait $nap; hung "$tests" "$log" ) &
  watchdog=$!
  wait "$tests"
  status=$?
  kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
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
    if [ -f "${log%.log}.hang" ]; then
      failures["(hung: see ${log%.log}.hang)"]=$(( ${failures["(hung: see ${log%.log}.hang)"]:-0} + 1 ))
    elif [ "$found" -eq 0 ]; then
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
