#!/usr/bin/env bash
# Every benchmark, each beside its reference tool or its floor in the same command (release builds).
#
#   Benchmarks/run.sh            everything (7 to 20 minutes on 2 cores, with the CPU of the day)
#   Benchmarks/run.sh quick      smaller counts (about 4 minutes)
#   Benchmarks/run.sh receiver|sender|inspector|es256|rs256|flows|growth|fleet|build
#   Benchmarks/run.sh fleet-pushes   only the fleet's pushes-into-PostgreSQL rows (about 1 minute)
#   AUTHSIM_BIN=DIR Benchmarks/run.sh …   the programs in DIR (a release bundle's bin/) instead of building
#   ROUNDS=N, GATEWAY_TURNS=N      rounds of A B B A (3), turns in each of the gateway row's rounds (10)
#
# Needs h2load and nghttpd (apt-get install nghttp2-client nghttp2-server), openssl, and for the
# sender's reference aioapns (pip install aioapns); the fleet's, PostgreSQL's server (apt-get install
# postgresql; it runs as nobody when this runs as root); the sign-ins' floor, nginx (apt-get install
# nginx-light). Prints a Markdown table per part; BENCHMARKS.md holds the latest figures.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
QUICK=0; [ "$WHAT" = quick ] && { QUICK=1; WHAT=all; }
PUSHES=$([ $QUICK = 1 ] && echo 50000 || echo 200000)
# Rounds of A B B A a throughput row runs, and the turns in each of the gateway row's rounds.
ROUNDS=${ROUNDS:-3}
GATEWAY_TURNS=${GATEWAY_TURNS:-10}
for knob in ROUNDS GATEWAY_TURNS; do
  [[ "${!knob}" =~ ^[1-9][0-9]*$ ]] || { echo "$knob must be a whole number from 1: ${!knob}" >&2; exit 2; }
done

# A user's cold build of the app side (Benchmarks/app-build.sh), beside SwiftPM's floor: before
# the release build below, which it does not need.
if [ "$WHAT" = build ]; then
  exec Benchmarks/app-build.sh
elif [ "$WHAT" = all ] && [ $QUICK = 0 ]; then
  # (A release bundle's programs, AUTHSIM_BIN, run where Swift may not be: then this part is skipped.)
  if command -v swift >/dev/null; then Benchmarks/app-build.sh; else echo "### A user's cold build: skipped (no swift)"; fi
fi

for tool in h2load nghttpd openssl python3; do
  command -v $tool >/dev/null || { echo "needs $tool (apt-get install nghttp2-client nghttp2-server openssl python3)" >&2; exit 2; }
done
if [ -n "${AUTHSIM_BIN:-}" ]; then
  # Another build's programs (a folder holding authsim, push-receiver and apns-sender, as a
  # release bundle's bin/ does): to compare two commits with the same script.
  BIN=$(cd "$AUTHSIM_BIN" && pwd)
  for program in authsim push-receiver apns-sender; do
    [ -x "$BIN/$program" ] || { echo "AUTHSIM_BIN=$AUTHSIM_BIN has no $program" >&2; exit 2; }
  done
else
  echo "building release products…" >&2
  swift build -c release >/dev/null
  BIN=$(swift build -c release --show-bin-path)
fi
WORK=$(mktemp -d /tmp/authsim-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
TOKEN=5f3a00112233445566778899aabbccddeeff00112233445566778899aabbccdd
TOPIC=com.example.authsim
PAYLOAD=Payloads/background-refresh.json
ratio() { awk "BEGIN {printf \"%.2f\", $1/$2}"; }
# openssl_best ALG LINE: openssl's best sign and verify rates ("sign verify") of three runs of
# `openssl speed ALG`, read from the line matching LINE; best of three, as ours are (this VM's CPU
# steal moves single runs by a third).
openssl_best() {
  local runs; runs=$(for _ in 1 2 3; do openssl speed -seconds 1 "$1" 2>/dev/null | awk -v line="$2" '$0 ~ line {print $(NF-1), $NF}'; done)
  echo "$(echo "$runs" | awk '{print $1}' | sort -n | tail -1) $(echo "$runs" | awk '{print $2}' | sort -n | tail -1)"
}
FLOOR_MEDIANS=""
# median VALUES…: the middle value (the mean of the two middle ones for an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {if (NR % 2) printf "%.2f", v[(NR+1)/2]; else printf "%.2f", (v[NR/2]+v[NR/2+1])/2}'; }
# lowest R1,R2,…: the lowest of comma-separated ratios.
lowest() { tr , '\n' <<< "$1" | sort -g | head -1; }
# highest VALUES…: the highest, as an integer.
highest() { printf '%s\n' "$@" | sort -g | tail -1 | awk '{printf "%d", $1}'; }
# best "ours-command" "reference-command": ROUNDS rounds, each running ours, the reference, the
# reference again and ours again (A B B A), and prints the best rate of each, the median of the
# rounds' ratios and each round's ratio, comma-separated ("a b median r1,r2,…"). A round's ratio
# is its two runs of ours against its two of the reference, by time (the same work each run): this
# VM's CPU steal moves single runs by a third or more, and a drift over a round hits both sides
# alike only in that order. The median of the rounds' ratios is the figure a goal is held to.
# With TURNS (default 1), a round is TURNS turns of A B B A in shorter runs, its ratio the median
# of its turns': this VM's speed moves from one second to the next (single runs of 0.7 s at 60k to
# 135k pushes/s, the code the same), and a turn's runs are close enough in time to share it.
best() {
  local a=0 b=0 x1 y1 y2 x2 ratios=() turns=${3:-1} turned
  for _ in $(seq "$ROUNDS"); do
    turned=()
    for _ in $(seq "$turns"); do
      x1=$(eval "$1"); y1=$(eval "$2"); y2=$(eval "$2"); x2=$(eval "$1")
      a=$(highest "$a" "$x1" "$x2"); b=$(highest "$b" "$y1" "$y2")
      turned+=("$(awk "BEGIN {printf \"%.4f\", (1/$y1 + 1/$y2) / (1/$x1 + 1/$x2)}")")
    done
    ratios+=("$(median "${turned[@]}")")
  done
  echo "$a $b $(median "${ratios[@]}") $(IFS=,; echo "${ratios[*]}")"
}
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(uname -sr), $(swift --version 2>&1 | head -1)"

start_receiver() { # state-dir tls-port cleartext-port → receiver pid in RECEIVER
  "$BIN/push-receiver" devices add --state "$1" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
  : > "$1.log" # emptied here, not by the background start: the wait below must not read a last start's lines
  "$BIN/push-receiver" --certs "$WORK/certs" --state "$1" --sandbox-port "$2" --no-production-listener \
    --cleartext-port "$3" --no-device-gateway > "$1.log" 2>&1 &
  RECEIVER=$!
  for _ in $(seq 100); do grep -q "delivery log:" "$1.log" 2>/dev/null && return; sleep 0.1; done
  echo "push-receiver did not start: $(cat "$1.log")" >&2; exit 1
}
# h1seconds REQUESTS h2load-ARGS…: seconds h2load --h1 takes for REQUESTS, 128 connections one request at
# a time on each, as the SDK's transport holds them (three decimals).
h1seconds() {
  local n=$1; shift
  h2load --h1 -n "$n" -c 128 -m 1 "$@" 2>&1 \
    | awk '/^finished in/ {v=$3; if (v ~ /ms,?$/) {sub(/ms,?/, "", v); v/=1000} else sub(/s,?/, "", v); printf "%.3f", v}'
}
# The sign-in request the floor's HTTP/1.1 exchanges stand for.
FLOOR_REQUEST=/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPhoneNumber?key=AIzaSyA-authsim-local-api-key-0000000
h2rate() { # url requests clients streams → req/s
  h2load -n "$2" -c "$3" -m "$4" -d $PAYLOAD -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" \
    -H "apns-push-type: background" -H "apns-priority: 5" "$1/3/device/$TOKEN" 2>&1 \
    | awk '/^finished in/ {gsub(",","",$4); print $4}'
}
# h2rate_ticks PID FILE url requests clients streams → req/s, and the CPU ticks (user + system, /proc)
# process PID spent meanwhile appended to FILE.
h2rate_ticks() {
  local pid=$1 file=$2 t0 rate; shift 2
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  rate=$(h2rate "$@")
  echo $(( $(awk '{print $14 + $15}' "/proc/$pid/stat") - t0 )) >> "$file"
  echo "$rate"
}
# cpu_rounds A-FILE B-FILE [TURNS]: each round's CPU of B's runs over A's (the same pushes each run;
# two runs a turn), and their median ("median r1,r2,…"): this VM's CPU steal moves rates more than
# the work done.
cpu_rounds() {
  local ratios=() a b n=$((2 * ${3:-1}))
  for r in $(seq "$ROUNDS"); do
    a=$(sed -n "$((n * (r - 1) + 1)),$((n * r))p" "$1" | awk '{s += $1} END {print s}')
    b=$(sed -n "$((n * (r - 1) + 1)),$((n * r))p" "$2" | awk '{s += $1} END {print s}')
    ratios+=("$(awk "BEGIN {printf \"%.2f\", $b / $a}")")
  done
  echo "$(median "${ratios[@]}") $(IFS=,; echo "${ratios[*]}")"
}
JWT=$("$BIN/apns-sender" --print-token --certs "$WORK/certs")
mkdir -p "$WORK/www/3/device" && echo ok > "$WORK/www/3/device/$TOKEN"
nghttpd --no-tls -d "$WORK/www" 24299 > /dev/null 2>&1 &
nghttpd -d "$WORK/www" 24298 "$WORK/certs/server-key.pem" "$WORK/certs/server.pem" > /dev/null 2>&1 &
sleep 0.5

if [ "$WHAT" = all ] || [ "$WHAT" = receiver ]; then
  start_receiver "$WORK/state-r" 24197 24199
  echo; echo "### push-receiver (full validation) vs nghttpd: h2load -n $PUSHES -c 4 -m 100, background pushes, best of $((2 * ROUNDS)) runs each, $ROUNDS rounds taking turns A B B A"
  echo "| transport | push-receiver req/s | nghttpd req/s | ratio of bests | median ratio |"; echo "|---|---|---|---|---|"
  read -r a b m rounds < <(best "h2rate http://127.0.0.1:24199 $PUSHES 4 100" "h2rate http://127.0.0.1:24299 $PUSHES 4 100")
  echo "| cleartext h2 | $a | $b | $(ratio $a $b)× | ${m}× |"
  read -r a b m rounds < <(best "h2rate https://127.0.0.1:24197 $PUSHES 4 100" "h2rate https://127.0.0.1:24298 $PUSHES 4 100")
  echo "| TLS (ALPN h2) | $a | $b | $(ratio $a $b)× | ${m}× |"
  kill $RECEIVER; wait $RECEIVER 2>/dev/null || true
  echo "(delivery log: $(grep -vc '^{"authsim-format"' "$WORK/state-r/deliveries.jsonl") lines for $((4 * ROUNDS * PUSHES)) pushes answered)"
  # The same receiver with its device gateway (every accepted push handed to the device side,
  # as push-receiver runs by default), beside it alone, taking turns.
  start_receiver "$WORK/state-a" 24787 24789
  ALONE=$RECEIVER
  "$BIN/push-receiver" devices add --state "$WORK/state-w" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
  "$BIN/push-receiver" --certs "$WORK/certs" --state "$WORK/state-w" --sandbox-port 24797 --no-production-listener --device-port 0 \
    > "$WORK/state-w.log" 2>&1 &
  GATEWAY=$!
  for _ in $(seq 100); do grep -q "delivery log:" "$WORK/state-w.log" 2>/dev/null && break; sleep 0.1; done
  # Rounds five times as long as the others: the gateway costs less than this VM's speed moves, and
  # the goal holds it in every round. A round is GATEWAY_TURNS (10) turns A B B A of half-length
  # runs, its ratio the median of its turns' (best, above).
  GPUSHES=$((5 * PUSHES / GATEWAY_TURNS))
  echo; echo "### push-receiver with its device gateway vs push-receiver alone: h2load -n $GPUSHES -c 4 -m 100 over TLS, best of $((2 * ROUNDS * GATEWAY_TURNS)) runs each, $ROUNDS rounds of $GATEWAY_TURNS turns A B B A"
  echo "| | req/s (best) | ratio of bests | median ratio | each round | lowest round |"; echo "|---|---|---|---|---|---|"
  read -r a b m rounds < <(best "h2rate_ticks $GATEWAY $WORK/ticks-gateway https://127.0.0.1:24797 $GPUSHES 4 100" \
    "h2rate_ticks $ALONE $WORK/ticks-alone https://127.0.0.1:24787 $GPUSHES 4 100" "$GATEWAY_TURNS")
  read -r cm crounds < <(cpu_rounds "$WORK/ticks-gateway" "$WORK/ticks-alone" "$GATEWAY_TURNS")
  echo "| push-receiver alone (--no-device-gateway) | $b | 1.00× | 1.00× | | |"
  echo "| push-receiver with its device gateway (the default) | $a | $(ratio $a $b)× | ${m}× | ${rounds//,/× · }× | $(lowest "$rounds")× |"
  echo "(the receiver's CPU per push, alone's over the gateway's, its /proc ticks: ${cm}× median; rounds ${crounds//,/× · }×)"
  kill $ALONE $GATEWAY; wait $ALONE $GATEWAY 2>/dev/null || true
fi

if [ "$WHAT" = all ] || [ "$WHAT" = inspector ]; then
  # The inspector must never hold up the receiver: the same pushes into push-receiver with its
  # device gateway (what serve runs, without the inspector), into authsim serve (the inspector
  # records every push), with an SSE client (curl) on the live stream, and with a real browser
  # (headless Chromium) showing the live list.
  "$BIN/push-receiver" devices add --state "$WORK/state-i" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
  "$BIN/push-receiver" --certs "$WORK/certs" --state "$WORK/state-i" --sandbox-port 24597 --no-production-listener --device-port 0 \
    > "$WORK/state-i.log" 2>&1 &
  RECEIVER=$!
  "$BIN/authsim" serve --state "$WORK/state-serve" --certs "$WORK/certs" --sandbox-port 24697 --production-port 0 \
    --device-port 24698 --backend-port 0 --ui-port 24600 > "$WORK/serve.log" 2>&1 &
  SERVE=$!
  for _ in $(seq 100); do grep -q "delivery log:" "$WORK/state-i.log" 2>/dev/null && grep -q "Ctrl-C stops" "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
  curl -s -X POST http://127.0.0.1:24698/devices -d "{\"environment\":\"sandbox\",\"bundleID\":\"$TOPIC\",\"token\":\"$TOKEN\"}" > /dev/null
  bestof() { local best=0 x; for _ in $(seq "$ROUNDS"); do x=$(eval "$1"); best=$(awk "BEGIN {printf \"%d\", ($x > $best) ? $x : $best}"); done; echo $best; }
  echo; echo "### push-receiver (with its device gateway) vs authsim serve, watched and not: h2load -n $PUSHES -c 4 -m 100 over TLS, best of $ROUNDS"
  alone=$(bestof "h2rate https://127.0.0.1:24597 $PUSHES 4 100")
  served=$(bestof "h2rate https://127.0.0.1:24697 $PUSHES 4 100")
  curl -sN http://127.0.0.1:24600/api/v1/events > "$WORK/sse.txt" &
  CURL=$!
  sleep 0.3
  streamed=$(bestof "h2rate https://127.0.0.1:24697 $PUSHES 4 100")
  kill $CURL; wait $CURL 2>/dev/null || true
  PROFILE=$(mktemp -d)
  chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$PROFILE" --remote-debugging-port=0 http://127.0.0.1:24600/ > /dev/null 2>&1 &
  BROWSER=$!
  for _ in $(seq 100); do curl -s http://127.0.0.1:24600/metrics | grep -q "authsim_inspector_subscribers 1" && break; sleep 0.1; done
  watched=$(bestof "h2rate https://127.0.0.1:24697 $PUSHES 4 100")
  kill $BROWSER; wait $BROWSER 2>/dev/null || true; sleep 0.5; rm -rf "$PROFILE" 2>/dev/null || true
  echo "| | req/s | ratio to push-receiver |"; echo "|---|---|---|"
  echo "| push-receiver with its device gateway | $alone | 1.00× |"
  echo "| authsim serve (the inspector records every push) | $served | $(ratio $served $alone)× |"
  echo "| authsim serve, curl on /api/v1/events | $streamed | $(ratio $streamed $alone)× |"
  echo "| authsim serve, headless Chromium showing the live list | $watched | $(ratio $watched $alone)× |"
  kill $RECEIVER $SERVE; wait $RECEIVER $SERVE 2>/dev/null || true
fi

if [ "$WHAT" = all ] || [ "$WHAT" = sender ]; then
  N=$([ $QUICK = 1 ] && echo 20000 || echo 100000)
  echo; echo "### apns-sender into nghttpd (a sink that answers 200), beside h2load into the same sink: $N pushes, best of $((2 * ROUNDS)) runs each, $ROUNDS rounds taking turns A B B A"
  echo "| sink | apns-sender pushes/s | h2load req/s | ratio of bests | median ratio |"; echo "|---|---|---|---|---|"
  sender() { "$BIN/apns-sender" $PAYLOAD --token $TOKEN --topic $TOPIC --certs "$WORK/certs" --count "$1" \
      --concurrency 400 --connections 4 --json --quiet "${@:2}" | tail -1 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["pushesPerSecond"]))'; }
  read -r a b m rounds < <(best "sender $N --cleartext --port 24299" "h2rate http://127.0.0.1:24299 $N 4 100")
  echo "| nghttpd --no-tls | $a | $b | $(ratio $a $b)× | ${m}× |"
  read -r a b m rounds < <(best "sender $N --port 24298" "h2rate https://127.0.0.1:24298 $N 4 100")
  echo "| nghttpd (TLS) | $a | $b | $(ratio $a $b)× | ${m}× |"
  if python3 -c "import aioapns" 2>/dev/null; then
    M=$([ $QUICK = 1 ] && echo 5000 || echo 20000)
    start_receiver "$WORK/state-s" 24397 24399
    echo; echo "### apns-sender vs aioapns (PyPI), both into push-receiver over TLS: $M pushes"
    echo "| client | pushes/s | ratio |"; echo "|---|---|---|"
    a=$(sender $M --port 24397)
    b=$(python3 Benchmarks/aioapns_bulk.py "$WORK/certs" 24397 $TOPIC $TOKEN $M 100 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["pushesPerSecond"]))')
    echo "| apns-sender | $a | $(ratio $a $b)× |"; echo "| aioapns 4.0 | $b | 1.00× |"
    kill $RECEIVER; wait $RECEIVER 2>/dev/null || true
  else
    echo "(aioapns not installed: pip install aioapns, for the sender-vs-aioapns figure)"
  fi
fi

if [ "$WHAT" = all ] || [ "$WHAT" = rs256 ]; then
  echo; echo "### RS256 (2048-bit), one thread: the backend's signer (libcrypto) and swift-crypto vs openssl speed rsa2048"
  read -r rsign rboring rverify rtoken < <("$BIN/authsim" bench rs256 --seconds 3 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sign"], d["signBoringSSL"], d["verify"], d["idToken"])')
  read -r orsign orverify < <(openssl_best rsa2048 '^rsa 2048')
  echo "| operation | ours /s | openssl /s | ratio |"; echo "|---|---|---|---|"
  echo "| sign (libcrypto's EVP_DigestSign, as the backend signs ID tokens) | $rsign | ${orsign%.*} | $(ratio $rsign $orsign)× |"
  echo "| sign (swift-crypto's BoringSSL, for comparison) | $rboring | ${orsign%.*} | $(ratio $rboring $orsign)× |"
  echo "| verify (swift-crypto) | $rverify | ${orverify%.*} | $(ratio $rverify $orverify)× |"
  echo "| whole Firebase ID token: claims, base64url, RS256 | $rtoken | | $(ratio $rtoken $orsign)× of openssl's sign |"
fi

if [ "$WHAT" = all ] || [ "$WHAT" = es256 ]; then
  echo; echo "### ES256, one thread: swift-crypto (as apns-sender and push-receiver use it) vs openssl speed ecdsap256"
  read -r sign verify tsign tverify < <("$BIN/authsim" bench es256 --seconds 3 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sign"], d["verify"], d["tokenSign"], d["tokenVerify"])')
  read -r osign overify < <(openssl_best ecdsap256 'nistp256')
  echo "| operation | ours /s | openssl /s | ratio |"; echo "|---|---|---|---|"
  echo "| sign | $sign | ${osign%.*} | $(ratio $sign $osign)× |"
  echo "| verify | $verify | ${overify%.*} | $(ratio $verify $overify)× |"
  echo "| whole provider token: sign (header, claims, base64url, ES256) | $tsign | | $(ratio $tsign $osign)× of openssl's sign |"
  echo "| whole provider token: strict verify | $tverify | | $(ratio $tverify $overify)× of openssl's verify |"
fi

# The SDK's wait for the push (verifyClient's suggestedTimeout) in the sign-in rows, and in their floor.
SUGGESTED_TIMEOUT=5
flows() { "$BIN/authsim" bench flows --json --suggested-timeout $SUGGESTED_TIMEOUT "$@" | tail -1; }
# floor_table SILENT-JSON RECAPTCHA-JSON: what each path's sign-ins cost at the least on this machine,
# done by C tools, beside ours. Per sign-in, counted from the run itself (bench flows' JSON): one RS256
# signature (the ID token) and one verification (getAccountInfo checks it) at `openssl speed -multi
# <cores>`'s rates; the backend requests the flow made, as HTTP/1.1 exchanges by h2load into nginx
# (128 connections, one request at a time on each, as the SDK's transport holds them, bodies of the
# SDK's mean sizes; the reCAPTCHA page counts as one, without its TLS); the pushes, by h2load into
# nghttpd over TLS. On the reCAPTCHA path, the suggestedTimeout the SDK waits for a push that
# never comes, and only the work after it: however the work before the waits is spread, no sign-in's
# code request starts before that wait ends. Each part uses every core; they run one after another.
floor_table() {
  local ngx="$WORK/nginx" part
  mkdir -p "$ngx"
  python3 - "$ngx" <<'PY'
import json, sys
folder = sys.argv[1]
# Mean sizes of the five bodies of a silent-push sign-in as the SDK sends them and the backend answers.
answer = json.dumps({"kind": "identitytoolkit#Answer", "localId": "x" * 28, "sessionInfo": "s" * 200, "expiresIn": "3600", "pad": "p" * 30})
open(folder + "/answer.json", "w").write(answer)
open(folder + "/request.json", "w").write(json.dumps({"phoneNumber": "+16505550101", "iosReceipt": "r" * 150, "code": "123456", "sessionInfo": "s" * 180}))
open(folder + "/nginx.conf", "w").write("""worker_processes 1;
daemon off;
pid %s/nginx.pid;
error_log %s/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path %s/body;
  server { listen 127.0.0.1:24900; location / { default_type "application/json; charset=UTF-8"; return 200 '%s'; } }
}
""" % (folder, folder, folder, answer))
PY
  nginx -e "$ngx/error.log" -p "$ngx" -c "$ngx/nginx.conf" &
  local NGINX=$!
  # Ours, not another nginx on the port: it would answer the check, and not be ours to stop. nginx
  # writes its pid file once it listens.
  for _ in $(seq 100); do [ "$(cat "$ngx/nginx.pid" 2>/dev/null)" = "$NGINX" ] && break; kill -0 $NGINX 2>/dev/null || break; sleep 0.1; done
  { [ "$(cat "$ngx/nginx.pid" 2>/dev/null)" = "$NGINX" ] && curl -s -o /dev/null http://127.0.0.1:24900/; } \
    || { echo "nginx did not start on 127.0.0.1:24900: $(cat "$ngx/error.log" 2>/dev/null)" >&2; exit 1; }
  read -r msign mverify < <(openssl speed -multi "$(nproc)" -seconds 2 rsa2048 2>/dev/null | awk '/^rsa 2048/ {print $(NF-1), $NF}')
  echo "| path | signatures s | HTTP/1.1 exchanges s | pushes s | waited s | floor s | ours s (fastest) | ours ÷ floor | median ours ÷ floor |"; echo "|---|---|---|---|---|---|---|---|---|"
  local medians=($FLOOR_MEDIANS) index=0
  for part in "$1" "$2"; do
    # On the reCAPTCHA path only what follows the wait counts: the work before it (recaptchaConfig,
    # verifyClient, the push that is lost) can be done while other sign-ins wait.
    read -r path flows_n wall exchanges pushes wait < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1]); waits = d["path"] == "recaptcha"
before = {"recaptchaConfig", "verifyClient"} if waits else set()
exchanges = sum(n for endpoint, n in d["requestsPerFlow"].items() if endpoint not in before)
print(d["path"], d["flows"], d["wallSeconds"], round(exchanges * d["flows"]), 0 if waits else round(d["pushesPerFlow"] * d["flows"]), sys.argv[2] if waits else 0)' "$part" $SUGGESTED_TIMEOUT)
    local sign exch push
    sign=$(awk "BEGIN {printf \"%.2f\", $flows_n / $msign + $flows_n / $mverify}")
    exch=$(printf %.2f "$(h1seconds "$exchanges" -d "$ngx/request.json" -H 'content-type: application/json' "http://127.0.0.1:24900$FLOOR_REQUEST")")
    push=0.00
    [ "$pushes" -gt 0 ] && push=$(awk "BEGIN {printf \"%.2f\", $pushes / $(h2rate https://127.0.0.1:24298 "$pushes" 4 100)}")
    local total; total=$(awk "BEGIN {printf \"%.2f\", $sign + $exch + $push + $wait}")
    [ "$path" = silent-push ] && { SILENT_EXCHANGES=$exchanges; SILENT_SIGN=$sign; SILENT_PUSH=$push; SILENT_FLOOR=$total; }
    echo "| $path | $sign | $exch | $push | $wait | $total | $(printf %.2f "$wall") | $(ratio "$wall" "$total")× | $(ratio "${medians[$index]:-$wall}" "$total")× |"
    index=$((index + 1))
  done
  echo "(openssl speed -multi $(nproc) rsa2048: ${msign%.*} signs/s, ${mverify%.*} verifies/s in all)"
  layers_table "$ngx"
  kill $NGINX; wait $NGINX 2>/dev/null || true
}
# layers_table NGINX-FOLDER: the silent-push run's HTTP/1.1 exchanges, as many, layer by layer: each
# of our servers (bare SwiftNIO, Hummingbird as the backend serves it, the backend) loaded by h2load,
# each of our clients (bare SwiftNIO, the apps' NIOHTTP1Transport) loading nginx, and the pairs the
# sign-ins would run; median of ROUNDS, the layers taking turns. The last lines put each pair in the
# floor's place: what the silent-push row could reach at best on that stack.
layers_table() {
  local ngx="$1" n=$SILENT_EXCHANGES l servers=()
  for l in nio hummingbird backend; do
    "$BIN/authsim" bench http1-server --layer $l --body "$ngx/answer.json" > "$ngx/$l.log" 2>&1 &
    servers+=($!)
  done
  for l in nio hummingbird backend; do
    for _ in $(seq 100); do grep -q "listening on" "$ngx/$l.log" && break; sleep 0.1; done
    grep -q "listening on" "$ngx/$l.log" || { echo "authsim bench http1-server --layer $l did not start: $(cat "$ngx/$l.log")" >&2; exit 1; }
  done
  address() { sed -n 's/^listening on \([^,]*\), path \(.*\)$/\1\2/p' "$ngx/$1.log"; }
  local up=$FLOOR_REQUEST
  h1() { h1seconds "$n" "$@"; }
  ours() { "$BIN/authsim" bench http1-client --requests "$n" --connections 128 --json "$@" | python3 -c 'import json,sys; print("%.3f" % json.loads(sys.stdin.readlines()[-1])["seconds"])'; }
  local names=("nginx ← h2load (the floor's exchanges)" "SwiftNIO alone ← h2load" "Hummingbird's router, as the backend serves it ← h2load"
    "nginx, GET ← h2load" "the backend, GET recaptchaConfig ← h2load" "nginx ← SwiftNIO alone" "nginx ← NIOHTTP1Transport (the apps', from tasks)"
    "SwiftNIO alone ← SwiftNIO alone" "Hummingbird's router ← NIOHTTP1Transport")
  local commands=("h1 -d $ngx/request.json http://127.0.0.1:24900$up" "h1 -d $ngx/request.json http://$(address nio)$up"
    "h1 -d $ngx/request.json http://$(address hummingbird)$up" "h1 http://127.0.0.1:24900$(address backend | sed 's|^[^/]*||')"
    "h1 'http://$(address backend)'" "ours --body $ngx/request.json http://127.0.0.1:24900$up"
    "ours --layer transport --body $ngx/request.json http://127.0.0.1:24900$up" "ours --body $ngx/request.json http://$(address nio)$up"
    "ours --layer transport --body $ngx/request.json http://$(address hummingbird)$up")
  local -a runs
  for _ in $(seq "$ROUNDS"); do
    for i in "${!commands[@]}"; do runs[$i]="${runs[$i]:-} $(eval "${commands[$i]}")"; done
  done
  local -a med
  for i in "${!commands[@]}"; do
    # shellcheck disable=SC2086
    med[$i]=$(median ${runs[$i]})
  done
  echo; echo "### The same $n HTTP/1.1 exchanges layer by layer: 128 connections, one request at a time on each (median of $ROUNDS, the layers taking turns)"
  echo "| server ← client | s | ÷ nginx ← h2load |"; echo "|---|---|---|"
  for i in "${!commands[@]}"; do
    local base=${med[0]}; [ "$i" = 4 ] && base=${med[3]}
    echo "| ${names[$i]} | ${med[$i]} | $(ratio "${med[$i]}" "$base")× |"
  done
  echo "(the GET rows beside each other: the backend's cheapest route, its API key checked and its JSON written, against nginx's fixed answer)"
  local bare hb
  bare=$(awk "BEGIN {printf \"%.2f\", $SILENT_SIGN + ${med[7]} + $SILENT_PUSH}")
  hb=$(awk "BEGIN {printf \"%.2f\", $SILENT_SIGN + ${med[8]} + $SILENT_PUSH}")
  echo "(the silent-push floor with its exchanges on SwiftNIO alone at both ends: $bare s, $(ratio "$bare" "$SILENT_FLOOR")× the floor; on Hummingbird and NIOHTTP1Transport: $hb s, $(ratio "$hb" "$SILENT_FLOOR")×; nothing else of a sign-in counted)"
  kill "${servers[@]}"; wait "${servers[@]}" 2>/dev/null || true
}
row() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("| %s | %d | %.2f | %d | %.0f | %.0f | %.0f | %d | %d |" % (d["path"], d["flows"], d["wallSeconds"], d["flows"]/d["wallSeconds"], d["p50ms"], d["p99ms"], d["peakMB"], d["recaptchas"], d["failures"]))' "$1"; }
if [ "$WHAT" = all ] || [ "$WHAT" = flows ]; then
  N=$([ $QUICK = 1 ] && echo 2000 || echo 10000)
  echo; echo "### Whole sign-ins, $N simulated devices at once, every part in one process (APNs latency 250 ms, suggestedTimeout $SUGGESTED_TIMEOUT s)"
  echo "| path | flows | wall s | flows/s | p50 ms | p99 ms | peak MB | via reCAPTCHA | failed |"; echo "|---|---|---|---|---|---|---|---|---|"
  # ROUNDS runs of each path, taking turns; the table shows the fastest, the floor the median too.
  SILENT=""; RECAPTCHA=""; SILENT_WALLS=(); RECAPTCHA_WALLS=()
  wall() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["wallSeconds"])' "$1"; }
  faster() { python3 -c 'import json,sys; a, b = sys.argv[1], sys.argv[2]; print(b if not a or json.loads(b)["wallSeconds"] < json.loads(a)["wallSeconds"] else a)' "$1" "$2"; }
  for _ in $(seq "$ROUNDS"); do
    x=$(flows --count $N); SILENT_WALLS+=("$(wall "$x")"); SILENT=$(faster "$SILENT" "$x")
    x=$(flows --count $N --path recaptcha); RECAPTCHA_WALLS+=("$(wall "$x")"); RECAPTCHA=$(faster "$RECAPTCHA" "$x")
  done
  row "$SILENT"; row "$RECAPTCHA"
  echo "(fastest of $ROUNDS runs each, taking turns; wall s of every run: silent push ${SILENT_WALLS[*]}, reCAPTCHA ${RECAPTCHA_WALLS[*]})"
  if command -v nginx >/dev/null; then
    echo; echo "### The floor of the same sign-ins: the work none can skip, by reference tools in this command"
    FLOOR_MEDIANS="$(median "${SILENT_WALLS[@]}") $(median "${RECAPTCHA_WALLS[@]}")"
    floor_table "$SILENT" "$RECAPTCHA"
  else
    echo "(nginx not installed: apt-get install nginx-light, for the sign-ins' floor)"
  fi
fi

if [ "$WHAT" = all ] || [ "$WHAT" = growth ]; then
  echo; echo "### Growth: pushes through push-receiver (h2load -c 4 -m 100, TLS) and sign-ins (1,000 in flight)"
  echo "| pushes | seconds | req/s | receiver peak RSS MB | delivery log lines |"; echo "|---|---|---|---|---|"
  SIZES=$([ $QUICK = 1 ] && echo "1000 10000" || echo "1000 10000 100000")
  for n in $SIZES 1000000; do
    [ $QUICK = 1 ] && [ $n = 1000000 ] && continue
    rm -rf "$WORK/state-g"; start_receiver "$WORK/state-g" 24597 24599
    s=$(date +%s.%N); r=$(h2rate https://127.0.0.1:24597 $n 4 100); e=$(date +%s.%N)
    peak=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$RECEIVER/status)
    kill $RECEIVER; wait $RECEIVER 2>/dev/null || true
    echo "| $n | $(awk "BEGIN {printf \"%.2f\", $e-$s}") | $r | $peak | $(grep -vc '^{"authsim-format"' "$WORK/state-g/deliveries.jsonl") |"
  done
  # Sign-ins, each device retired after its own: what stays is the backend's. "heap" is malloc's
  # memory in use (malloc_info); "once lifetimes pass", after the backend's clock jumped two hours
  # and it dropped what expired (bench flows does both after the run).
  echo
  echo "| sign-ins | numbers | wall s | peak RSS MB | heap at the end MB | heap once lifetimes pass MB | users kept | failed |"; echo "|---|---|---|---|---|---|---|---|"
  growth_row() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("| %d | %s | %.2f | %.0f | %.1f | %.1f | %d | %d |" % (d["flows"], sys.argv[2], d["wallSeconds"], d["peakMB"], d["heapMB"], d["heapAfterExpiryMB"], d["users"], d["failures"]))' "$1" "$2"; }
  after() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["heapAfterExpiryMB"])' "$1"; }
  declare -A NEW REPEAT
  for n in $SIZES; do
    NEW[$n]=$(flows --count $n --concurrency 1000); growth_row "${NEW[$n]}" "each new"
  done
  for n in $SIZES; do
    [ $n -lt 10000 ] && continue
    REPEAT[$n]=$(flows --count $n --concurrency 1000 --numbers 1000); growth_row "${REPEAT[$n]}" "1,000, again and again"
  done
  LOW=10000; HIGH=$(echo $SIZES | awk '{print $NF}')
  if [ "$HIGH" != "$LOW" ]; then
    awk -v a="$(after "${NEW[$LOW]}")" -v b="$(after "${NEW[$HIGH]}")" -v c="$(after "${REPEAT[$LOW]}")" -v d="$(after "${REPEAT[$HIGH]}")" -v n=$((HIGH - LOW)) \
      'BEGIN {printf "(once lifetimes pass, from %d to %d sign-ins: %.0f bytes per user kept; %.0f bytes per finished sign-in of a returning user)\n", '"$LOW"', '"$HIGH"', (b-a)*1048576/n, (d-c)*1048576/n}'
  fi
fi

# The backend as a fleet on one PostgreSQL (docs/fleet.md): a server of its own in $WORK (fsync on,
# as a real database's; a Unix socket only), a new database per row.
if [ "$WHAT" = all ] || [ "$WHAT" = fleet ] || [ "$WHAT" = fleet-pushes ]; then
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$PGBIN" ]; then
    echo; echo "### Fleet: skipped (no PostgreSQL: apt-get install postgresql)"
  else
    AS=(); PGDIR="$WORK/pg"; mkdir -p "$PGDIR"
    # As root, PostgreSQL runs as nobody, who must be able to reach its folder.
    if [ "$(id -u)" = 0 ]; then chmod 711 "$WORK"; chown 65534:65534 "$PGDIR"; AS=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
    "${AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -U authsim --auth=trust -E UTF8 --locale=C >/dev/null
    "${AS[@]}" "$PGBIN/postgres" -D "$PGDIR/data" -k "$PGDIR" -c listen_addresses= > "$PGDIR.log" 2>&1 &
    PGPID=$!
    for _ in $(seq 100); do grep -q "ready to accept connections" "$PGDIR.log" 2>/dev/null && break; sleep 0.1; done
    N=$([ $QUICK = 1 ] && echo 1000 || echo 4000)
    fleet() { "$BIN/authsim" bench fleet --json --count $N "$@" | tail -1; }
    db() { "$PGBIN/psql" -X -q -h "$PGDIR" -U authsim -d postgres -c "CREATE DATABASE $1" && echo "postgres://authsim@/$1?host=$PGDIR"; }
    frow() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("| %s%s | %d | %d | %.2f | %d | %d | %.0f | %.0f | %d |" % (d["store"], sys.argv[2], d["nodes"], d["signIns"], d["wallSeconds"], d["signInsPerSecond"], d["changesPerSecond"], d["p50ms"], d["p99ms"], d["failures"]))' "$1" "${2:-}"; }
    if [ "$WHAT" != fleet-pushes ]; then
    echo; echo "### Fleet: $N phone sign-ins over HTTP (64 at once), each code requested from one node and checked on the next"
    echo "| store | nodes | sign-ins | wall s | sign-ins/s | changes/s | p50 ms | p99 ms | failed |"; echo "|---|---|---|---|---|---|---|---|---|"
    frow "$(fleet)"
    frow "$(fleet --store "$(db fleet1)")"
    frow "$(fleet --store "$(db fleet2)" --nodes 2)"
    frow "$(fleet --store "$(db fleet4)" --nodes 4)"

    # CPU per sign-in at 1, 2 and 4 nodes: what the nodes (authsim: the nodes and the clients that
    # load them, in one process) and PostgreSQL spend, from a run of N less a run of 40 (the same
    # start, connections and stop). Cores cannot hide it: a design whose nodes repeat each other's
    # work costs more per sign-in as nodes are added. From the one-node row, the rate every core
    # of this machine would give at that cost.
    pgticks() { local t=0 p; for p in $PGPID $(pgrep -P $PGPID); do t=$((t + $(awk '{print $14+$15+$16+$17}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $t; }
    cpurun() {  # COUNT NODES IN-FLIGHT TABLE -> "authsim-cpu-s postgres-cpu-s sign-ins/s"
      local url p0 out p1 name="fleetcpu$1n$2c$3t$4"; url=$(db "$name"); p0=$(pgticks)
      out=$( { time -p "$BIN/authsim" bench fleet --json --count $1 --nodes $2 --concurrency $3 --store "$url" | tail -1; } 2>&1 )
      # Its connections' backends end after it: counted once the postmaster has reaped them.
      for _ in $(seq 50); do [ "$("$PGBIN/psql" -X -A -t -h "$PGDIR" -U authsim -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$name'")" = 0 ] && break; sleep 0.1; done
      p1=$(pgticks)
      echo "$out" | awk -v pg=$(( p1 - p0 )) -v tck=$(getconf CLK_TCK) '/^user|^sys/ {cpu += $2} /^\{/ {match($0, /"signInsPerSecond":[0-9.]+/); rate = substr($0, RSTART + 19, RLENGTH - 19)} END {print cpu, pg / tck, rate}'
    }
    # Two loads: 64 in flight in all (each node's batches shrink as nodes are added), and 64 per
    # node (the same batches: what replaying, or not, each other's work shows). Each node count
    # runs twice, in the order 1 2 4 4 2 1, so that a drift of this VM's speed over the table hits
    # every row alike (single runs of the one-node row have moved by 15 %); a row is its two runs'.
    for per_node in 0 1; do
      if [ $per_node = 0 ]; then what="64 in flight in all"; else what="64 in flight per node"; fi
      echo; echo "### Fleet: CPU per sign-in by the number of nodes, $what (runs of $N less runs of 40, twice each in the order 1 2 4 4 2 1; all nodes in one process)"
      echo "| nodes | authsim (nodes and clients) ms per sign-in | PostgreSQL ms per sign-in | both | ÷ one node | sign-ins/s |"; echo "|---|---|---|---|---|---|"
      declare -A CA=() CP=() CR=()
      for nodes in 1 2 4 4 2 1; do
        inflight=$([ $per_node = 1 ] && echo $((64 * nodes)) || echo 64)
        turn=$([ -n "${CR[$nodes]:-}" ] && echo b || echo a) # each run a database of its own
        read -r A0 P0 _ <<< "$(cpurun 40 $nodes $inflight $per_node$turn)"; read -r A1 P1 RATE <<< "$(cpurun $N $nodes $inflight $per_node$turn)"
        CA[$nodes]=$(awk -v s=${CA[$nodes]:-0} -v a0=$A0 -v a1=$A1 'BEGIN {print s + a1 - a0}')
        CP[$nodes]=$(awk -v s=${CP[$nodes]:-0} -v p0=$P0 -v p1=$P1 'BEGIN {print s + p1 - p0}')
        CR[$nodes]="${CR[$nodes]:-} $RATE"
      done
      ONE=""
      for nodes in 1 2 4; do
        read -r a p rate <<< "$(awk -v a=${CA[$nodes]} -v p=${CP[$nodes]} -v n=$N -v rates="${CR[$nodes]}" 'BEGIN {split(rates, r, " "); printf "%.4f %.4f %.0f", a / (2 * (n - 40)) * 1000, p / (2 * (n - 40)) * 1000, (r[1] + r[2]) / 2}')"
        [ -z "$ONE" ] && { ONE=$(awk -v a=$a -v p=$p 'BEGIN {print a + p}'); ONE_RATE=$rate; }
        awk -v a=$a -v p=$p -v one=$ONE -v nodes=$nodes -v rate=$rate 'BEGIN {printf "| %d | %.3f | %.3f | %.3f | %.2f× | %.0f |\n", nodes, a, p, a + p, (a + p) / one, rate}'
      done
      unset CA CP CR
    done
    awk -v one=$ONE -v rate=$ONE_RATE -v cores=$(nproc) 'BEGIN {c = cores / one * 1000; printf "(every core at one node'"'"'s cost: %.0f sign-ins/s, %.2f× of one node'"'"'s rate on %d cores)\n", c, c / rate, cores}'
    fi

    # Pushes: push-receiver alone (deliveries.jsonl) beside receivers keeping their pushes in the
    # fleet's database (--store), h2load on cleartext; with two receivers, one h2load each at once.
    P=$([ $QUICK = 1 ] && echo 50000 || echo 200000)
    receiver_at() { # name cleartext-port [--store URL --node-name N] → pid in RPID
      # With --store the registry is the fleet's: the device goes into the store (once is enough).
      if [ "${3:-}" = --store ]; then where=(--store "$4"); else where=(--state "$WORK/$1"); fi
      "$BIN/push-receiver" devices add "${where[@]}" --environment sandbox --bundle $TOPIC --token $TOKEN >/dev/null
      : > "$WORK/$1.log" # as in start_receiver
      "$BIN/push-receiver" --certs "$WORK/certs" --state "$WORK/$1" --sandbox-port 0 --no-production-listener --no-device-gateway \
        --cleartext-port "$2" "${@:3}" > "$WORK/$1.log" 2>&1 &
      RPID=$!
      for _ in $(seq 100); do grep -q "^connections:" "$WORK/$1.log" 2>/dev/null && return; sleep 0.1; done
      echo "push-receiver did not start: $(cat "$WORK/$1.log")" >&2; exit 1
    }
    # One receiver of each kind, A B B A as the receiver's rows take turns (this VM's speed moves
    # single runs by a fifth): the ratio a goal is held to is the median of the rounds'.
    echo; echo "### Fleet: $P pushes into push-receiver (h2load -c 4 -m 100, cleartext), alone and keeping them in the fleet's database; best of $((2 * ROUNDS)) runs each, $ROUNDS rounds taking turns A B B A"
    echo "| delivery log | receivers | pushes kept | req/s (all receivers) |"; echo "|---|---|---|---|"
    receiver_at fleet-file 24901; F=$RPID
    url=$(db fleetp1); receiver_at fleet-pg 24902 --store "$url" --node-name a; G=$RPID
    read -r PG_RATE FILE_RATE PG_MEDIAN PG_ROUNDS < <(best "h2rate http://127.0.0.1:24902 $P 4 100" "h2rate http://127.0.0.1:24901 $P 4 100")
    kill $F $G; wait $F $G 2>/dev/null || true
    echo "| deliveries.jsonl | 1 | $(grep -vc '^{"authsim-format"' "$WORK/fleet-file/deliveries.jsonl") | $FILE_RATE |"
    KEPT=$("$PGBIN/psql" -X -A -t -h "$PGDIR" -U authsim -d fleetp1 -c 'SELECT count(*) FROM receiver_deliveries')
    echo "| PostgreSQL | 1 | $KEPT | $PG_RATE |"
    # PostgreSQL's own floor for these rows (a receiver's batches of pushes, a row each): one run's
    # share of them copied back in with one COPY (one transaction, nothing else running; best of
    # ROUNDS), counted in the pushes they hold. A push kept costs PostgreSQL at least 1/floor of a
    # core, and the receiver with h2load what the file row took of both cores (2/file rate), so on
    # two shared cores no receiver keeps more than 1 / (1 + file rate / (2 × floor)) of the file's rate.
    "$PGBIN/psql" -X -q -h "$PGDIR" -U authsim -d fleetp1 -c "\\copy (SELECT node, device_tokens, lines FROM receiver_delivery_batches ORDER BY id LIMIT (SELECT count(*) / $((2 * ROUNDS)) FROM receiver_delivery_batches)) TO '$WORK/rows.tsv'" \
      -c "CREATE TABLE floor_rows (LIKE receiver_delivery_batches INCLUDING ALL)"
    FLOOR=0 COPIED=0
    for _ in $(seq "$ROUNDS"); do # best of ROUNDS, each after a checkpoint (the rows just kept leave one due)
      "$PGBIN/psql" -X -q -h "$PGDIR" -U authsim -d fleetp1 -c "TRUNCATE floor_rows" -c "CHECKPOINT"
      s=$(date +%s.%N); "$PGBIN/psql" -X -q -h "$PGDIR" -U authsim -d fleetp1 -c "\\copy floor_rows (node, device_tokens, lines) FROM '$WORK/rows.tsv'"; e=$(date +%s.%N)
      [ "$COPIED" = 0 ] && COPIED=$("$PGBIN/psql" -X -A -t -h "$PGDIR" -U authsim -d fleetp1 -c "SELECT sum(cardinality(string_to_array(lines, E'\\n'))) FROM floor_rows")
      FLOOR=$(awk "BEGIN {f = $COPIED/($e-$s); printf \"%d\", (f > $FLOOR) ? f : $FLOOR}")
    done
    echo "| PostgreSQL alone: one COPY of one run's rows, best of $ROUNDS (its floor) | – | $COPIED | $FLOOR |"
    url=$(db fleetp2); receiver_at fleet-pg-a 24903 --store "$url" --node-name a --threads 1; A=$RPID
    receiver_at fleet-pg-b 24904 --store "$url" --node-name b --threads 1; B=$RPID
    s=$(date +%s.%N); h2rate http://127.0.0.1:24903 $((P / 2)) 4 100 > "$WORK/ra" & h2rate http://127.0.0.1:24904 $((P / 2)) 4 100 > "$WORK/rb"; wait %%  2>/dev/null || true; e=$(date +%s.%N)
    kill $A $B; wait $A $B 2>/dev/null || true
    echo "| PostgreSQL | 2 | $("$PGBIN/psql" -X -A -t -h "$PGDIR" -U authsim -d fleetp2 -c 'SELECT count(*) FROM receiver_deliveries') | $(awk "BEGIN {printf \"%d\", $P/($e-$s)}") |"
    awk -v f="$FILE_RATE" -v c="$FLOOR" -v m="$PG_MEDIAN" -v r="$PG_ROUNDS" 'BEGIN {gsub(",", ", ", r); printf "(one receiver keeping in PostgreSQL: %.2f× of the file, the median of the rounds (%s); the bound PostgreSQL'"'"'s floor puts on two shared cores: %.2f×)\n", m, r, 1/(1+f/(2*c))}'
  fi
fi
