#!/usr/bin/env bash
# Side-by-side rates of one receipt, verified in-process and through `receipt-tool serve`:
#
#   verify (DER):   receipt-tool verify r.der r.der … --jobs 2 --json   (N times the receipt file:
#                   the in-process rate the issue compares against; no JSON, no base64)
#   verify (JSON):  receipt-tool verify - --jobs 2 --json   over N JSON lines {"receipt-data": …},
#                   the very bytes serve receives
#   serve:          wrk (keep-alive, -t1 -c$CONNECTIONS) POSTing that body to /verifyReceipt
#
# The two are measured alternately, ROUNDS times each, in one run (same machine, same load), and
# the medians are compared. Needs a release build (built here unless NO_BUILD=1) and wrk
# (apt-get install wrk).
#
# Usage: scripts/serve-throughput.sh [receipt.der]   (default: TestReceipts/base64encodedreceiptsample1.der)
# Environment: ROUNDS (3), COPIES (20000 arguments for the DER run), LINES (6000 JSON lines),
#              DURATION (5s), CONNECTIONS (8), ENVIRONMENT (sandbox),
#              TOOL (a receipt-tool binary to measure instead of this checkout's release build)
set -euo pipefail
cd "$(dirname "$0")/.."
receipt=${1:-TestReceipts/base64encodedreceiptsample1.der}
rounds=${ROUNDS:-3}
lines=${LINES:-6000}
count=${COPIES:-20000}
duration=${DURATION:-5s}
connections=${CONNECTIONS:-8}
environment=${ENVIRONMENT:-sandbox}
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [ -n "${TOOL:-}" ]; then
    tool=$TOOL
else
    [ "${NO_BUILD:-0}" = 1 ] || swift build -c release --product receipt-tool > /dev/null
    tool=$(swift build -c release --show-bin-path)/receipt-tool
fi

work=$(mktemp -d)
serve_pid=
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
printf '{"receipt-data":"%s"}\n' "$(base64 -w0 "$receipt")" > "$work/body.json"
for _ in $(seq "$lines"); do cat "$work/body.json"; done > "$work/lines.jsonl"
cp "$receipt" "$work/receipt.der"
copies=()
for _ in $(seq "$count"); do copies+=("$work/receipt.der"); done
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = io.open("$work/body.json", "rb")
wrk.body = file:read("*a")
file:close()
LUA

# One answer first: the receipt must verify both ways (status 0 from serve, valid in-process).
"$tool" verify "$receipt" > /dev/null || { echo "the receipt does not verify in-process" >&2; exit 1; }

rate() { echo "$1 / ($3 - $2)" | bc -l; }

in_process_der() {
    local start end
    start=$(date +%s.%N)
    "$tool" verify "${copies[@]}" --jobs 2 --json > /dev/null 2> "$work/verify.err" || true
    end=$(date +%s.%N)
    grep -q "$count receipts: $count valid" "$work/verify.err" || { cat "$work/verify.err" >&2; exit 1; }
    rate "$count" "$start" "$end"
}

in_process_json() {
    local start end
    start=$(date +%s.%N)
    "$tool" verify - --jobs 2 --json < "$work/lines.jsonl" > /dev/null 2> "$work/verify.err" || true
    end=$(date +%s.%N)
    grep -q "$lines receipts: $lines valid" "$work/verify.err" || { cat "$work/verify.err" >&2; exit 1; }
    rate "$lines" "$start" "$end"
}

served() {
    "$tool" serve --port 0 --quiet --environment "$environment" > "$work/serve.out" &
    serve_pid=$!
    local port=
    for _ in $(seq 100); do
        port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.out")
        [ -n "$port" ] && break
        sleep 0.05
    done
    local answer
    answer=$(curl -s --data-binary @"$work/body.json" "http://127.0.0.1:$port/verifyReceipt" | head -c 12)
    [ "$answer" = '{"status":0,' ] || { echo "serve answered: $answer" >&2; exit 1; }
    wrk -t1 -c"$connections" -d"$duration" -s "$work/post.lua" "http://127.0.0.1:$port/verifyReceipt" > "$work/wrk.out"
    kill "$serve_pid"
    wait "$serve_pid" 2> /dev/null || true
    serve_pid=
    grep -q "Non-2xx" "$work/wrk.out" && { cat "$work/wrk.out" >&2; exit 1; }
    awk '/Requests\/sec/ { print $2 }' "$work/wrk.out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

der_rates=()
json_rates=()
serve_rates=()
for round in $(seq "$rounds"); do
    der_rates+=("$(in_process_der)")
    serve_rates+=("$(served)")
    json_rates+=("$(in_process_json)")
    printf 'round %d: verify --jobs 2 (DER) %.0f/s, serve %.0f/s, verify --jobs 2 (JSON lines) %.0f/s\n' \
        "$round" "${der_rates[-1]}" "${serve_rates[-1]}" "${json_rates[-1]}"
done
der=$(printf '%s\n' "${der_rates[@]}" | median)
json=$(printf '%s\n' "${json_rates[@]}" | median)
serve=$(printf '%s\n' "${serve_rates[@]}" | median)
printf 'median of %d rounds, %s:\n' "$rounds" "$(basename "$receipt")"
printf '  verify --jobs 2, DER file        %6.0f receipts/s\n' "$der"
printf '  verify --jobs 2, JSON lines      %6.0f receipts/s\n' "$json"
printf '  serve, keep-alive, %2d connections %6.0f requests/s = %.0f%% of verify (DER), %.0f%% of verify (JSON lines)\n' \
    "$connections" "$serve" "$(echo "100 * $serve / $der" | bc -l)" "$(echo "100 * $serve / $json" | bc -l)"
