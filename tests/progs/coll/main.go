// Command coll checks the contract's communicators and collectives under
// the real launcher. Usage: gorun -np N coll MODE; it prints "MODE ok" on
// rank 0 and exits non-zero with a message naming the broken rule
// otherwise.
package main

import (
	"fmt"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

var world *gorun.Comm

var modes = map[string]func(){}

func main() {
	var mode string
	var f func()
	world, mode, f = rankprog.Start("coll", modes)
	f()
	rankprog.Check(gorun.Finalize(), "Finalize")
	if world.Rank() == 0 {
		fmt.Println(mode, "ok")
	}
}
