#!/bin/bash
# mk.sh WORKTREE PKGDIR K NAME: bench/osu with K never-called tiny functions (32 bytes each) in PKGDIR/aaa_xpad.go, as /tmp/NAME-osu
set -e
cd $1; pkg=$(basename $2); f=$2/aaa_xpad.go
{ printf 'package %s\n\nimport "os"\n\nvar xpadSink int\n' $pkg
  for i in $(seq 1 $3); do printf "\n//go:noinline\n//go:nosplit\nfunc xpad%d() { xpadSink++ }\n" $i; done
  printf '\nfunc init() {\n\tif os.Getenv("X_NEVER") == "1" {\n'
  for i in $(seq 1 $3); do printf '\t\txpad%d()\n' $i; done
  printf '\t}\n}\n'; } > $f
go build -o /tmp/$4-osu ./bench/osu
rm -f $f
