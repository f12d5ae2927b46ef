#!/bin/bash
# pin rank r to CPU f(r): PIN=alt -> r%2, PIN=block -> r/(size/2)
case $PIN in alt) c=$((GORUN_RANK%2));; block) c=$((GORUN_RANK*2/GORUN_SIZE));; esac
exec taskset -c $c "$@"
