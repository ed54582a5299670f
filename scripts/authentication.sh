#!/usr/bin/env bash
# Builds and tests Integrations/NotificatableAuthentication (HMACMessageAuthenticator) on its own, and checks that
# its build graph holds no postgres-nio: a user of the loopback or macOS transport authenticates relay messages
# with the root package and swift-crypto only. No server needed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$root/Integrations/NotificatableAuthentication"

dependencies="$(swift package --package-path "$package" show-dependencies --format flatlist)"
echo "$dependencies" | sed 's/^/[authentication.sh] depends on: /'
if echo "$dependencies" | grep -qi 'postgres'; then
    echo "[authentication.sh] error: NotificatableAuthentication's build graph holds a PostgreSQL package" >&2
    exit 1
fi
swift test --package-path "$package"
