#!/bin/bash
# cgcount.sh TESTBIN NAME: instructions per message of BenchmarkWindowOneGoroutine (callgrind, 150000x - 50000x)
t=$1; nm=$2; bench=${3:-WindowOneGoroutine}
for n in 50000 150000; do GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$nm.$n $t -test.run XXX -test.bench "$bench" -test.benchtime ${n}x >/dev/null 2>&1; done
a=$(callgrind_annotate /tmp/cg.$nm.50000 | grep TOTALS | awk '{gsub(",","",$1); print $1}'); b=$(callgrind_annotate /tmp/cg.$nm.150000 | grep TOTALS | awk '{gsub(",","",$1); print $1}')
echo "$nm per msg: $(( (b-a)/100000 ))"
