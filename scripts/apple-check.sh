#!/usr/bin/env bash
# The Apple-branch check: builds the package on Linux with every platform `#if` in Sources/ and Tests/ taking its
# Apple branch, and runs the whole test suite that way, against the same fixtures as the normal build.
#
#   1. Every platform condition (`canImport(Darwin|UIKit|AppKit|Combine|…)`, `os(…)`, `targetEnvironment(…)`) in
#      Sources/ and Tests/ must either name NOTIFICATABLE_APPLE_CHECK or carry an `// apple-check: <reason>` comment,
#      on its line or on the line above, saying why the flag cannot select it. New platform code cannot slip past.
#   2. `swift test -Xswiftc -DNOTIFICATABLE_APPLE_CHECK` in its own scratch path (.build-apple-check). The shims for what
#      Foundation on Linux lacks are in Sources/Notificatable/AppleCheck/AppleSDKShims.swift and
#      Sources/NotificatableRelay/AppleCheck/AppleSDKShims.swift, compiled only then.
#   3. The suite "Apple-branch check build" (Tests/NotificatableTests/AppleCheckTests.swift, compiled only under the
#      flag) must have passed, which proves that the flag reached every target.
#
# Usage: scripts/apple-check.sh [extra `swift test` arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> platform conditions: each selects the Apple branch under NOTIFICATABLE_APPLE_CHECK, or says why not"
unguarded=$(find Sources Tests -name '*.swift' -not -path 'Tests/CombineCheck/*' -print0 | sort -z | xargs -0 awk '
    FNR == 1 { previous = "" }
    /^[[:space:]]*#(if|elseif)[[:space:]]/ &&
    /(canImport\((Darwin|Glibc|Musl|UIKit|AppKit|WatchKit|Combine|ObjectiveC|os|CoreGraphics)\)|os\(|targetEnvironment\()/ &&
    !/NOTIFICATABLE_APPLE_CHECK/ && !/\/\/ apple-check: / && previous !~ /^[[:space:]]*\/\/ apple-check: / {
        print FILENAME ":" FNR ": " $0
    }
    { previous = $0 }')
if [ -n "$unguarded" ]; then
    echo "$unguarded" | sed 's/^/error: platform condition without NOTIFICATABLE_APPLE_CHECK or an apple-check reason: /' >&2
    exit 1
fi

echo "==> swift test, Apple branches (-DNOTIFICATABLE_APPLE_CHECK, scratch path .build-apple-check)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift test --scratch-path .build-apple-check -Xswiftc -DNOTIFICATABLE_APPLE_CHECK "$@" 2>&1 | tee "$log"
if ! grep -q 'Suite "Apple-branch check build" passed' "$log"; then
    echo 'error: the suite "Apple-branch check build" did not pass: did the flag reach the test target?' >&2
    exit 1
fi
echo "apple-check: passed"
