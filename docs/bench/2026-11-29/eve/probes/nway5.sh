#!/bin/bash
# nway5.sh ROUNDS RANGE MODE variant...: a variant is BIN or BIN|ENV=V,ENV=V (that environment for the run); like nway3.sh at np 2, but each round is tagged by the placement
# (bench/shmfloor one-way time before and after it: N both < 150 ns, F both >= 150, else dropped);
# per-size medians and ratios to the first binary, per placement, with the rounds counted.
n=$1; range=$2; mode=$3; shift 3; bins=("$@"); k=${#bins[@]}
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
for i in $(seq $n); do
  a=$(fl); out=""
  for j in $(seq 0 $((k-1))); do
    idx=$(( (i + j) % k )); v=${bins[$idx]}; b=${v%%|*}; e=; case $v in *"|"*) e=${v#*|};; esac; e=${e//,/ }
    out+=$(env $e timeout 300 flock /work/bench.lock /tmp/main-gorun -np 2 $b $mode -m $range --csv 2>/dev/null | grep -v "^#" | tr "," " " | awk -v k=$idx 'NF>=2 && $1 ~ /^[0-9]+$/{print k, $1, $2}')
    out+=$'\n'
  done
  z=$(fl)
  tag=X; awk -v a=$a -v z=$z 'BEGIN{exit !(a<150 && z<150)}' && tag=N; awk -v a=$a -v z=$z 'BEGIN{exit !(a>=150 && z>=150)}' && tag=F
  echo "$out" | awk -v t=$tag 'NF==3{print t, $0}'
done | gawk -v k=$k '$1!="X"{v[$1][$3][$2][length(v[$1][$3][$2])+1]=$4; r[$1][$2]++} END{for(t in v){printf "# %s: %d rounds\n", t, r[t][0]/length(v[t]); n=asorti(v[t], ss, "@ind_num_asc"); for(q=1;q<=n;q++){s=ss[q]; line=t " " s; for(i=0;i<k;i++){m=asort(v[t][s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.3f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}}'
