#!/bin/bash
# nwaye2.sh ROUNDS RANGE MAXBUF MODE envspec...: like nwaye.sh but runs osu with -m 1:MAXBUF and keeps only sizes within RANGE (lo:hi bytes)
n=$1; range=$2; maxb=$3; mode=$4; shift 4; envs=("$@"); k=${#envs[@]}
lo=${range%:*}; hi=${range#*:}
for i in $(seq $n); do for j in $(seq 0 $((k-1))); do idx=$(( (i+j)%k )); e=${envs[$idx]}; [ "$e" = - ] && e=
  env $e timeout 300 flock /work/bench.lock /tmp/main-gorun -np 2 ${OSU:-/tmp/fin-osu} $mode -m 1:$maxb --csv 2>/dev/null | grep -v "^#" | tr "," " " | awk -v k=$idx -v lo=$lo -v hi=$hi 'NF>=2 && $1 ~ /^[0-9]+$/ && $1>=lo && $1<=hi {print k, $1, $2}'
done; done | gawk -v k=$k '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(i=0;i<k;i++){m=asort(v[s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.3f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}' | sort -n
