#!/bin/bash
# xstate.sh N OUT: N rounds of (shmfloor, Open MPI bibw to 2 KiB, gorun bibw to 2 KiB, shmfloor), one line
# per round: floor-before floor-after and each runtime's 1 B, 32 B and 2 KiB MB/s (bench.c against
# /tmp/fin-gorun + /tmp/fin-osu, as compare.py runs them).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
pick() { grep -v '#' | awk '$1==1||$1==32||$1==2048{printf " %s", $2}'; }
for i in $(seq $1); do
  a=$(fl)
  o=$(flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader /tmp/gorun-bench-ref/bench.ompi bibw 2048 2>/dev/null | pick)
  g=$(flock /work/bench.lock /tmp/fin-gorun -np 2 /tmp/fin-osu bibw -m 1:2048 2>/dev/null | pick)
  z=$(fl)
  echo "$a $z |$o |$g"
done > $2
