#!/bin/bash
# coll-pipe.sh ROUNDS OP NP: osu OP at np NP, 64 KiB-1 MiB, pml_ob1_stream_pipe_max=0 against the default, interleaved; per-size medians (us) and ratio
n=$1; op=$2; np=$3
for i in $(seq $n); do for v in "GORUN_MCA_pml_ob1_stream_pipe_max=0" "X=1"; do
  env $v timeout 120 flock /work/bench.lock /tmp/main-gorun -np $np /tmp/fin-osu $op -m 65536:1048576 --csv 2>/dev/null | grep -v '^[#s]' | tr ',' ' ' | awk -v k=$v '{print k, $1, $2}'
done; done | gawk '{v[$2][$1][length(v[$2][$1])+1]=$3} END{n=asorti(v,ss,"@ind_num_asc"); for(q=1;q<=n;q++){s=ss[q]; m=asort(v[s]["GORUN_MCA_pml_ob1_stream_pipe_max=0"],x); ma=(x[int((m+1)/2)]+x[int(m/2)+1])/2; m=asort(v[s]["X=1"],y); mb=(y[int((m+1)/2)]+y[int(m/2)+1])/2; printf "%s %8d read %.1f default %.1f | %.3f\n", "'$op'", s, ma, mb, mb/ma}}'
