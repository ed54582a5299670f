#!/usr/bin/env bash
# Builds and tests the Combine adapter (Sources/Notificatable/Adapters/Notificatable+Combine.swift) against
# OpenCombine, through the CI-only package in Tests/CombineCheck. The root package never depends on OpenCombine.
#
# Usage: scripts/check-combine.sh [extra `swift test` arguments]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# SwiftPM keeps the build plan of a path dependency (the root package) in the scratch path and does not notice source
# files added to it later, which then fail to resolve ("cannot find type … in scope"). Dropping the plan makes it
# plan again; the compiled objects stay, so this costs no rebuild.
rm -f "$root/.build-combine/debug.yaml" "$root"/.build-combine/*/debug/description.json
exec swift test \
    --package-path Tests/CombineCheck \
    --scratch-path "$root/.build-combine" \
    "$@"
