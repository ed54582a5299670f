#!/usr/bin/env bash
# Runs every ```sh command of README.md's section "From the device to a test" (the notificatable-fixtures steps), in
# order, from the package root; any failing command fails the script. `.ci/run` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

commands=$(awk '
    /^### From the device to a test$/ { inside = 1; next }
    inside && /^##/ { inside = 0 }
    inside && /^```sh$/ { block = 1; next }
    block && /^```$/ { block = 0; next }
    block { print }
' README.md)
[ -n "$commands" ] || { echo "README.md: no sh commands in the section \"From the device to a test\""; exit 1; }
while IFS= read -r command; do
    [ -n "$command" ] || continue
    printf '$ %s\n' "$command"
    bash -c "$command"
done <<< "$commands"
