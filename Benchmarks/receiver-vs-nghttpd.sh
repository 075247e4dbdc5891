#!/usr/bin/env bash
# push-receiver with full validation vs nghttpd, under the same h2load load, in one command.
#
#   Benchmarks/receiver-vs-nghttpd.sh [REQUESTS] [CLIENTS] [STREAMS]     (default 200000 4 100)
#
# Every request is a background push with a real ES256 provider token (checked once per
# connection), a registered device token (registry lookup), JSON payload parsing, and a
# delivery-log line written before the 200. nghttpd answers the same POSTs from a file.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}; C=${2:-4}; M=${3:-100}
command -v h2load >/dev/null && command -v nghttpd >/dev/null || {
  echo "needs h2load and nghttpd: apt-get install nghttp2-client nghttp2-server" >&2; exit 2; }

swift build -c release --product push-receiver >/dev/null && swift build -c release --product apns-sender >/dev/null
BIN=$(swift build -c release --show-bin-path)
WORK=$(mktemp -d /tmp/authsim-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

TOKEN=5f3a00112233445566778899aabbccddeeff00112233445566778899aabbccdd
TOPIC=com.example.authsim
"$BIN/push-receiver" devices add --state "$WORK/state" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
JWT=$("$BIN/apns-sender" --print-token --certs "$WORK/certs")
PAYLOAD=Payloads/background-refresh.json
mkdir -p "$WORK/www/3/device" && echo ok > "$WORK/www/3/device/$TOKEN"

"$BIN/push-receiver" --certs "$WORK/certs" --state "$WORK/state" --sandbox-port 24197 --no-production-listener \
  --cleartext-port 24199 > "$WORK/receiver.log" 2>&1 &
nghttpd --no-tls -d "$WORK/www" 24299 > /dev/null 2>&1 &
nghttpd -d "$WORK/www" 24298 "$WORK/certs/server-key.pem" "$WORK/certs/server.pem" > /dev/null 2>&1 &
sleep 1

run() { # name url
  local out
  out=$(h2load -n "$N" -c "$C" -m "$M" -d "$PAYLOAD" \
    -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" -H "apns-push-type: background" -H "apns-priority: 5" \
    "$2/3/device/$TOKEN" 2>&1)
  local rps ok
  rps=$(echo "$out" | awk '/^finished in/ {gsub(",","",$4); print $4}')
  ok=$(echo "$out" | awk '/^status codes:/ {print $3}')
  printf "%-34s %12s req/s   2xx: %s of %s\n" "$1" "$rps" "$ok" "$N" >&2
  echo "$rps"
}

echo "h2load -n $N -c $C -m $M, background push with full validation; $(nproc) cores" >&2
ours_clear=$(run "push-receiver (cleartext h2)" http://127.0.0.1:24199)
ref_clear=$(run "nghttpd --no-tls" http://127.0.0.1:24299)
ours_tls=$(run "push-receiver (TLS, ALPN h2)" https://127.0.0.1:24197)
ref_tls=$(run "nghttpd (TLS)" https://127.0.0.1:24298)
logged=$(wc -l < "$WORK/state/deliveries.jsonl")
echo "ratio cleartext: $(awk "BEGIN {printf \"%.2f\", $ours_clear/$ref_clear}")×   ratio TLS: $(awk "BEGIN {printf \"%.2f\", $ours_tls/$ref_tls}")×" >&2
echo "delivery log lines: $logged (expected $((2 * N)))" >&2
