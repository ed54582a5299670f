#!/usr/bin/env bash
# Builds the DocC documentation of every module that has a catalog, with no package plugin:
#   1. `swift-symbolgraph-extract` reads the symbol graphs of the library targets (public symbols only) from the
#      package's debug build (.build), which it makes first only if a module is missing there;
#   2. a check fails, listing them, if any public symbol declared in Sources/ has no doc comment of its own
#      (the compiler copies a protocol requirement's comment onto an undocumented implementation; that does not count;
#      scripts/doc-comment-check.py, which scripts/build-integration-docs.sh runs too);
#   3. `docc convert --warnings-as-errors` builds each catalog, so a broken symbol link or a malformed page fails.
#
# Usage: scripts/build-docs.sh [output-dir]     (default: .build-docs/site; the archives land in <output-dir>/<Module>.doccarchive)
# Environment: DOCC (default: docc on PATH, else /opt/swift/usr/bin/docc), SWIFT (default: swift).
# The PostgreSQL integration's catalog is built by scripts/build-integration-docs.sh, from the build that
# scripts/postgres.sh makes (no second build of that package).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
scratch="$root/.build-docs"
graphs="$scratch/symbol-graphs"
output="${1:-$scratch/site}"
swift=${SWIFT:-swift}
docc=${DOCC:-$(command -v docc || echo /opt/swift/usr/bin/docc)}

# Modules to document: every library target under Sources/ whose folder holds a Documentation.docc catalog.
# The Notificatable catalog is required.
modules=()
for catalog in Sources/*/Documentation.docc; do
    [ -d "$catalog" ] && modules+=("$(basename "$(dirname "$catalog")")")
done
if [ ! -d Sources/Notificatable/Documentation.docc ]; then
    echo "error: Sources/Notificatable/Documentation.docc is missing" >&2
    exit 1
fi

# The graphs are read from the package's own debug build (.build, which CI has made by now: the test run) with
# `swift-symbolgraph-extract`, so documenting compiles nothing again; a module missing from that build is built
# there first (debug, that module only).
rm -rf "$graphs"
mkdir -p "$graphs"
modules_dir="$root/.build/debug/Modules"
for module in "${modules[@]}"; do
    if [ ! -e "$modules_dir/$module.swiftmodule" ]; then
        echo "==> swift build --target $module (no debug build of it in .build yet)"
        "$swift" build --target "$module"
    fi
done
triple=$("$swift" -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
extract=$(command -v swift-symbolgraph-extract || echo "$(dirname "$(command -v "$swift")")/swift-symbolgraph-extract")
echo "==> swift-symbolgraph-extract (from .build: ${modules[*]})"
for module in "${modules[@]}"; do
    "$extract" -module-name "$module" -target "$triple" -I "$modules_dir" \
        -minimum-access-level public -emit-extension-block-symbols \
        -module-cache-path "$scratch/module-cache" -output-dir "$graphs"
done

echo "==> public symbols without a doc comment"
python3 "$root/scripts/doc-comment-check.py" "$graphs" "$root/Sources"

mkdir -p "$output"
for module in "${modules[@]}"; do
    echo "==> docc convert $module"
    module_graphs="$scratch/symbol-graphs-$module"
    rm -rf "$module_graphs"
    mkdir -p "$module_graphs"
    # The module's own graph and its extension graphs (`Module@Foundation.symbols.json` and the like).
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    cp "$graphs/$module"@*.symbols.json "$module_graphs/" 2>/dev/null || true
    "$docc" convert "Sources/$module/Documentation.docc" \
        --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.notificatable.$module" \
        --output-path "$output/$module.doccarchive" \
        --warnings-as-errors
done
echo "==> documentation built in $output"
