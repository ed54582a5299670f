#!/usr/bin/env bash
# Builds the notificatable-leakcheck workload (in the package's debug build, .build: CI runs this right after its plain
# `swift build`, so nothing is compiled again; LEAKS_SCRATCH_PATH names another build directory) and runs it under Valgrind's
# leak checker. Any "definitely lost" block fails the run, unless scripts/valgrind.supp suppresses it (runtime and
# Foundation allocations only, each with its reason). "Possibly lost" and "still reachable" blocks are the runtime's
# metadata caches and thread stacks, made once per process, and are reported but not fatal.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="${LEAKS_SCRATCH_PATH:-.build}"
echo "leaks.sh: building notificatable-leakcheck ($scratch)"
nice -n 19 swift build --scratch-path "$scratch" --product notificatable-leakcheck
binary="$(swift build --scratch-path "$scratch" --show-bin-path)/notificatable-leakcheck"

echo "leaks.sh: valgrind --leak-check=full --errors-for-leak-kinds=definite $binary"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
nice -n 19 valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --error-exitcode=3 --num-callers=40 --suppressions=scripts/valgrind.supp "$binary" > "$log" 2>&1 || status=$?
grep -E "leakcheck:|definitely lost|indirectly lost|possibly lost:|still reachable|suppressed:|ERROR SUMMARY" "$log" \
    | sed 's/^==[0-9]*== */  /'
if [[ $status -ne 0 ]]; then
    cat "$log" >&2
    echo "leaks.sh: FAILED (status $status): see the definitely lost blocks above" >&2
    exit 1
fi
if ! grep -q "definitely lost: 0 bytes in 0 blocks" "$log"; then
    # With every definite loss suppressed, Valgrind prints no "definitely lost" line at all, which is fine;
    # a line with a non-zero count would have failed above.
    grep -q "definitely lost:" "$log" && { cat "$log" >&2; echo "leaks.sh: FAILED" >&2; exit 1; }
fi
echo "leaks.sh: no definite leaks"
