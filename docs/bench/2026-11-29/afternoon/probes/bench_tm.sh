#!/bin/bash
# bench_tm.sh: ../shared/bench/bench.c with MPI_Init_thread(MPI_THREAD_MULTIPLE) in place of MPI_Init,
# built like compare.py builds bench.c, as /tmp/tm/bench.tm (Open MPI when asked for what gorun's
# contract always gives: every call safe from any thread).
set -e
mkdir -p /tmp/tm
sed 's/    MPI_Init(&argc, &argv);/    { int prov; MPI_Init_thread(\&argc, \&argv, MPI_THREAD_MULTIPLE, \&prov); if (prov != MPI_THREAD_MULTIPLE) { fprintf(stderr, "provided %d\\n", prov); } }/' \
  ${1:-/work/shared/bench/bench.c} > /tmp/tm/bench_tm.c
grep -q MPI_THREAD_MULTIPLE /tmp/tm/bench_tm.c
mpicc.openmpi -O2 -Wno-stringop-overflow -o /tmp/tm/bench.tm /tmp/tm/bench_tm.c
