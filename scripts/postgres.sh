#!/usr/bin/env bash
# Runs the PostgreSQL integration package (Integrations/NotificatablePostgres) against a real, throwaway server.
#
#   scripts/postgres.sh                 build the package (debug) once, run its tests, check the default event
#                                       handlers' logging (from that build), smoke-run notificatable-pg and every
#                                       benchmark mode
#   scripts/postgres.sh test [ARGS…]    only the tests; ARGS go to `swift test` (e.g. --filter Reconnect)
#   scripts/postgres.sh release-log     only the release-build check that the default event handlers log
#   scripts/postgres.sh bench [ARGS…]   only the benchmark, release build; ARGS go to notificatable-pg-bench
#                                       (--mode pair|fanout|fanin|names|senders|slow|durable|process|transactional,
#                                       --smoke, the mode's options)
#   scripts/postgres.sh shell           start the server and open a shell with its settings exported
#
# 1. Installs PostgreSQL from Debian's packages when `initdb` is missing (`apt-get update` first; needs root).
# 2. Creates a cluster in a fresh temporary directory and starts it on a free loopback port, with its socket in
#    that directory. `initdb` refuses to run as root, so as root the server runs as the `postgres` user.
# 3. Exports NOTIFICATABLE_PG_HOST, _PORT, _USER, _DATABASE (the tests' connection settings), NOTIFICATABLE_PG_PEER
#    and NOTIFICATABLE_PG_CLI (the executables the tests spawn), NOTIFICATABLE_PG_PSQL
#    (a psql already pointed at the server), NOTIFICATABLE_PG_DATA (the data directory: the benchmark reads the
#    server's pid there and its processes' CPU time in /proc) and NOTIFICATABLE_PG_SERVER (a script taking `stop` or `start`, which
#    the reconnection test uses to stop and start the server mid-stream).
# 4. Always stops the server and removes the directory on exit, whether the tests pass, fail or are interrupted.
#
# The root package's `swift test` never needs any of this.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$root/Integrations/NotificatablePostgres"
mode="${1:-all}"
[ $# -gt 0 ] && shift

log() { printf '[postgres.sh] %s\n' "$*"; }

# --- 1. PostgreSQL binaries ----------------------------------------------------------------------------------
find_bin() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
    done
    command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 \
        && { dirname "$(readlink -f "$(command -v pg_ctl)")"; return 0; }
    return 1
}
if ! bin="$(find_bin)"; then
    [ "$(id -u)" -eq 0 ] || { log "PostgreSQL is not installed and installing it needs root"; exit 1; }
    log "installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
    bin="$(find_bin)" || { log "PostgreSQL installed, but initdb and pg_ctl were not found"; exit 1; }
fi
psql_bin="$bin/psql"
[ -x "$psql_bin" ] || psql_bin="$(command -v psql)"
log "PostgreSQL: $("$bin/postgres" --version)"

# --- 2. A throwaway cluster on a free loopback port ----------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
    as_server() { runuser -u postgres -- "$@"; }
else
    as_server() { "$@"; }
fi

workdir="$(mktemp -d "${TMPDIR:-/tmp}/notificatable-pg.XXXXXX")"
chmod 755 "$workdir"
[ "$(id -u)" -eq 0 ] && chown postgres: "$workdir"

stop_server() {
    if [ -f "$workdir/data/postmaster.pid" ]; then
        as_server "$bin/pg_ctl" -D "$workdir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$workdir"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

# Ports below Linux's ephemeral range (32768-60999 by default): a port in that range can be the local end of any
# outgoing connection, which nothing listens on, so the check below passes and the server then cannot bind it.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# NOTIFICATABLE_PG_PORT_BASE moves the range (parallel checkouts on one machine: a server stopped by an outage test
# leaves its port free for another checkout's server to take).
port_base="${NOTIFICATABLE_PG_PORT_BASE:-25432}"
port=""
for candidate in $(seq "$port_base" $((port_base + 99))); do
    if ! port_in_use "$candidate"; then port="$candidate"; break; fi
done
[ -n "$port" ] || { log "no free loopback port in $port_base-$((port_base + 99))"; exit 1; }

user="notificatable"
as_server "$bin/initdb" -D "$workdir/data" -A trust -U "$user" -E UTF8 --no-sync >"$workdir/initdb.log" 2>&1 \
    || { cat "$workdir/initdb.log"; exit 1; }
# fsync off in the configuration file, not on the command line: a command-line setting outranks `ALTER SYSTEM`, and
# the process benchmark turns fsync on with `ALTER SYSTEM` and a reload (with `-c fsync=off` its "fsync on" rows ran
# with fsync off).
echo "fsync = off" >>"$workdir/data/postgresql.conf"

# The control script the reconnection test uses. It runs as whoever runs the tests (root here: CI).
cat >"$workdir/server" <<EOF
#!/usr/bin/env bash
# Usage: server start|stop. Starts or stops the throwaway server of scripts/postgres.sh.
set -euo pipefail
# The server outlives this script: give it no descriptor of the caller's (a pipe the caller reads to its end).
for fd in \$(ls /proc/\$\$/fd); do [ "\$fd" -gt 2 ] && eval "exec \$fd>&-" 2>/dev/null || true; done
exec </dev/null >>"$workdir/server-control.log" 2>&1
case "\${1:-}" in
start) $( [ "$(id -u)" -eq 0 ] && echo "runuser -u postgres --" ) "$bin/pg_ctl" -D "$workdir/data" -l "$workdir/server.log" \\
        -o "-p $port -k $workdir -c listen_addresses=127.0.0.1 -c max_connections=50" -w -t 60 start >/dev/null ;;
stop) $( [ "$(id -u)" -eq 0 ] && echo "runuser -u postgres --" ) "$bin/pg_ctl" -D "$workdir/data" -m fast -w -t 60 stop >/dev/null ;;
*) echo "usage: \$0 start|stop" >&2; exit 2 ;;
esac
EOF
cat >"$workdir/psql" <<EOF
#!/usr/bin/env bash
# psql connected to the throwaway server of scripts/postgres.sh.
exec "$psql_bin" -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $port -U $user -d postgres "\$@"
EOF
chmod 755 "$workdir/server" "$workdir/psql"
"$workdir/server" start || { cat "$workdir/server.log"; exit 1; }
log "server up on 127.0.0.1:$port (data in $workdir/data)"

export NOTIFICATABLE_PG_HOST=127.0.0.1 NOTIFICATABLE_PG_PORT="$port" NOTIFICATABLE_PG_USER="$user"
export NOTIFICATABLE_PG_DATABASE=postgres NOTIFICATABLE_PG_PSQL="$workdir/psql" NOTIFICATABLE_PG_SERVER="$workdir/server"
export NOTIFICATABLE_PG_DATA="$workdir/data"

# --- 3. Build once, test, benchmark --------------------------------------------------------------------------
# The package's own .build: CI builds it once (debug) for the tests and the benchmark smoke run.
scratch="$package/.build"
# A hung test must not use up CI's time. Each test has a time limit (the suite's `.timeLimit`), which cancels it;
# a test that ignores cancellation (a thread blocked for good) is caught here: after NOTIFICATABLE_PG_TEST_TIMEOUT
# seconds (1200 by default) every thread of the test process is printed (with gdb, when installed) and the process
# is killed, so the run fails with a place to look. Line-buffered (stdbuf), so the last lines are not lost with it.
run_tests() {
    swift build --package-path "$package" --scratch-path "$scratch" --build-tests
    local bin_path
    bin_path="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)"
    export NOTIFICATABLE_PG_PEER="$bin_path/notificatable-pg-peer" NOTIFICATABLE_PG_CLI="$bin_path/notificatable-pg"
    local limit="${NOTIFICATABLE_PG_TEST_TIMEOUT:-1200}" status=0
    stdbuf -oL -eL swift test --package-path "$package" --scratch-path "$scratch" --skip-build "$@" &
    local tests=$!
    (
        sleep "$limit" </dev/null >/dev/null 2>&1
        log "the tests still run after $limit s: every thread of the test process, then it is killed"
        for pid in $(pgrep -f "$scratch/.*PackageTests" || true); do
            command -v gdb >/dev/null && gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)'
        done
        # The test process and its peers (a peer left running would keep `swift test`'s output open), then swift test.
        pkill -9 -f "$scratch/.*/(NotificatablePostgresPackageTests|notificatable-pg-peer)" || true
        kill "$tests" 2>/dev/null || true
    ) &
    local watchdog=$!
    wait "$tests" || status=$?
    kill "$watchdog" 2>/dev/null || true
    return "$status"
}
# The default event handlers must log in a release build too (a relay's default once printed in debug builds
# only): build the small check of Sources/notificatable-pg-release-check with -c release (its own product only,
# not the tests or the benchmark; the release build of its dependencies is shared with `bench`) and run it.
release_log_check() {
    log "release build of the default event handlers' logging check"
    swift build --package-path "$package" --scratch-path "$scratch" -c release --product notificatable-pg-release-check
    "$(swift build --package-path "$package" --scratch-path "$scratch" -c release --show-bin-path)/notificatable-pg-release-check"
}
case "$mode" in
all)
    run_tests
    # The default event handlers' logging, from the debug build just made: a release build of postgres-nio costs
    # minutes, and the library's sources hold no configuration condition (scripts/lint.sh), so both builds log alike.
    log "the default event handlers' logging check (debug build; \`$0 release-log\` builds it in release)"
    "$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)/notificatable-pg-release-check" \
        --any-configuration
    # The operator's command line, from the same build: every read-only command against the test server, a schema
    # migrated by it (the tests run each command too; this shows that the shipped executable starts and connects).
    log "notificatable-pg smoke run (debug build)"
    cli="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)/notificatable-pg"
    PGHOST="$NOTIFICATABLE_PG_HOST" PGPORT="$NOTIFICATABLE_PG_PORT" PGUSER="$NOTIFICATABLE_PG_USER" \
        PGDATABASE="$NOTIFICATABLE_PG_DATABASE" bash -c '
        set -euo pipefail
        "$0" schema migrate --schema notificatable_cli_smoke
        "$0" schema version --schema notificatable_cli_smoke
        "$0" status --schema notificatable_cli_smoke --json >/dev/null
        "$0" dead-letters list --schema notificatable_cli_smoke
        "$0" dead-letters purge --schema notificatable_cli_smoke
        "$0" schema print --schema notificatable_cli_smoke >/dev/null
        status=0; "$0" dead-letters frobnicate 2>/dev/null || status=$?
        [ "$status" -eq 2 ] || { echo "a usage error exited with $status, not 2"; exit 1; }' "$cli"
    log "benchmark smoke run of every mode (debug build, few messages; figures are meaningless here)"
    bench="$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)/notificatable-pg-bench"
    for bench_mode in pair fanout fanin names senders slow durable transactional; do
        smoke_started=$(date +%s)
        "$bench" --mode "$bench_mode" --smoke
        log "smoke run of --mode $bench_mode took $(( $(date +%s) - smoke_started )) s"
    done
    # --mode process only in its consumer-group rows (a few hundred items shared by 1, 2 and 4 peer processes).
    smoke_started=$(date +%s)
    "$bench" --mode process --smoke --cases group-1,group-2,group-4
    log "smoke run of --mode process (consumer groups) took $(( $(date +%s) - smoke_started )) s"
    ;;
test) run_tests "$@" ;;
release-log) release_log_check ;;
bench)
    swift build --package-path "$package" --scratch-path "$scratch" -c release --product notificatable-pg-bench
    swift build --package-path "$package" --scratch-path "$scratch" -c release --product notificatable-pg-peer
    "$(swift build --package-path "$package" --scratch-path "$scratch" -c release --show-bin-path)/notificatable-pg-bench" "$@"
    ;;
shell) log "exit the shell to stop the server"; "${SHELL:-bash}" -i ;;
*) log "unknown mode '$mode' (all, test, release-log, bench, shell)"; exit 2 ;;
esac
