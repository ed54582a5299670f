#!/usr/bin/env bash
# Instructions per operation of notificatable-bench rows, counted with Valgrind's callgrind.
#
# Each side of each row runs twice in the bench's untimed mode (`--row ID --side S --iterations N`), with N1 and N2
# operations; the difference of the two instruction totals, divided by N2 - N1, is the cost of one operation, without
# process start-up, set-up or one-time initialisation. Instruction counts do not depend on the machine's load, so
# they are the figures to compare while other work shares the CPU. SWIFT_DETERMINISTIC_HASHING=1 makes dictionary
# layouts, and so the counts, repeat from run to run.
#
# usage: scripts/callgrind-bench.sh [--n1 N] [--n2 N] [--no-build] [ROW_ID ...]   (default: every row; see --list)
#        scripts/callgrind-bench.sh --list
# Set KEEP=DIR to keep the callgrind output files (for callgrind_annotate) in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

n1=200
n2=1200
build=1
rows=()
while [ $# -gt 0 ]; do
    case "$1" in
    --n1) n1=$2; shift 2 ;;
    --n2) n2=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --list) rows=(--list); shift ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) rows+=("$1"); shift ;;
    esac
done

command -v valgrind > /dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
if [ "$build" = 1 ]; then
    swift build -c release --product notificatable-bench > /dev/null
fi
bench=.build/release/notificatable-bench
if [ "${rows[0]:-}" = "--list" ]; then
    "$bench" --list
    exit 0
fi
if [ ${#rows[@]} -eq 0 ]; then
    mapfile -t rows < <("$bench" --list | cut -f1)
fi

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
export SWIFT_DETERMINISTIC_HASHING=1

# The instruction total of one run.
count() { # id side n
    local file="$out/callgrind.$1.$2.$3"
    valgrind --tool=callgrind --callgrind-out-file="$file" "$bench" --row "$1" --side "$2" --iterations "$3" \
        > /dev/null 2>&1 || { echo "failed: $bench --row $1 --side $2 --iterations $3" >&2; return 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$file"
}

per_op() { # id side
    local a b
    a=$(count "$1" "$2" "$n1")
    b=$(count "$1" "$2" "$n2")
    echo $(( (b - a) / (n2 - n1) ))
}

printf '%-28s %14s %14s %8s\n' "row" "instr/op" "baseline" "ratio"
for id in "${rows[@]}"; do
    candidate=$(per_op "$id" candidate)
    if "$bench" --list | grep -q "^$id	.*(baseline:"; then
        baseline=$(per_op "$id" baseline)
        ratio=$(awk -v c="$candidate" -v b="$baseline" 'BEGIN { printf "%.2f", (b > 0 ? c / b : 0) }')
        printf '%-28s %14d %14d %7s×\n' "$id" "$candidate" "$baseline" "$ratio"
    else
        printf '%-28s %14d %14s %8s\n' "$id" "$candidate" "—" "—"
    fi
done
[ -n "${KEEP:-}" ] || rm -rf "$out"
