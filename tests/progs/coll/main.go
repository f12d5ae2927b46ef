// Command coll checks the contract's communicators and collectives under
// the real launcher. Usage: gorun -np N coll MODE; it prints "MODE ok" on
// rank 0 and exits non-zero with a message naming the broken rule
// otherwise.
package main

import (
	"fmt"
	"os"

	"github.com/gorun-mpi/gorun"
)

var world *gorun.Comm

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "rank %d: %s\n", world.Rank(), fmt.Sprintf(format, a...))
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

var modes = map[string]func(){}

func main() {
	var err error
	world, err = gorun.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Init:", err)
		os.Exit(1)
	}
	if len(os.Args) < 2 {
		fail("usage: coll MODE")
	}
	mode := os.Args[1]
	f, ok := modes[mode]
	if !ok {
		fail("unknown mode %q", mode)
	}
	f()
	check(gorun.Finalize(), "Finalize")
	if world.Rank() == 0 {
		fmt.Println(mode, "ok")
	}
}
