package tests

// The tests here build the launcher and the rank programs with `go build`
// while they run, which go test's result cache does not see: without these
// imports, `go test ./...` after a change to the runtime reported this
// package's last result, "(cached)", instead of running it. The blank
// imports make the packages those programs are built from part of the test
// binary, so that a change to any of them (the user API and everything
// below it, the launcher) runs the suite again. A change to a main
// package alone (cmd/gorun, tests/progs, examples) still needs -count=1.
import (
	_ "github.com/gorun-mpi/gorun"
	_ "github.com/gorun-mpi/gorun/launcher"
)
