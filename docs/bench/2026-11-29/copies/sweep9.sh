#!/bin/bash
# sweep3.sh OUTDIR: same-run sweep of /tmp/fin-gorun + /tmp/fin-osu against Open MPI: p2p, ring/shift, collectives np 2 4 8.
set -u
out=$1; mkdir -p $out
G=/tmp/fin-gorun; O=/tmp/fin-osu
cp=/work/shared/bench/compare.py
date -u > $out/START
for m in lat bw bibw mr; do
  timeout 900 flock /work/bench.lock python3 $cp --rounds 3 $m -- $G -np 2 $O $m > $out/$m.txt 2>&1
done
for m in ring shift; do
  timeout 900 flock /work/bench.lock python3 $cp --rounds 5 --np 8 $m -- $G -np 8 $O $m > $out/$m.txt 2>&1
done
if [ "${P2P_ONLY:-}" = "" ]; then
for np in 2 4 8; do R=9; [ $np = 8 ] && R=3; for m in allreduce reduce bcast allgather alltoall barrier; do
  timeout 900 flock /work/bench.lock python3 $cp --rounds $R --np $np $m -- $G -np $np $O $m > $out/$m-np$np.txt 2>&1
done; done
fi
date -u > $out/DONE
