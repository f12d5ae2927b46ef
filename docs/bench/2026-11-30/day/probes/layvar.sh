#!/bin/bash
# layvar.sh ROUNDS MAXSIZE MODE BIN...: nwayo4.sh (../../../2026-11-29/eve/probes) of Open MPI against the gorun
# osu builds BIN... (the first as built, the others the same code with its text shifted by mklay.sh), then per
# placement and size: the first build's ratio to Open MPI, and the median, least and most of all the builds' ratios.
r=$1; max=$2; mode=$3; shift 3
bash /tmp/nwayo4.sh $r $max $mode ompi:/tmp/gorun-bench-ref/bench.ompi "$@" | tee /tmp/layvar-raw.txt |
awk '/^#/{print; next} {i=0; for(k=1;k<=NF;k++) if($k=="|") i=k; n=0; for(k=i+1;k<=NF;k++) v[++n]=$k;
  asort(v, s); med=(n%2)? s[(n+1)/2] : (s[n/2]+s[n/2+1])/2;
  printf "%s %8s  as-built %s  median %.3f  range %.3f-%.3f  (%d builds)\n", $1, $2, $(i+1), med, s[1], s[n], n; delete v; delete s}'
