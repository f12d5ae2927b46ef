#!/bin/bash
# sysdur.sh SIZE ITERS: process_vm_readv durations (tracepoints) of Open MPI's and gorun's ping-pong, interleaved, medians
S=${1:-8192}; I=${2:-20000}
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
ana() { perf script --ns -i $1 -F pid,time,event 2>/dev/null | awk '{pid=$1; t=$2; sub(":","",t); if ($3 ~ /enter/) s[pid]=t; else if (pid in s) {d[++n]=(t-s[pid])*1e9; delete s[pid]}} END{asort(d); printf "n=%d p10=%.0f p50=%.0f p90=%.0f ns\n", n, d[int(n*0.1)], d[int(n*0.5)], d[int(n*0.9)]}'; }
a=$(fl)
MINSZ=$S ITERS=$I perf record -q -e syscalls:sys_enter_process_vm_readv -e syscalls:sys_exit_process_vm_readv -o /tmp/sd-o.data -- mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,vader /tmp/benchx.ompi lat $S 2>&1 | grep "^$S"
perf record -q -e syscalls:sys_enter_process_vm_readv -e syscalls:sys_exit_process_vm_readv -o /tmp/sd-g.data -- /tmp/main-gorun -np 2 ${BIN:-/tmp/g1-osu} lat -m $S:$S -i $I 2>&1 | grep "^ *$S"
z=$(fl)
echo "floor $a $z"; echo "ompi $(ana /tmp/sd-o.data)"; echo "gorun $(ana /tmp/sd-g.data)"
