#!/usr/bin/env bash
# Line coverage of Sources/ from the test suite.
#
#   scripts/coverage.sh                 runs `swift test --enable-code-coverage`, then reports
#   scripts/coverage.sh --reuse         reports on the profile of the last coverage run, without testing again
#   scripts/coverage.sh --min 90        fails (exit 2) if the line coverage of Sources/Notificatable and
#                                       Sources/NotificatableRelay together is below 90%
#   scripts/coverage.sh --files         also lists every function of those two libraries below 100% lines
#
# It prints `llvm-cov report` for Sources/ (tests and .build are ignored), then one line:
#   Notificatable + NotificatableRelay line coverage: NN.N%
# Extra arguments after `--` go to `swift test` (for example `-- --parallel`).
set -euo pipefail

cd "$(dirname "$0")/.."
reuse=0
minimum=""
functions=0
test_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --reuse) reuse=1 ;;
        --min) minimum="$2"; shift ;;
        --files) functions=1 ;;
        --) shift; test_args=("$@"); break ;;
        *) echo "usage: $0 [--reuse] [--min PERCENT] [--files] [-- swift-test-args…]" >&2; exit 64 ;;
    esac
    shift
done

if [ "$reuse" -eq 0 ]; then
    swift test --enable-code-coverage ${test_args[@]+"${test_args[@]}"}
fi

bin=$(swift build --show-bin-path)
profile="$bin/codecov/default.profdata"
# The test bundle: an executable named *.xctest on Linux, a bundle with the executable inside on macOS.
tests=$(find "$bin" -maxdepth 1 -name '*PackageTests.xctest' | head -n 1)
if [ -d "$tests" ]; then tests="$tests/Contents/MacOS/$(basename "$tests" .xctest)"; fi
if [ ! -f "$profile" ] || [ -z "$tests" ]; then
    echo "error: no coverage data in $bin; run without --reuse first" >&2
    exit 1
fi
# The llvm-cov that ships with the Swift toolchain reads its profile format; a system llvm-cov may not.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
if [ -x "$toolchain_bin/llvm-cov" ]; then
    llvm_cov="$toolchain_bin/llvm-cov"
elif command -v xcrun > /dev/null; then
    llvm_cov=$(xcrun --find llvm-cov)
else
    llvm_cov=$(command -v llvm-cov)
fi

root=$(pwd)
ignore='(/\.build[^/]*/|/Tests/|/Fixtures/|^/usr/|/swift/)'

"$llvm_cov" report "$tests" -instr-profile "$profile" -ignore-filename-regex "$ignore" "$root/Sources"

if [ "$functions" -eq 1 ]; then
    echo
    echo "Functions of Sources/Notificatable and Sources/NotificatableRelay below 100% line coverage (lines missed / lines):"
    "$llvm_cov" report "$tests" -instr-profile "$profile" -ignore-filename-regex "$ignore" \
        -show-functions "$root/Sources/Notificatable" "$root/Sources/NotificatableRelay" \
        | awk '/^File / { file = $2; gsub(/[\x27:]/, "", file); sub(".*/Sources/", "", file) }
               $1 !~ /^(Name|File|-|TOTAL)/ && NF >= 10 && $(NF-4) > 0 {
                   printf "  %4d / %-4d %s  %s\n", $(NF-4), $(NF-5), file, $1 }' \
        | sort -rn | head -n 40 | { if [ -x "$toolchain_bin/swift-demangle" ]; then
              "$toolchain_bin/swift-demangle" --simplified; else cat; fi; }
fi

# The TOTAL row of the two libraries the minimum guards, Sources/Notificatable and Sources/NotificatableRelay: columns are regions, missed, cover, functions, missed, executed,
# lines, missed lines, line cover, branches…
total=$("$llvm_cov" report "$tests" -instr-profile "$profile" -ignore-filename-regex "$ignore" \
    "$root/Sources/Notificatable" "$root/Sources/NotificatableRelay" | awk '/^TOTAL/ { print $8, $9 }')
read -r lines missed <<< "$total"
percent=$(awk -v l="$lines" -v m="$missed" 'BEGIN { printf "%.1f", (l > 0 ? 100 * (l - m) / l : 0) }')
echo
echo "Notificatable + NotificatableRelay line coverage: $percent%"

if [ -n "$minimum" ] && awk -v p="$percent" -v min="$minimum" 'BEGIN { exit !(p < min) }'; then
    echo "error: line coverage $percent% is below the minimum of $minimum%" >&2
    exit 2
fi
