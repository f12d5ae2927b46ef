#!/usr/bin/env bash
# Start-to-exit time of gorun -np N hello for growing N (oversubscribed):
# the start-up curve of issue 16 item 11.
#
#   bash tests/startup/scale.sh [N...]      (defaults: 64 128 256 512 1024)
#
# Builds gorun and tests/progs/hello, then runs each N once and prints
# "N seconds". GORUN and HELLO, when set, name prebuilt binaries to measure
# instead (e.g. to compare two builds, or to build outside a benchmark
# lock). On a shared or loaded machine the numbers are noise-prone: say so
# when quoting them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gorun=${GORUN:-$work/gorun}
hello=${HELLO:-$work/hello}
[ -n "${GORUN:-}" ] || (cd "$root" && go build -o "$gorun" ./cmd/gorun)
[ -n "${HELLO:-}" ] || (cd "$root" && go build -o "$hello" ./tests/progs/hello)
[ $# -gt 0 ] || set -- 64 128 256 512 1024
for n in "$@"; do
    t0=$(date +%s%N)
    "$gorun" -np "$n" --timeout 300s "$hello" >"$work/out" 2>"$work/err" || { echo "$n failed:"; tail -3 "$work/err"; continue; }
    t1=$(date +%s%N)
    hellos=$(grep -c "hello from rank" "$work/out" || true)
    echo "$n $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f", d / 1e9 }') (hellos: $hellos)"
done
