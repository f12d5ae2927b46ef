#!/bin/bash
# nwaye.sh ROUNDS RANGE MODE envspec...: one osu binary (/tmp/fin-osu) under different GORUN_MCA settings ("-" = none); medians, ratios to the first
n=$1; range=$2; mode=$3; shift 3; envs=("$@"); k=${#envs[@]}
for i in $(seq $n); do for j in $(seq 0 $((k-1))); do idx=$(( (i+j)%k )); e=${envs[$idx]}; [ "$e" = - ] && e=
  env $e timeout 300 flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu $mode -m $range --csv 2>/dev/null | grep -v "^#" | tr "," " " | awk -v k=$idx 'NF>=2 && $1 ~ /^[0-9]+$/{print k, $1, $2}'
done; done | gawk -v k=$k '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(i=0;i<k;i++){m=asort(v[s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.3f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}' | sort -n
