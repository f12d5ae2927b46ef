#!/bin/bash
# abba.sh N SIZE_RANGE MODE "cmd1" "cmd2": interleaved osu runs, order alternating each round (ABBA), per-size medians and ratio 2/1
n=$1; range=$2; mode=$3; A=$4; B=$5
for i in $(seq $n); do
  if [ $((i % 2)) = 1 ]; then order="1 2"; else order="2 1"; fi
  for k in $order; do
    if [ $k = 1 ]; then c=$A; else c=$B; fi
    timeout 300 flock /work/bench.lock $c $mode -m $range 2>/dev/null | grep -v '^#' | awk -v k=$k '{print k, $1, $2}'
  done
done | gawk '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(k=1;k<=2;k++){m=asort(v[s][k],x); med[k]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line" "med[k]}; printf "%s %.3f\n", line, med[2]/med[1]}}' | sort -n
