#!/bin/bash
# pprounds.sh N: N single rounds of bw 64K-2M, read-only / adaptive / pipeline, one line per round: floor, ratios at 128K, 512K, 1M, 2M
for i in $(seq $1); do
  bash /tmp/nway5.sh 1 65536:2097152 bw "/tmp/pp-osu|GORUN_MCA_pml_ob1_stream_pipe_max=0" "/tmp/pp-osu" "/tmp/pp-osu|GORUN_MCA_pml_ob1_rget_limit=0" 2>&1 | awk '/^#/{t=$2} $2==131072||$2==524288||$2==1048576||$2==2097152{printf "%s %s %.1f/%s/%s  ", t, $2/1024, $3/1000, $7, $8} END{print ""}'
done
