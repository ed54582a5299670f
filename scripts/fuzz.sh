#!/usr/bin/env bash
# Builds the libFuzzer target (Fuzz/UserInfoFuzzer.swift + the shared Tests/NotificatableTests/ReliabilityHarness.swift
# + every source of the Notificatable library, compiled as one module with -sanitize=fuzzer,address) and runs it.
#
#   scripts/fuzz.sh [seconds]        run for that many seconds (default 25), on the corpus in fuzz-corpus/
#   FUZZ_JOBS=2 scripts/fuzz.sh 900  run two fuzzing processes in parallel (shares the corpus)
#
# Exits non-zero if libFuzzer finds a crash, a leak, a timeout or an out-of-memory; the input is saved as
# fuzz-artifacts/crash-* (or leak-*, timeout-*, oom-*). Reproduce one with: .build-fuzz/notificatable-fuzz <file>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-25}"
jobs="${FUZZ_JOBS:-1}"
out=.build-fuzz
mkdir -p "$out" fuzz-corpus fuzz-artifacts

sources=(Fuzz/UserInfoFuzzer.swift Tests/NotificatableTests/ReliabilityHarness.swift)
while IFS= read -r file; do sources+=("$file"); done < <(find Sources/Notificatable -name '*.swift' | sort)

binary="$out/notificatable-fuzz"
stamp="$out/sources.sha"
digest=$(cat "${sources[@]}" "$0" | sha256sum | cut -d' ' -f1)
if [[ ! -x "$binary" || "$(cat "$stamp" 2>/dev/null)" != "$digest" ]]; then
    echo "fuzz.sh: building $binary from ${#sources[@]} files"
    nice -n 19 swiftc -swift-version 6 -O -sanitize=fuzzer,address -parse-as-library -module-name NotificatableFuzz -package-name Notificatable \
        -D NOTIFICATABLE_FUZZ -warnings-as-errors "${sources[@]}" -o "$binary"
    echo "$digest" > "$stamp"
fi

echo "fuzz.sh: fuzzing for ${seconds}s with $jobs job(s)"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
      -artifact_prefix=fuzz-artifacts/)
if [[ "$jobs" -gt 1 ]]; then
    args+=(-jobs="$jobs" -workers="$jobs")
fi
# The Swift backtracer would race ASan for the crash report; libFuzzer prints the stack itself.
SWIFT_BACKTRACE=enable=no nice -n 19 "$binary" "${args[@]}" fuzz-corpus/
