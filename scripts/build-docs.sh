#!/usr/bin/env bash
# Builds the DocC documentation of every module that has a catalog, with no package plugin:
#   1. `swift build` emits the symbol graphs of the library targets (public symbols only);
#   2. a check fails, listing them, if any public symbol declared in Sources/ has no doc comment of its own
#      (the compiler copies a protocol requirement's comment onto an undocumented implementation; that does not count);
#   3. `docc convert --warnings-as-errors` builds each catalog, so a broken symbol link or a malformed page fails.
#
# Usage: scripts/build-docs.sh [output-dir]     (default: .build-docs/site; the archives land in <output-dir>/<Module>.doccarchive)
# Environment: DOCC (default: docc on PATH, else /opt/swift/usr/bin/docc), SWIFT (default: swift).
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

# The compiler writes a module's graph only when it compiles the module, so the graphs stay in the scratch path
# between runs; a module whose graph is missing anyway is rebuilt from scratch.
mkdir -p "$graphs"
echo "==> swift build (symbol graphs for: ${modules[*]})"
# One build per target keeps the flags simple; SwiftPM reuses the scratch path, so the second is incremental.
for module in "${modules[@]}"; do
    "$swift" build --scratch-path "$scratch" --target "$module" \
        -Xswiftc -emit-symbol-graph \
        -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
        -Xswiftc -emit-extension-block-symbols \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
    if [ ! -f "$graphs/$module.symbols.json" ]; then
        rm -rf "$scratch"/*-*-*/debug "$scratch"/debug
        "$swift" build --scratch-path "$scratch" --target "$module" \
            -Xswiftc -emit-symbol-graph \
            -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
            -Xswiftc -emit-extension-block-symbols \
            -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
    fi
done

echo "==> public symbols without a doc comment"
python3 - "$graphs" "$root/Sources" <<'PY'
import glob, json, os, sys

graphs, sources = sys.argv[1], os.path.realpath(sys.argv[2])
missing = []
for path in sorted(glob.glob(os.path.join(graphs, "*.symbols.json"))):
    graph = json.load(open(path))
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        # `extension DispatchQueue: NotificationDeliveryQueue {}` is not a declaration of its own.
        if symbol["kind"]["identifier"] == "swift.extension":
            continue
        location = symbol.get("location", {}).get("uri", "")
        file = location.removeprefix("file://")
        # Only symbols declared in our sources: synthesized members (`!=`, `localizedDescription`) have no
        # location of ours and carry the standard library's comment.
        if not os.path.realpath(file).startswith(sources + os.sep):
            continue
        comment = symbol.get("docComment")
        # A comment copied from a protocol requirement (`hash(into:)` without a comment of its own gets
        # Hashable's) points at another file or at none.
        if comment is None or comment.get("uri") != location:
            line = symbol["location"]["position"]["line"] + 1
            title = ".".join(symbol["pathComponents"])
            missing.append(f"{os.path.relpath(file)}:{line}: {symbol['kind']['displayName'].lower()} {title}")
for entry in sorted(set(missing)):
    print(f"error: public symbol without a doc comment: {entry}")
if missing:
    sys.exit(f"{len(set(missing))} public symbol(s) lack a doc comment")
print("every public symbol has a doc comment")
PY

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
