#!/bin/bash
# waitslow.sh [MAXSEC]: returns once bench/shmfloor says >= 330 ns (the S state), or fails after MAXSEC
end=$(( $(date +%s) + ${1:-600} ))
while [ $(date +%s) -lt $end ]; do
  v=$(/tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/')
  awk -v v=$v 'BEGIN{exit !(v>=330)}' && { echo "slow $v at $(date +%T)"; exit 0; }
  sleep 5
done; echo "no S state by $(date +%T)"; exit 1
