// Command hello is the smallest rank program: Init, one line, Finalize. The
// startup measurement (tests/startup) and the build-and-run tests use it.
package main

import (
	"fmt"
	"os"

	"github.com/gorun-mpi/gorun"
)

func main() {
	comm, err := gorun.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
	fmt.Printf("hello from rank %d of %d\n", comm.Rank(), comm.Size())
	if err := gorun.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}
