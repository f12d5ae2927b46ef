#!/bin/bash
# lat16.sh N VARIANT...: N rounds; each round measures shmfloor, then runs every variant
# ("NAME:BIN" or "NAME:BIN|ENV=V,ENV=V": /tmp/fin-gorun -np 2 BIN lat -m 8192:16384) and Open MPI (bench.c lat
# 16384); one line per round: floor, NAME=8K/16K per variant, ompi=8K/16K (us). Summaries: lat16sum.py.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=$1; shift
for i in $(seq $n); do
  line=$(/tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/')
  for v in "$@"; do
    name=${v%%:*}; b=${v#*:}; e=X=1; case $b in *"|"*) e=${b#*|}; b=${b%%|*};; esac; e=${e//,/ }
    line+=" $name=$(env $e flock /work/bench.lock /tmp/fin-gorun -np 2 $b lat -m 8192:16384 | grep -v '#' | awk '{printf "%s/", $2}')"
  done
  line+=" ompi=$(flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader /tmp/gorun-bench-ref/bench.ompi lat 16384 2>/dev/null | grep -v '#' | awk '$1==8192||$1==16384{printf "%s/", $2}')"
  echo "$line"
done
