// Command gorun starts an MPI-style job: N rank processes of one program on
// this machine.
//
//	gorun -np N [--mca NAME VALUE]... [--tag-output] [--timeout D] PROGRAM [ARGS...]
//
// Its one job is to turn the command line into launcher.Options; the
// launcher package does everything else. Options come before PROGRAM, in any
// order; everything from PROGRAM on is the program's. Open MPI spellings
// with one dash (-np, -mca, -tag-output, -timeout) are accepted too.
//
// The root package is imported for its side effect: every component's
// parameter table is registered before the MCA parameters are resolved.
package main
