#!/bin/bash
# abk.sh N SIZE_RANGE MODE "cmd1" "cmd2" ...: interleaved osu runs, per-size medians of each command
n=$1; range=$2; mode=$3; shift 3; K=$#
for i in $(seq $n); do k=0; for c in "$@"; do k=$((k+1)); timeout 120 flock /work/bench.lock $c $mode -m $range 2>/dev/null | grep -v '^#' | awk -v k=$k '{print k, $1, $2}'; done; done | gawk -v K=$K '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(k=1;k<=K;k++){m=asort(v[s][k],x); line=line" "(x[int((m+1)/2)]+x[int(m/2)+1])/2}; print line}}' | sort -n
