#!/usr/bin/env bash
# Start-to-exit time of an 8-rank hello job: gorun vs Open MPI's mpirun.
#
#   bash tests/startup/measure.sh [RUNS] [NP]     (from anywhere; defaults 10, 8)
#
# Needs: go; for the comparison, Debian's openmpi-bin and libopenmpi-dev
# (apt-get install -y openmpi-bin libopenmpi-dev). Both launchers and both
# programs are built first; the runs then alternate gorun / mpirun so that
# machine noise hits both alike. Prints each median in milliseconds.
set -euo pipefail

runs=${1:-10}
np=${2:-8}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/gorun" ./cmd/gorun && go build -o "$work/hello-go" ./tests/progs/hello)
have_mpi=0
if command -v mpicc >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpicc -O2 -o "$work/hello-c" "$here/hello.c"
    have_mpi=1
else
    echo "mpicc/mpirun.openmpi not found: measuring gorun only" >&2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gorun_cmd=("$work/gorun" -np "$np" "$work/hello-go")
mpi_cmd=(mpirun.openmpi -np "$np" --oversubscribe "$work/hello-c")

# ms CMD...: run CMD once (output discarded, must succeed), print wall ms.
ms() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; cat "$work/err" >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# One warm-up run each (page cache, first exec).
ms "${gorun_cmd[@]}" >/dev/null
[ "$have_mpi" = 1 ] && ms "${mpi_cmd[@]}" >/dev/null
: >"$work/gorun.ms"
: >"$work/mpi.ms"
for ((i = 0; i < runs; i++)); do
    ms "${gorun_cmd[@]}" >>"$work/gorun.ms"
    [ "$have_mpi" = 1 ] && ms "${mpi_cmd[@]}" >>"$work/mpi.ms"
done

echo "gorun -np $np hello (Go):                     median $(median <"$work/gorun.ms") ms  runs: $(tr '\n' ' ' <"$work/gorun.ms")"
if [ "$have_mpi" = 1 ]; then
    echo "mpirun.openmpi -np $np --oversubscribe hello (C): median $(median <"$work/mpi.ms") ms  runs: $(tr '\n' ' ' <"$work/mpi.ms")"
fi
