// Package rankprog is the frame the integration tests' rank programs under
// tests/progs share: a program is a table of named modes, started as
// `gorun -np N PROG MODE`. A broken rule ends the rank with a message naming
// it and the rank on stderr and exit status 1, which the tests read.
package rankprog

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gorun-mpi/gorun"
)

// world is set by Start; Fail names its rank.
var world *gorun.Comm

// Fail prints the broken rule with this rank's number and exits 1.
func Fail(format string, a ...any) {
	rank := "?"
	if world != nil {
		rank = strconv.Itoa(world.Rank())
	}
	fmt.Fprintf(os.Stderr, "rank %s: %s\n", rank, fmt.Sprintf(format, a...))
	os.Exit(1)
}

// Check fails with what and err when err is not nil.
func Check(err error, what string) {
	if err != nil {
		Fail("%s: %v", what, err)
	}
}

// Start joins the job and picks the mode named by the program's first
// argument from modes; a failed Init, a missing or an unknown mode ends the
// rank.
func Start(prog string, modes map[string]func()) (w *gorun.Comm, mode string, run func()) {
	w, err := gorun.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Init:", err)
		os.Exit(1)
	}
	world = w
	if len(os.Args) < 2 {
		Fail("usage: %s MODE", prog)
	}
	mode = os.Args[1]
	run, ok := modes[mode]
	if !ok {
		Fail("unknown mode %q", mode)
	}
	return w, mode, run
}
