#!/bin/bash
# mklay2.sh PKGDIR N NAME: bench/osu of the worktree with N bytes of padding text in package PKGDIR, as /tmp/NAME-osu
set -e
cd /work/wt/pf
pkg=$(basename $1); [ "$1" = "." ] && pkg=gorun
{ echo '#include "textflag.h"'; echo 'TEXT ·xpad(SB), NOSPLIT, $0-0'; for i in $(seq $2); do echo '	BYTE $0x90'; done; echo '	RET'; } > $1/zzxpad_amd64.s
printf 'package %s\n\nimport "os"\n\nfunc xpad()\n\nfunc init() {\n\tif os.Getenv("X_NEVER") == "1" {\n\t\txpad()\n\t}\n}\n' $pkg > $1/zzxpad_amd64.go
go build -o /tmp/$3-osu ./bench/osu || true
rm -f $1/zzxpad_amd64.s $1/zzxpad_amd64.go
