#!/bin/bash
# nwayo6.sh: nwayo5.sh with three placements: N (shmfloor < 150 ns before and after), F (150-330), S (>= 330)
# nwayo5.sh (nwayo4.sh with BIN|ENV=V,ENV=V variants as nway5.sh) ROUNDS MAXSIZE MODE prog...: ../../afternoon/probes/nwayo.sh with each round tagged by the placement as
# nway4.sh does (bench/shmfloor before and after the round: N both < 150 ns, F both >= 150, else dropped).
# prog: ompi:EXE (bench.c built against Open MPI, run by mpirun with ob1 + vader) or a gorun osu binary.
n=$1; max=$2; mode=$3; shift 3; bins=("$@"); k=${#bins[@]}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lo=1; [ $mode = lat ] && lo=0; col=2; [ $mode = mr ] && col=3
fl() { /tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/'; }
for i in $(seq $n); do
  a=$(fl); out=""
  for j in $(seq 0 $((k-1))); do
    idx=$(( (i + j) % k )); b=${bins[$idx]}
    out+=$(case $b in
    ompi:*) timeout 300 flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader ${b#ompi:} $mode $max 2>/dev/null | grep -v "^#" ;;
    *) v=$b; b=${v%%|*}; e=; case $v in *"|"*) e=${v#*|};; esac; e=${e//,/ }; env $e timeout 300 flock /work/bench.lock /tmp/main-gorun -np 2 $b $mode -m $lo:$max --csv 2>/dev/null | grep -v "^#" | tr "," " " ;;
    esac | awk -v k=$idx -v c=$col -v lo=$lo 'NF>=2 && $1 ~ /^[0-9]+$/ && $1>=lo {print k, $1, $c}')
    out+=$'\n'
  done
  z=$(fl)
  tag=X; awk -v a=$a -v z=$z "BEGIN{exit !(a<150 && z<150)}" && tag=N; awk -v a=$a -v z=$z "BEGIN{exit !(a>=150 && z>=150 && a<330 && z<330)}" && tag=F; awk -v a=$a -v z=$z "BEGIN{exit !(a>=330 && z>=330)}" && tag=S
  echo "$out" | awk -v t=$tag 'NF==3{print t, $0}'
done | gawk -v k=$k '$1!="X"{v[$1][$3][$2][length(v[$1][$3][$2])+1]=$4; r[$1]++} END{for(t in v){n=asorti(v[t], ss, "@ind_num_asc"); printf "# %s: %d rounds\n", t, r[t]/k/n; for(q=1;q<=n;q++){s=ss[q]; line=t " " s; for(i=0;i<k;i++){m=asort(v[t][s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.3f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}}'
