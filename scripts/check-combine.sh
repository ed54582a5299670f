#!/usr/bin/env bash
# Builds and tests the Combine adapter (Sources/Notificatable/Adapters/Notificatable+Combine.swift) against
# OpenCombine, through the CI-only package in Tests/CombineCheck. The root package never depends on OpenCombine.
#
# Usage: scripts/check-combine.sh [extra `swift test` arguments]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
exec swift test \
    --package-path Tests/CombineCheck \
    --scratch-path "$root/.build-combine" \
    "$@"
