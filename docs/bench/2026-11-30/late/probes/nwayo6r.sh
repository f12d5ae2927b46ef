#!/bin/bash
# nwayo6r.sh ROUNDS MIN MAX MODE prog...: ../../day/probes/nwayo6.sh ROUNDS MAX MODE prog..., its rows below size MIN dropped
n=$1; min=$2; max=$3; mode=$4; shift 4
bash /work/main/docs/bench/2026-11-30/day/probes/nwayo6.sh $n $max $mode "$@" | awk -v m=$min '/^#/ || $2>=m'
