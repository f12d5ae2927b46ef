#!/bin/bash
# pp8.sh SIZE ITERS: perf stat of Open MPI and gorun 8 KiB ping-pong, interleaved
S=${1:-8192}; I=${2:-50000}
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
echo "floor $(fl)"
MINSZ=$S ITERS=$I perf stat -e task-clock,cycles:u,cycles:k,instructions:u,instructions:k -- mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,vader /tmp/benchx.ompi lat $S 2>&1 | grep -E "^[0-9]|cycles|instr|task"
perf stat -e task-clock,cycles:u,cycles:k,instructions:u,instructions:k -- /tmp/main-gorun -np 2 /tmp/g1-osu lat -m $S:$S -i $I 2>&1 | grep -E "^ *[0-9]+ |cycles|instr|task"
echo "floor $(fl)"
