#!/bin/bash
# placecorr2.sh N MODE: N pairs of a whole compare.py-size run (MODE, all sizes), Open MPI then gorun, shmfloor before and after each run
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
m=${2:-lat}; s=0; [ $m != lat ] && s=1
for i in $(seq $1); do
  a=$(fl); o=$(flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader /tmp/gorun-bench-ref/bench.ompi $m 2>/dev/null | awk -v s=$s '$1==s{print $2}')
  b=$(fl); g=$(flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu $m --csv 2>/dev/null | awk -F, -v s=$s '$1==s{print $2}')
  c=$(fl); echo "$(date +%T) $a ompi=$o $b gorun=$g $c"
done
