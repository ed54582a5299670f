#!/usr/bin/env bash
# The reliability checks that CI runs after `swift test` (which runs the property-based tests):
#   1. scripts/tsan.sh      the concurrency suites under ThreadSanitizer (.build-tsan)
#   2. scripts/fuzz.sh 25   the libFuzzer target for 25 seconds (.build-fuzz); RELIABILITY_FUZZ_SECONDS overrides
#   3. scripts/leaks.sh     the leak-check workload under Valgrind (.build); RELIABILITY_SKIP_LEAKS=1 skips it (CI runs
#                           it right after its plain build, before the coverage build recompiles .build)
# Prints each step and how long it took; stops at the first failure with a non-zero status.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds="${RELIABILITY_FUZZ_SECONDS:-25}"
start=$SECONDS

step() {
    local name="$1"
    shift
    echo "==> reliability: $name"
    local began=$SECONDS
    if ! "$@"; then
        echo "==> reliability: $name FAILED after $((SECONDS - began))s" >&2
        exit 1
    fi
    echo "==> reliability: $name passed in $((SECONDS - began))s"
}

step "ThreadSanitizer on the concurrency suites" scripts/tsan.sh
step "fuzzing the decoder for ${fuzz_seconds}s" scripts/fuzz.sh "$fuzz_seconds"
if [ -z "${RELIABILITY_SKIP_LEAKS:-}" ]; then step "Valgrind leak check" scripts/leaks.sh; fi
echo "==> reliability: all checks passed in $((SECONDS - start))s"
