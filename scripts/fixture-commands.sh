#!/usr/bin/env bash
# Runs every ```sh command of the DocC article "From the Device to a Test" (the notificatable-fixtures steps:
# show, scaffold, check), in order, from the package root; any failing command fails the script. `.ci/run` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

article=Sources/NotificatableTesting/Documentation.docc/FromTheDeviceToATest.md
commands=$(awk '
    /^```sh$/ { block = 1; next }
    block && /^```$/ { block = 0; next }
    block { print }
' "$article")
[ -n "$commands" ] || { echo "$article: no sh commands"; exit 1; }
while IFS= read -r command; do
    [ -n "$command" ] || continue
    printf '$ %s\n' "$command"
    bash -c "$command"
done <<< "$commands"
