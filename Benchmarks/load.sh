#!/usr/bin/env bash
# Issue 8's load run: N pushes (default 1,000,000) through push-receiver over TLS at high
# concurrency with h2load, then the receiver is stopped and its delivery log is counted: it must
# hold exactly the pushes h2load saw answered 200, each apns-id once, with no other answer.
#
#   Benchmarks/load.sh [PUSHES] [CLIENTS] [STREAMS]     (default 1000000 8 100)
#
# Exit status 0 only when every push was answered 200 and the log matches.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}; C=${2:-8}; M=${3:-100}
command -v h2load >/dev/null || { echo "needs h2load: apt-get install nghttp2-client" >&2; exit 2; }

swift build -c release --product push-receiver >/dev/null && swift build -c release --product apns-sender >/dev/null
BIN=$(swift build -c release --show-bin-path)
WORK=$(mktemp -d /tmp/authsim-load.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

TOKEN=5f3a00112233445566778899aabbccddeeff00112233445566778899aabbccdd
TOPIC=com.example.authsim
"$BIN/push-receiver" devices add --state "$WORK/state" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
JWT=$("$BIN/apns-sender" --print-token --certs "$WORK/certs")
"$BIN/push-receiver" --certs "$WORK/certs" --state "$WORK/state" --sandbox-port 24497 --no-production-listener \
  --no-device-gateway > "$WORK/receiver.log" 2>&1 &
RECEIVER=$!
for _ in $(seq 50); do grep -q "delivery log:" "$WORK/receiver.log" && break; sleep 0.1; done

echo "h2load -n $N -c $C -m $M over TLS (ALPN h2), background pushes with full validation; $(nproc) cores" >&2
OUT=$(h2load -n "$N" -c "$C" -m "$M" -d Payloads/background-refresh.json \
  -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" -H "apns-push-type: background" -H "apns-priority: 5" \
  "https://127.0.0.1:24497/3/device/$TOKEN" 2>&1)
echo "$OUT" | grep -E "^finished in|^requests:|^status codes:|^traffic:" >&2
PEAK=$(awk '/VmHWM/ {print $2 " " $3}' /proc/$RECEIVER/status)
kill -TERM $RECEIVER; wait $RECEIVER || true

OK=$(echo "$OUT" | awk '/^status codes:/ {print $3}')
FAILED=$(echo "$OUT" | awk '/^requests:/ {print $10 + $12 + $14}')   # failed, errored, timeout
LINES=$(grep -vc '^{"authsim-format"' "$WORK/state/deliveries.jsonl")   # the first line is the format stamp
UNIQUE=$(grep -o '"apns-id":"[^"]*"' "$WORK/state/deliveries.jsonl" | sort -u | wc -l)
echo "answered 200: $OK of $N; failed/errored/timed out: $FAILED; delivery log: $LINES lines, $UNIQUE distinct apns-ids; receiver peak RSS $PEAK" >&2
if [ "$OK" = "$N" ] && [ "$FAILED" = "0" ] && [ "$LINES" = "$N" ] && [ "$UNIQUE" = "$N" ]; then
  echo "OK: every push answered 200 and logged exactly once" >&2
else
  echo "MISMATCH" >&2; exit 1
fi
