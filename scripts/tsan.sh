#!/usr/bin/env bash
# Runs the concurrency suites under ThreadSanitizer, in their own build directory (.build-tsan).
# Fails on any test failure and on any ThreadSanitizer report, even one that does not fail a test.
#
# The suites: every suite whose type name contains "ConcurrencyTests" (ConcurrencyTests, ReliabilityConcurrencyTests,
# HubConcurrencyTests, RelayConcurrencyTests: several threads posting through one relay),
# the coders shared between threads (CoderThreadingTests), and the failure-hook race, which lives in the serialized
# HandleDefaultCenterTests because it replaces the global failure handler.
set -euo pipefail
cd "$(dirname "$0")/.."

filter='ConcurrencyTests|CoderThreadingTests|HandleDefaultCenterTests/concurrency'
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "tsan.sh: swift test --sanitize=thread --filter '$filter'"
# halt_on_error makes the first report fatal, so a report can never go unnoticed in a passing run.
status=0
# scripts/tsan.supp holds the one false report that Foundation's uninstrumented NotificationCenter causes, with why.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp ${TSAN_OPTIONS:-}" \
    nice -n 19 swift test --sanitize=thread --scratch-path .build-tsan --filter "$filter" 2>&1 | tee "$log" \
    || status=$?
if grep -q "WARNING: ThreadSanitizer" "$log"; then
    echo "tsan.sh: ThreadSanitizer reported a problem (see above)" >&2
    exit 1
fi
if [[ $status -ne 0 ]]; then
    echo "tsan.sh: the test run failed with status $status" >&2
    exit "$status"
fi
if ! grep -qE "Test run with [1-9][0-9]* tests? .*passed" "$log"; then
    echo "tsan.sh: no test ran; check the filter" >&2
    exit 1
fi
echo "tsan.sh: clean"
