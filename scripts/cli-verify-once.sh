#!/usr/bin/env bash
# cli-verify-once (issue 26): the wall time of one `receipt-tool verify` process on one receipt and
# on one JWS (bundled Apple roots, at the input's signed date), the median of RUNS processes each.
# Every process starts from nothing (no chain cache survives a process), so this is what a CLI
# user or a shell script pays per input. The inputs (and, with BASELINE, the two binaries) are run
# alternately, so load on a shared machine falls on all alike. Each process must exit 0 (the
# inputs verify), or the script stops.
#
# Usage: scripts/cli-verify-once.sh [receipt.der] [token.jws]
#        (defaults: TestReceipts/receipt-sandbox-g5.der and
#         TestReceipts/jws/gopay/sandbox-transaction-2000000184445477.jws)
# Environment: RUNS (101), TOOL (a receipt-tool binary to measure instead of this checkout's
#              release build, which is built here unless NO_BUILD=1), BASELINE (another
#              receipt-tool binary, for example an earlier commit's, measured in the same loop)
set -euo pipefail
cd "$(dirname "$0")/.."
receipt=${1:-TestReceipts/receipt-sandbox-g5.der}
token=${2:-TestReceipts/jws/gopay/sandbox-transaction-2000000184445477.jws}
runs=${RUNS:-101}
if [ -n "${TOOL:-}" ]; then
    tool=$TOOL
else
    [ "${NO_BUILD:-0}" = 1 ] || swift build -c release --product receipt-tool > /dev/null
    tool=.build/release/receipt-tool
fi
tools=("$tool")
[ -z "${BASELINE:-}" ] || tools+=("$BASELINE")
for t in "${tools[@]}"; do
    "$t" verify "$receipt" > /dev/null
    "$t" verify "$token" > /dev/null
done

# Nanoseconds of one process.
once() {
    local start end
    start=$(date +%s%N)
    "$1" verify "$2" > /dev/null
    end=$(date +%s%N)
    echo $((end - start))
}

declare -A times
for _ in $(seq "$runs"); do
    for i in "${!tools[@]}"; do
        times[$i,receipt]+="$(once "${tools[$i]}" "$receipt") "
        times[$i,token]+="$(once "${tools[$i]}" "$token") "
    done
done
median() { printf '%s\n' $1 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for i in "${!tools[@]}"; do
    for input in receipt token; do
        file=$receipt
        [ "$input" = token ] && file=$token
        printf '{"name":"cli-verify-once","tool":"%s","input":"%s","ns_per_op":%s,"runs":%s}\n' \
            "${tools[$i]}" "$file" "$(median "${times[$i,$input]}")" "$runs"
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
