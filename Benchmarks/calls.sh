#!/usr/bin/env bash
# Calls per push into the Swift runtime and malloc, counted exactly with uprobes: a figure that
# does not move with this VM's CPU steal (wall-clock rates move by a third from run to run here,
# and perf has no hardware counters), so a hot-path change shows its effect in one run.
#
#   Benchmarks/calls.sh receiver [OLD_BIN_DIR]   push-receiver under h2load, cleartext and TLS
#   Benchmarks/calls.sh gateway  [OLD_BIN_DIR]   the same with its device gateway
#   Benchmarks/calls.sh sender   [OLD_BIN_DIR]   apns-sender into nghttpd, cleartext and TLS
#   Benchmarks/calls.sh serve    [OLD_BIN_DIR]   authsim serve (the inspector recording every push), TLS,
#                                                set up as Benchmarks/run.sh inspector sets it up
#   Benchmarks/calls.sh flows    [OLD_BIN_DIR]   whole silent-push sign-ins (authsim bench flows), per sign-in:
#                                                a run of FLOWS (default 2000) less a run of one, so that
#                                                setting up the world is not counted; CPU ms too
#
# With OLD_BIN_DIR (a folder holding an earlier build's push-receiver, apns-sender and authsim, copied from
# .build/release before the change), each line is printed for it and for this build, side by side.
# Counts: swift_beginAccess (a dynamic exclusivity check), swift_retain, malloc; per push.
# Needs root (uprobes), perf (apt-get install linux-perf), h2load and nghttpd.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:?"say what to count: receiver, gateway, sender, serve or flows"}
case "$WHAT" in receiver|gateway|sender|serve|flows) ;; *) echo "unknown: $WHAT (receiver, gateway, sender, serve or flows)" >&2; exit 2 ;; esac
OLD=${2:-}
N=${N:-100000}
for tool in perf h2load nghttpd; do
  command -v $tool >/dev/null || { echo "needs $tool (apt-get install linux-perf nghttp2-client nghttp2-server)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "uprobes need root" >&2; exit 2; }
[ -z "$OLD" ] || [ -x "$OLD/push-receiver" ] || { echo "$OLD/push-receiver not found (copy an earlier build's binaries there)" >&2; exit 2; }
[ -z "$OLD" ] || { [ "$WHAT" != serve ] && [ "$WHAT" != flows ]; } || [ -x "$OLD/authsim" ] || { echo "$OLD/authsim not found (copy an earlier build's binaries there)" >&2; exit 2; }
echo "building release products…" >&2
swift build -c release >/dev/null
BIN=$(swift build -c release --show-bin-path)
SWIFTCORE=$(ldd "$BIN/push-receiver" | awk '/libswiftCore.so/ {print $3}')
LIBC=$(ldd "$BIN/push-receiver" | awk '/libc.so.6/ {print $3}')
[ -n "$SWIFTCORE" ] || { echo "push-receiver does not link libswiftCore.so dynamically: nothing to probe" >&2; exit 2; }
for probe in "$SWIFTCORE swift_beginAccess" "$SWIFTCORE swift_retain" "$LIBC malloc"; do
  set -- $probe
  perf probe -q -x "$1" "$2" 2>/dev/null || perf probe -l 2>/dev/null | grep -q ":$2 " \
    || { echo "cannot place a uprobe on $2 in $1" >&2; exit 2; }
done
EVENTS=probe_libswiftCore:swift_beginAccess,probe_libswiftCore:swift_retain,probe_libc:malloc
WORK=$(mktemp -d /tmp/authsim-calls.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
TOKEN=5f3a00112233445566778899aabbccddeeff00112233445566778899aabbccdd
TOPIC=com.example.authsim
PAYLOAD=Payloads/background-refresh.json
per_push() { awk -F, -v n="$N" '/probe_/ {name=$3; sub(/.*:/, "", name); printf "%s %.1f  ", name, $1/n}' "$1"; }
wait_for() { # log-file text program: waits up to 10 s for the program to say it has started
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return; sleep 0.1; done
  echo "$3 did not start: $(cat "$1")" >&2; exit 1
}
start_receiver() { # binary state-dir tls-port cleartext-port gateway-flag → pid in RECEIVER
  "$1" devices add --state "$2" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
  "$1" --certs "$WORK/certs" --state "$2" --sandbox-port "$3" --no-production-listener --cleartext-port "$4" $5 > "$2.log" 2>&1 &
  RECEIVER=$!
  wait_for "$2.log" "delivery log:" push-receiver
}
h2() { h2load -n "$2" -c 4 -m 100 -d $PAYLOAD -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" \
    -H "apns-push-type: background" -H "apns-priority: 5" "$1/3/device/$TOKEN" >/dev/null 2>&1; }
count_pushes() { # label transport pid url: the calls the process pid makes while h2load sends it N pushes
  perf stat -x, -e $EVENTS -p "$3" -o "$WORK/$1.$2" & local stat=$!
  sleep 0.5; h2 "$4" "$N"; kill -INT $stat; wait $stat 2>/dev/null || true
  echo "| $1 | $2 | $(per_push "$WORK/$1.$2")|"
}
count_receiver() { # label binary gateway-flag port-base
  start_receiver "$2" "$WORK/$1" $(($4 + 7)) $(($4 + 9)) "$3"
  local pid=$RECEIVER
  JWT=$("$BIN/apns-sender" --print-token --certs "$WORK/certs")
  h2 "http://127.0.0.1:$(($4 + 9))" 20000  # warm: the provider token is verified once per connection
  for transport in cleartext TLS; do
    local url="http://127.0.0.1:$(($4 + 9))"; [ $transport = TLS ] && url="https://127.0.0.1:$(($4 + 7))"
    count_pushes "$1" $transport $pid "$url"
  done
  kill $pid; wait $pid 2>/dev/null || true
}
count_serve() { # label authsim-binary port-base
  "$2" serve --state "$WORK/$1" --certs "$WORK/certs" --sandbox-port $(($3 + 7)) --production-port 0 \
    --device-port $(($3 + 8)) --backend-port 0 --ui-port $(($3 + 10)) > "$WORK/$1.log" 2>&1 &
  local pid=$!
  wait_for "$WORK/$1.log" "Ctrl-C stops" "authsim serve"
  curl -s -X POST "http://127.0.0.1:$(($3 + 8))/devices" \
    -d "{\"environment\":\"sandbox\",\"bundleID\":\"$TOPIC\",\"token\":\"$TOKEN\"}" > /dev/null
  JWT=$("$BIN/apns-sender" --print-token --certs "$WORK/certs")
  local url="https://127.0.0.1:$(($3 + 7))"
  h2 "$url" 20000
  count_pushes "$1" TLS $pid "$url"
  kill $pid; wait $pid 2>/dev/null || true
}
count_sender() { # label binary
  for transport in cleartext TLS; do
    local flags="--cleartext --port 16299"; [ $transport = TLS ] && flags="--port 16298"
    perf stat -x, -e $EVENTS -o "$WORK/$1.$transport" -- "$2" $PAYLOAD --token $TOKEN --topic $TOPIC --certs "$WORK/certs" \
      --count "$N" --concurrency 400 --connections 4 --json --quiet $flags > /dev/null
    echo "| $1 | $transport | $(per_push "$WORK/$1.$transport")|"
  done
}
count_flows() { # label authsim-binary: per sign-in, a run of FLOWS less a run of one
  local flows=${FLOWS:-2000} n
  for n in 1 "$flows"; do
    perf stat -x, -e $EVENTS -o "$WORK/$1.$n" -- "$2" bench flows --count "$n" > /dev/null
    # CPU time apart: a uprobe costs more than the call it counts.
    perf stat -x, -e task-clock -o "$WORK/$1.cpu.$n" -- "$2" bench flows --count "$n" > /dev/null
  done
  cat "$WORK/$1.1" "$WORK/$1.cpu.1" > "$WORK/$1.one"
  cat "$WORK/$1.$flows" "$WORK/$1.cpu.$flows" > "$WORK/$1.all"
  echo "| $1 | silent-push | $(awk -F, -v n="$flows" '
    FNR == NR && /probe_|task-clock/ {one[$3] = $1; next}
    /probe_|task-clock/ {name = $3; sub(/.*:/, "", name); if (name == "task-clock") name = "CPU-ms"
      printf "%s %.1f  ", name, ($1 - one[$3]) / (n - 1)}' "$WORK/$1.one" "$WORK/$1.all")|"
}
if [ "$WHAT" = flows ]; then
  echo "| build | path | calls per sign-in |"; echo "|---|---|---|"
  [ -z "$OLD" ] || count_flows old "$OLD/authsim"
  count_flows this "$BIN/authsim"
  exit 0
fi
echo "| build | transport | calls per push |"; echo "|---|---|---|"
case "$WHAT" in
  receiver|gateway)
    flag=--no-device-gateway; [ "$WHAT" = gateway ] && flag="--device-port 0"
    [ -z "$OLD" ] || count_receiver old "$OLD/push-receiver" "$flag" 16180
    count_receiver this "$BIN/push-receiver" "$flag" 16280 ;;
  sender)
    "$BIN/push-receiver" devices add --state "$WORK/s" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
    # (A receiver makes the certificates nghttpd presents.)
    start_receiver "$BIN/push-receiver" "$WORK/s" 16187 16189 --no-device-gateway
    mkdir -p "$WORK/www/3/device" && echo ok > "$WORK/www/3/device/$TOKEN"
    nghttpd --no-tls -d "$WORK/www" 16299 > /dev/null 2>&1 &
    nghttpd -d "$WORK/www" 16298 "$WORK/certs/server-key.pem" "$WORK/certs/server.pem" > /dev/null 2>&1 &
    sleep 0.5
    [ -z "$OLD" ] || count_sender old "$OLD/apns-sender"
    count_sender this "$BIN/apns-sender" ;;
  serve)
    command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }
    [ -z "$OLD" ] || count_serve old "$OLD/authsim" 16380
    count_serve this "$BIN/authsim" 16480 ;;
esac
