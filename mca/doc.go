// Package mca declares, resolves and hands out gorun's run-time parameters
// (Open MPI's "Modular Component Architecture" parameters).
//
// Its one job: turn declared parameter tables plus the user's settings into
// one immutable, validated Set of values, each remembering where it came from.
//
// Components declare a []Param table and pass it to Register from init, or
// to Declare from a package-level var. The launcher calls Resolve once (flags, environment,
// parameter files, defaults), prints the warnings, stops on an error, and
// hands the result to every rank as Set.Encode in the environment variable
// EnvResolved; ranks call Load, which decodes it (or, for a singleton started
// without gorun, resolves on its own).
//
// Sources, strongest first: --mca flags (a later flag overrides an earlier
// one), environment GORUN_MCA_<name> (name case-sensitive as declared),
// <WorkDir>/gorun-mca-params.conf, <Home>/.gorun/mca-params.conf, the
// default. Source strings are "flag", "env:GORUN_MCA_<name>", "file:PATH"
// and "default".
//
// Invariants:
//   - Every value in a Set has been parsed and validated against its Param;
//     a Set never changes after it is built, so concurrent reads are safe.
//   - Every value assigned by any source is validated, even one that a
//     stronger source overrides: a bad value anywhere is an error, and the
//     first one found (checking flags, env, the working-directory file, then
//     the home file) is reported as a *ParamError.
//   - Invalid values are rejected, never clamped or rewritten.
//   - An unknown parameter name is never an error, only a warning naming the
//     closest known parameter.
//   - Register panics on a programmer error (duplicate name, invalid
//     default); getters panic on an unregistered name or a type mismatch.
//     Input from outside (flags, env, files, Decode) never panics.
//
// The package does no I/O beyond reading the two parameter files, and
// logging through the loggers Logger returns.
package mca
