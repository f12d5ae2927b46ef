#!/bin/bash
# mklay4.sh WORKTREE PKGDIR FILE NAME: mklay3.sh for any worktree;: bench/osu of the worktree with a small never-called Go function in PKGDIR/FILE
# (so that the functions of the files after FILE, in name order, move by 32 bytes), as /tmp/NAME-osu
set -e
cd $1; shift
pkg=$(basename $1)
printf 'package %s\n\nimport "os"\n\nvar xpadSink int\n\n//go:noinline\nfunc xpadGo() { xpadSink++ }\n\nfunc init() {\n\tif os.Getenv("X_NEVER") == "1" {\n\t\txpadGo()\n\t}\n}\n' $pkg > $1/$2
go build -o /tmp/$3-osu ./bench/osu || true
rm -f $1/$2
