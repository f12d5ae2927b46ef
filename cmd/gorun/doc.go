// Command gorun starts an MPI-style job: N rank processes of one program on
// this machine, or across the hosts --host or --hostfile name (or the nodes
// of the Slurm allocation it runs in).
//
//	gorun -np N [--host H[:SLOTS],... | --hostfile FILE] [--mca NAME VALUE]... [--tag-output] [--timeout D] PROGRAM [ARGS...]
//
// Hidden modes of the same executable: the remote helper that runs a
// host's ranks (launcher.HelperFlag), its self-check (launcher.VerifyFlag),
// and the janitor (launcher.JanitorArg).
//
// Its one job is to turn the command line into launcher.Options; the
// launcher package does everything else. Options come before PROGRAM, in any
// order; everything from PROGRAM on is the program's. Open MPI spellings
// with one dash (-np, -mca, -tag-output, -timeout) are accepted too.
//
// The root package is imported for its side effect: every component's
// parameter table is registered before the MCA parameters are resolved.
package main
