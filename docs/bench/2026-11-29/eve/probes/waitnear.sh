#!/bin/bash
# waitnear.sh [MAXSEC]: returns once bench/shmfloor says near (< 150 ns), or fails after MAXSEC (default 600)
end=$(( $(date +%s) + ${1:-600} ))
while [ $(date +%s) -lt $end ]; do
  v=$(/tmp/shmfloor -rounds 1 -iters 20000 | sed 's/.*min=\([0-9.]*\).*/\1/')
  awk -v v=$v 'BEGIN{exit !(v<150)}' && { echo "near $v at $(date +%T)"; exit 0; }
  sleep 5
done; echo "still far at $(date +%T)"; exit 1
