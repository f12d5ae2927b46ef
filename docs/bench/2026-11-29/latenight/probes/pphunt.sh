#!/bin/bash
# pphunt.sh SECS: every ~20 s, osu bw at 1 MiB read-only and pipeline; when the pipeline is 1.2x faster, 3 rounds of bw 64K-2M
# read-only / adaptive / pipeline (nway5.sh), logged with the time.
# (22:47-22:54 run with /tmp/pp-osu, a build of ef4c6b8 before it landed; from 23:02 with /tmp/fin-osu, main ef4c6b8)
end=$(( $(date +%s) + $1 ))
while [ $(date +%s) -lt $end ]; do
  a=$(GORUN_MCA_pml_ob1_stream_pipe_max=0 flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu bw -m 1048576:1048576 --csv 2>/dev/null | tail -1 | cut -d, -f2)
  b=$(GORUN_MCA_pml_ob1_rget_limit=0 flock /work/bench.lock /tmp/main-gorun -np 2 /tmp/fin-osu bw -m 1048576:1048576 --csv 2>/dev/null | tail -1 | cut -d, -f2)
  echo "$(date +%T) read $a pipe $b"
  if awk -v a=$a -v b=$b 'BEGIN{exit !(b > 1.2*a)}'; then
    echo "== caught at $(date +%T)"; bash /tmp/nway5.sh 3 65536:2097152 bw "/tmp/fin-osu|GORUN_MCA_pml_ob1_stream_pipe_max=0" "/tmp/fin-osu" "/tmp/fin-osu|GORUN_MCA_pml_ob1_rget_limit=0"
  fi
  sleep 20
done
