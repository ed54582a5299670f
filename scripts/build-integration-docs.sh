#!/usr/bin/env bash
# Builds the DocC catalog of the PostgreSQL integration (Integrations/NotificatablePostgres/Sources/
# NotificatablePostgres/Documentation.docc) from the debug build that scripts/postgres.sh already made, with no
# second build of the package:
#   1. `swift-symbolgraph-extract` reads the built NotificatablePostgres.swiftmodule (public symbols only), with the
#      search paths the build used (read from the build's llbuild manifest, .build/debug.yaml);
#   2. the same check as scripts/build-docs.sh fails, listing them, if a public symbol declared in the integration's
#      Sources/ has no doc comment of its own;
#   3. `docc convert --warnings-as-errors` builds the catalog, so a broken symbol link or a malformed page fails.
# Only when the package has no debug build yet (say, on a developer's machine) does it build the library target
# (debug, into the same .build that scripts/postgres.sh uses, so that build is reused afterwards).
#
# Usage: scripts/build-integration-docs.sh [output-dir]   (default: .build-docs/site; the archive lands in
#        <output-dir>/NotificatablePostgres.doccarchive)
# Environment: DOCC (default: docc on PATH, else /opt/swift/usr/bin/docc), SWIFT (default: swift).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
package="$root/Integrations/NotificatablePostgres"
module=NotificatablePostgres
scratch="$package/.build"
work="$root/.build-docs/integration"
output="${1:-$root/.build-docs/site}"
swift=${SWIFT:-swift}
docc=${DOCC:-$(command -v docc || echo /opt/swift/usr/bin/docc)}
started=$(date +%s)

built() { [ -f "$scratch/debug.yaml" ] && [ -e "$scratch/debug/Modules/$module.swiftmodule" ]; }
if ! built; then
    echo "==> no debug build of $module in $scratch: building the library target (debug)"
    "$swift" build --package-path "$package" --scratch-path "$scratch" --target "$module"
fi

# The flags the build compiled the module with that tell the extractor where its dependencies' modules are: the
# -I search paths, the module maps of the C targets (-Xcc -fmodule-map-file=…), -Xcc -I, and the target triple.
mapfile -t flags < <(python3 - "$scratch/debug.yaml" "$module" <<'PY'
import json, re, sys

manifest, module = sys.argv[1], sys.argv[2]
found = None
for line in open(manifest):
    line = line.strip()
    # A compile command's arguments are one JSON-style list on one line: `args: ["…","…"]` or
    # `other-args: [...]`.
    match = re.match(r'^(?:other-)?args:\s*(\[.*\])$', line)
    if not match:
        continue
    try:
        args = json.loads(match.group(1))
    except ValueError:
        continue
    for index, arg in enumerate(args[:-1]):
        if arg == "-module-name" and args[index + 1] == module:
            found = args
            break
    if found:
        break
if not found:
    sys.exit(f"error: no compile command for {module} in {manifest}")
keep, index = [], 0
while index < len(found):
    arg = found[index]
    if arg in ("-I", "-F", "-target", "-sdk", "-resource-dir") and index + 1 < len(found):
        keep += [arg, found[index + 1]]
        index += 2
        continue
    if arg == "-Xcc" and index + 1 < len(found):
        value = found[index + 1]
        if value == "-I" and index + 3 < len(found) and found[index + 2] == "-Xcc":
            keep += [arg, value, "-Xcc", found[index + 3]]
            index += 2
        elif value.startswith(("-fmodule-map-file=", "-I", "-D")):
            keep += [arg, value]
        index += 2
        continue
    if arg.startswith(("-I", "-F")) and len(arg) > 2:
        keep.append(arg)
    index += 1
print("\n".join(keep))
PY
)

graphs="$work/symbol-graphs"
rm -rf "$graphs"
mkdir -p "$graphs"
echo "==> swift symbolgraph-extract $module (from the existing debug build)"
extract=$(command -v swift-symbolgraph-extract || echo "$(dirname "$(command -v "$swift")")/swift-symbolgraph-extract")
"$extract" -module-name "$module" "${flags[@]}" \
    -minimum-access-level public -emit-extension-block-symbols -skip-inherited-docs \
    -module-cache-path "$work/module-cache" -output-dir "$graphs"

echo "==> public symbols without a doc comment ($module)"
python3 "$root/scripts/doc-comment-check.py" "$graphs" "$package/Sources"

mkdir -p "$output"
echo "==> docc convert $module"
# The module's own graph and its extension graphs (`NotificatablePostgres@Logging.symbols.json` and the like);
# the graphs of the modules it re-exports are not documented here.
"$docc" convert "$package/Sources/$module/Documentation.docc" \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.notificatable.$module" \
    --output-path "$output/$module.doccarchive" \
    --warnings-as-errors
echo "==> $module documentation built in $output/$module.doccarchive ($(( $(date +%s) - started )) s)"
