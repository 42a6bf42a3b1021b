#!/usr/bin/env bash
# Fuzz one target with libFuzzer (AddressSanitizer + LeakSanitizer on).
#
#   scripts/fuzz.sh --list              print the target names, one a line
#   scripts/fuzz.sh TARGET SECONDS      build (once) and fuzz TARGET for SECONDS
#
# Seeds: every file in TestReceipts/ (recursively) plus Fuzz/corpus/TARGET/, which also receives
# the new interesting inputs. Exits non-zero on any crash, leak, timeout or out-of-memory;
# libFuzzer writes the failing input to fuzz-out/TARGET/. Copy it into Fuzz/corpus/regressions/
# (replayed by `swift test`) when it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

targets="asn1-der asn1-ber envelope payload detect verify plist legacy-verify jws jws-verify http certificate public-key"
# Targets that need the verification modules are added by the FuzzTargets module itself;
# ask the driver for the authoritative list when it is built.
if [ "${1:-}" = "--list" ]; then
    if [ -x .build/debug/Fuzz ]; then .build/debug/Fuzz --list | sed -n 's/^targets: //p' | tr ' ' '\n'; else echo "$targets" | tr ' ' '\n'; fi
    exit 0
fi
if [ $# -ne 2 ]; then
    echo "usage: scripts/fuzz.sh --list | TARGET SECONDS" >&2
    exit 64
fi
target=$1
seconds=$2

scratch=.build/fuzz
swift build --scratch-path "$scratch" --product Fuzz --sanitize fuzzer \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING >&2
binary="$scratch/debug/Fuzz"

corpus="Fuzz/corpus/$target"
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
mkdir -p "$corpus" "fuzz-out/$target"
find TestReceipts -type f -size -2M -exec cp {} "$seeds/" \; 2>/dev/null || true

export FUZZ_TARGET="$target"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
set +e
"$binary" "$corpus" "$seeds" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
    -artifact_prefix="fuzz-out/$target/" -print_final_stats=1
status=$?
set -e
if [ $status -ne 0 ]; then
    echo "fuzz.sh: $target failed (status $status); inputs in fuzz-out/$target/" >&2
    exit $status
fi
echo "fuzz.sh: $target ran ${seconds}s without a crash, leak or timeout" >&2
