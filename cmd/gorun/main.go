package main

import (
	"fmt"
	"os"

	_ "github.com/gorun-mpi/gorun" // registers every component's MCA parameters
	"github.com/gorun-mpi/gorun/launcher"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == launcher.JanitorArg {
		os.Exit(launcher.RunJanitor(os.Args[2:]))
	}
	// Hidden modes: gorun's helper on a host of a job across machines.
	if len(os.Args) >= 2 && os.Args[1] == launcher.HelperFlag {
		os.Exit(launcher.RunHelper(os.Stdin, os.Stdout))
	}
	if len(os.Args) == 3 && os.Args[1] == launcher.VerifyFlag {
		os.Exit(launcher.VerifySelf(os.Args[2]))
	}
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
	if exe, err := os.Executable(); err == nil {
		opts.Janitor = exe // cleans up if gorun is killed
	}
	os.Exit(launcher.Run(opts))
}
