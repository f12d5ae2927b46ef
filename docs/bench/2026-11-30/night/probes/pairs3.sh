#!/bin/bash
# pairs3.sh N MODE: N triples of whole compare.py-size runs, no probe in between: Open MPI, gorun, gorun with
# pml_ob1_spin_time 10 s (its waits never sleep); prints each run's first sizes (placement: near ~0.24-0.32 us at 0-1 B lat)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
m=${2:-lat}; s=0; t=1; [ $m != lat ] && s=1 && t=2
for i in $(seq $1); do
  o=$(flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader /tmp/gorun-bench-ref/bench.ompi $m 2>/dev/null | awk -v s=$s -v t=$t '$1==s||$1==t{printf "%s ", $2}')
  g=$(flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu $m --csv 2>/dev/null | awk -F, -v s=$s -v t=$t '$1==s||$1==t{printf "%s ", $2}')
  h=$(GORUN_MCA_pml_ob1_spin_time=10000000 flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu $m --csv 2>/dev/null | awk -F, -v s=$s -v t=$t '$1==s||$1==t{printf "%s ", $2}')
  echo "$(date +%T) ompi= $o gorun= $g spin= $h"
done
