#!/bin/bash
for m in mr bibw bw; do
  /tmp/waitfar.sh 1500 >/dev/null || { echo "no far for $m"; continue; }
  echo "== $m"; /tmp/nway5.sh 10 1:1024 $m "/tmp/lnx-osu|XNOLINE=1" /tmp/lnx-osu
done
