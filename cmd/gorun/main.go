package main

import (
	"fmt"
	"os"

	_ "github.com/gorun-mpi/gorun" // registers every component's MCA parameters
	"github.com/gorun-mpi/gorun/launcher"
)

func main() {
	opts, help, err := parseArgs(os.Args[1:])
	switch {
	case help:
		fmt.Print(usage)
		os.Exit(0)
	case err != nil:
		fmt.Fprintf(os.Stderr, "gorun: %v\n%s", err, usageLine)
		os.Exit(launcher.ExitUsage)
	}
	opts.Stdin = os.Stdin
	os.Exit(launcher.Run(opts))
}
