#!/usr/bin/env bash
# Builds the DocC documentation of the main libraries with the toolchain's own `docc` (no SwiftPM
# plugin) and fails on any warning.
#
#   scripts/docs.sh [MODULE ...]      default: every library product of Package.swift
#
# 1. Symbol graphs: `swift build --target MODULE` with `-emit-symbol-graph`, in a scratch path of
#    its own (.build/docs-build) so that the extra compiler flags never invalidate the normal build.
# 2. `docc convert Sources/MODULE/MODULE.docc` with that module's graphs (its own and its
#    extensions of other modules, `MODULE@Other`), into .build/docs/MODULE.doccarchive.
#
# Any `warning:` or `error:` from docc (an unresolved ``symbol`` link, a topic that names nothing,
# an undocumented parameter in a documented list) is printed and makes the script exit 1.
# Browse an archive with `docc preview Sources/MODULE/MODULE.docc --additional-symbol-graph-dir
# .build/docs-build/symbol-graphs/MODULE`, or serve it from any static web server.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -gt 0 ]]; then
    modules=("$@")
else
    # Every library product has a catalog: its name is its one target's name.
    mapfile -t modules < <(grep -oE '\.library\(name: "[A-Za-z0-9]+"' Package.swift | sed -E 's/.*"([A-Za-z0-9]+)"/\1/')
fi
scratch=.build/docs-build
graphs=$scratch/symbol-graphs
output=.build/docs

build_graphs() {
    mkdir -p "$graphs/all"
    for module in "${modules[@]}"; do
        swift build --scratch-path "$scratch" --target "$module" \
            -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs/all" >/dev/null
    done
}

for module in "${modules[@]}"; do
    if [[ ! -d Sources/$module/$module.docc ]]; then
        echo "error: Sources/$module/$module.docc does not exist" >&2
        exit 1
    fi
done

echo "Building symbol graphs (${modules[*]})"
build_graphs
# A module that was already up to date is not recompiled, so a graph deleted since is not written
# again: start the scratch build afresh once when one is missing.
for module in "${modules[@]}"; do
    if [[ ! -f $graphs/all/$module.symbols.json ]]; then
        echo "Symbol graph of $module missing; rebuilding $scratch from scratch"
        rm -rf "$scratch"
        build_graphs
        break
    fi
done

mkdir -p "$output"
findings=0
for module in "${modules[@]}"; do
    rm -rf "${graphs:?}/$module"
    mkdir -p "$graphs/$module"
    cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
    for extension in "$graphs/all/$module"@*.symbols.json; do
        [[ -e $extension ]] && cp "$extension" "$graphs/$module/"
    done
    log=$(mktemp)
    status=0
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "RMStore.$module" \
        --output-path "$output/$module.doccarchive" >"$log" 2>&1 || status=$?
    count=$(grep -cE "(warning|error):" "$log" || true)
    if [[ $status -ne 0 || $count -ne 0 ]]; then
        cat "$log" >&2
        echo "$module: $count warning(s) or error(s), docc exit status $status" >&2
        findings=$((findings + count + (status != 0)))
    else
        echo "$module: 0 warnings → $output/$module.doccarchive"
    fi
    rm -f "$log"
done

if [[ $findings -ne 0 ]]; then
    echo "docs.sh: $findings finding(s)" >&2
    exit 1
fi
echo "docs.sh: ${#modules[@]} archives, 0 warnings"
