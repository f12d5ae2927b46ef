#!/bin/bash
# mklayt.sh N...: pml test binary with N bytes of padding text in internal/spinlock, as /tmp/layt-N.test
set -e
cd /work/wt/pf
for n in "$@"; do
  { echo '#include "textflag.h"'; echo 'TEXT ·xpad(SB), NOSPLIT, $0-0'; for i in $(seq $n); do echo '	BYTE $0x90'; done; echo '	RET'; } > internal/spinlock/xpad_amd64.s
  printf 'package spinlock\n\nimport "os"\n\nfunc xpad()\n\nfunc init() {\n\tif os.Getenv("X_NEVER") == "1" {\n\t\txpad()\n\t}\n}\n' > internal/spinlock/xpad_amd64.go
  go test -c -o /tmp/layt-$n.test ./pml
done
rm -f internal/spinlock/xpad_amd64.s internal/spinlock/xpad_amd64.go
