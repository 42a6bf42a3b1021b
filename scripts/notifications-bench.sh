#!/usr/bin/env bash
# Acknowledged notifications per second and fsyncs per notification, SQLite and PostgreSQL, with 1
# and 16 concurrent senders, through the real receiver (outer and two nested JWS verified, then a
# durable commit). Each configuration runs twice in processes of its own: once as it is, for
# notifications per second, and once under
#   strace -f -c -e trace=fsync,fdatasync
# (tracing slows every thread down, so its rate is not reported), which counts every fsync and fdatasync of the process and its children (the PostgreSQL
# cluster the benchmark starts included, with its startup and shutdown). For PostgreSQL the
# benchmark also reads pg_stat_wal.wal_sync before and after the measured window: the WAL syncs
# its commits cost, without startup noise.
#
#   scripts/notifications-bench.sh [COUNT]     (default 2000 notifications per configuration)
#
# Needs strace (apt-get install strace) and, for PostgreSQL, the server binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
swift build -c release --product Benchmarks >/dev/null
bench=$(swift build -c release --show-bin-path)/Benchmarks
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-9s %7s %8s %12s %10s %14s %12s\n' store senders count "ack/s" commits "fsyncs/notif" "walsync/notif"
for store in sqlite postgres; do
    for senders in 1 16; do
        line=$("$bench" --notifications "$store" "$senders" "$count")
        strace -f -c -o "$out/strace" -e trace=fsync,fdatasync "$bench" --notifications "$store" "$senders" "$count" >/dev/null
        syncs=$(awk '$NF == "fsync" || $NF == "fdatasync" { total += $4 } END { print total + 0 }' "$out/strace")
        field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        printf '%-9s %7s %8s %12s %10s %14s %12s\n' "$store" "$senders" "$count" "$(field acknowledged_per_s)" "$(field commits)" \
            "$(awk -v s="$syncs" -v n="$count" 'BEGIN { printf "%.3f", s / n }')" "$(field wal_syncs_per_notification)"
    done
done
