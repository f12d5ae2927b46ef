#!/usr/bin/env bash
# Start-to-exit time of gorun -np N hello for growing N (oversubscribed):
# the start-up curve of issue 16 item 11.
#
#   bash tests/startup/scale.sh [N...]      (defaults: 64 128 256 512 1024)
#
# Builds gorun and tests/progs/hello, then runs each N once and prints
# "N seconds". On a shared or loaded machine the numbers are noise-prone:
# say so when quoting them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/gorun" ./cmd/gorun && go build -o "$work/hello" ./tests/progs/hello)
[ $# -gt 0 ] || set -- 64 128 256 512 1024
for n in "$@"; do
    t0=$(date +%s%N)
    "$work/gorun" -np "$n" --timeout 300s "$work/hello" >"$work/out" 2>"$work/err" || { echo "$n failed:"; tail -3 "$work/err"; continue; }
    t1=$(date +%s%N)
    hellos=$(grep -c "hello from rank" "$work/out" || true)
    echo "$n $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f", d / 1e9 }') (hellos: $hellos)"
done
