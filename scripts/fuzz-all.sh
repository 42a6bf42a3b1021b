#!/usr/bin/env bash
# Run every fuzz target for SECONDS each, one after another, and print one summary line per
# target (executions, executions per second, coverage, result). Logs go to fuzz-out/<target>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
mkdir -p fuzz-out
status=0
for target in $(scripts/fuzz.sh --list); do
    log="fuzz-out/$target.log"
    if scripts/fuzz.sh "$target" "$seconds" >"$log" 2>&1; then result=ok; else result=FAILED; status=1; fi
    done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$done_line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$done_line" | sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    echo "$target: ${seconds}s, $execs execs, $rate exec/s, cov $cov, ft $ft, corpus $corp: $result"
done
exit $status
