#!/bin/bash
# nwayc.sh ROUNDS RANGE MODE NP "cmd1" "cmd2" ...: full launcher command prefixes (e.g. "/tmp/main-gorun --mca x y -np 2 /tmp/osu"), order rotating; per-size medians, ratio to the first
n=$1; range=$2; mode=$3; np=$4; shift 4; cmds=("$@"); k=${#cmds[@]}
for i in $(seq $n); do
  for j in $(seq 0 $((k-1))); do
    idx=$(( (i + j) % k )); c=${cmds[$idx]}
    timeout 300 flock /work/bench.lock $c $mode -m $range 2>/dev/null | grep -v '^#' | awk -v k=$idx '{print k, $1, $2}'
  done
done | gawk -v k=$k '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(i=0;i<k;i++){m=asort(v[s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.2f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}' | sort -n
