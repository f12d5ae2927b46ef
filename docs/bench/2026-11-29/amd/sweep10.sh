#!/bin/bash
# sweep10.sh OUTDIR: same-run sweep of /tmp/fin-gorun + /tmp/fin-osu against Open MPI (../../../shared/bench/compare.py):
# p2p at np 2, ring/shift at np 8, collectives at np 2 4 8 (P2P_ONLY=1: not those). As copies/sweep9.sh, and
# START and DONE also hold the CPU's model and the cache line's one-way time between two processes
# (/tmp/shmfloor, go build -o /tmp/shmfloor ./bench/shmfloor): the host and the placement the sweep ran in.
set -u
out=$1; mkdir -p $out
G=/tmp/fin-gorun; O=/tmp/fin-osu
cp=/work/shared/bench/compare.py
stamp() { date -u; lscpu | grep -E "^(Vendor ID|Model name|CPU\(s\)):"; flock /work/bench.lock /tmp/shmfloor; }
stamp > $out/START
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
stamp > $out/DONE
