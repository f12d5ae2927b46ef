#!/bin/bash
# nwayo.sh ROUNDS MAXSIZE MODE prog...: np 2, sizes (0|1)..MAXSIZE, rotating order, per-size medians and ratios to the first prog.
# prog: ompi:EXE (an Open MPI bench.c build, run by mpirun with ob1 + vader) or a gorun osu binary (run by /tmp/main-gorun).
n=$1; max=$2; mode=$3; shift 3; bins=("$@"); k=${#bins[@]}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lo=1; [ $mode = lat ] && lo=0; col=2; [ $mode = mr ] && col=3
for i in $(seq $n); do
  for j in $(seq 0 $((k-1))); do
    idx=$(( (i + j) % k )); b=${bins[$idx]}
    case $b in
    ompi:*) timeout 300 flock /work/bench.lock mpirun.openmpi -np 2 --mca pml ob1 --mca btl self,vader ${b#ompi:} $mode $max 2>/dev/null | grep -v "^#" ;;
    *) timeout 300 flock /work/bench.lock /tmp/main-gorun -np 2 $b $mode -m $lo:$max --csv 2>/dev/null | grep -v "^#" | tr "," " " ;;
    esac | awk -v k=$idx -v c=$col -v lo=$lo 'NF>=2 && $1 ~ /^[0-9]+$/ && $1>=lo {print k, $1, $c}'
  done
done | gawk -v k=$k '{v[$2][$1][length(v[$2][$1])+1]=$3} END{for(s in v){line=s; for(i=0;i<k;i++){m=asort(v[s][i],x); med[i]=(x[int((m+1)/2)]+x[int(m/2)+1])/2; line=line sprintf(" %.3f", med[i])}; line=line " |"; for(i=1;i<k;i++) line=line sprintf(" %.3f", med[i]/med[0]); print line}}' | sort -n
