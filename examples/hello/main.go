package main

import (
	"fmt"
	"os"

	"github.com/gorun-mpi/gorun"
)

func main() {
	world, err := gorun.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hello: init: %v\n", err)
		os.Exit(1)
	}
	rank, size := world.Rank(), world.Size()
	if size < 1 || rank < 0 || rank >= size {
		fmt.Fprintf(os.Stderr, "hello: rank %d of %d is not a valid place in the world\n", rank, size)
		world.Abort(1)
	}
	fmt.Printf("hello from rank %d of %d\n", rank, size)
	if err := gorun.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "hello: rank %d: finalize: %v\n", rank, err)
		os.Exit(1)
	}
}
