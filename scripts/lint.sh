#!/usr/bin/env bash
# Lints the tree with the toolchain's swift-format, in strict mode: any finding fails (exit status 1).
#   1. `swift format lint --strict` with the repository's .swift-format (4 spaces, 120 columns, the house rules);
#   2. the rules that hold for Sources/ only (tests may force-unwrap and `try!`): no force unwraps, `try!`, `as!`,
#      implicitly unwrapped optionals, `fatalError` or `precondition` in library and executable code.
# Fix formatting with `swift format --in-place --recursive Sources Tests Package.swift`.
set -uo pipefail

cd "$(dirname "$0")/.."
status=0

echo "==> swift format lint --strict"
swift format lint --strict --recursive --parallel Sources Tests Package.swift \
    Integrations/*/Sources Integrations/*/Tests Integrations/*/Package.swift || status=1

echo "==> Sources: no force unwraps, try!, as!, fatalError or precondition"
sources_config=$(mktemp)
trap 'rm -f "$sources_config"' EXIT
python3 - "$sources_config" <<'PY'
import json, sys
config = json.load(open(".swift-format"))
for rule in ("NeverForceUnwrap", "NeverUseForceTry", "NeverUseImplicitlyUnwrappedOptionals"):
    config["rules"][rule] = True
json.dump(config, open(sys.argv[1], "w"))
PY
# Only the findings of the extra rules count here; everything else was reported above.
findings=$(swift format lint --configuration "$sources_config" --recursive Sources Integrations/*/Sources 2>&1 \
    | grep -E '\[(NeverForceUnwrap|NeverUseForceTry|NeverUseImplicitlyUnwrappedOptionals)\]' || true)
traps=$(grep -rnE '\bfatalError\(|\bprecondition(Failure)?\(|\bas! ' --include='*.swift' Sources Integrations/*/Sources \
    | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
# PostgresNIO traps when the server closes a connection under a row sequence or a listener being added
# (Integrations/NotificatablePostgres/Sources/NotificatablePostgres/Shared/PostgresNIOTraps.swift): the transports
# read rows and add listeners only through that file.
postgres_module=Integrations/NotificatablePostgres/Sources/NotificatablePostgres
pgtraps=$(grep -rnE '\.collect\(\)|for try await .* in try await .*\.(query|execute)\(|\.addListener\(' --include='*.swift' \
    "$postgres_module" | grep -v "$postgres_module/Shared/PostgresNIOTraps.swift" | grep -vE '^[^:]+:[0-9]+:\s*//' \
    | grep -v '// lint: no rows' || true)
# The integration's library logs alike in every build configuration: `scripts/postgres.sh` checks its default event
# handlers from the debug build only (a relay's default once logged in debug builds only), so its sources may hold no
# configuration condition.
configs=$(grep -rnE '#if.*DEBUG|\bassert(ionFailure)?\(|_isDebugAssertConfiguration|_isReleaseAssertConfiguration' \
    --include='*.swift' "$postgres_module" | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
if [ -n "$configs" ]; then
    echo "$configs" | sed 's/^/error: build-configuration condition in the integration library: /'
    status=1
fi
if [ -n "$findings$traps$pgtraps" ]; then
    [ -n "$findings" ] && echo "$findings"
    [ -n "$traps" ] && echo "$traps" | sed 's/^/error: trap in Sources: /'
    [ -n "$pgtraps" ] && echo "$pgtraps" | sed 's/^/error: PostgresNIO row sequence or listener outside PostgresNIOTraps.swift: /'
    status=1
fi

if [ "$status" -eq 0 ]; then echo "lint: clean"; else echo "lint: violations found" >&2; fi
exit "$status"
