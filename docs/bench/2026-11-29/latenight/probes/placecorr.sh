#!/bin/bash
# placecorr.sh N: N pairs of osu bw 1..64 B, Open MPI then gorun, shmfloor before and after each run: does a runtime's run go with a placement?
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
for i in $(seq $1); do
  a=$(fl); o=$(mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader /tmp/gorun-bench-ref/bench.ompi bw 64 2>/dev/null | awk '$1==1{print $2}')
  b=$(fl); g=$(/tmp/main-gorun -np 2 /tmp/fin-osu bw -m 1:64 --csv 2>/dev/null | awk -F, '$1==1{print $2}')
  c=$(fl); echo "$a ompi1B=$o $b gorun1B=$g $c"
done
