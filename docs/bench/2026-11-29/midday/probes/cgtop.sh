#!/bin/bash
# cgtop.sh FILE [N]: inclusive instructions per message of the hot functions
callgrind_annotate --inclusive=yes $1 2>/dev/null | grep -E "^ *[0-9,]+ \(" | sed 1d | awk '{x=$1; gsub(",","",x); f=$0; sub(/.*:/,"",f); sub(/ \[.*/,"",f); printf "%6.1f %s\n", x/150080, f}' | sed 's|github.com/gorun-mpi/gorun/||g' | awk '$1>=15' | grep -v "runtime\.\|testing\.\|mpool\|json\|smPair\|NewWith\|goexit\|sync.(\*WaitGroup)\|sema\|mcall\|smComms" | head -${2:-50}
