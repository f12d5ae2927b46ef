// Package coll is gorun's collective layer (Open MPI's coll framework, with
// its base and tuned algorithms and libnbc's schedules, is the model). It
// uses the PML and nothing below it.
//
// Every algorithm is a Schedule: rounds of sends, receives and local
// reductions and copies over three buffers (the caller's send and receive
// buffers and a scratch buffer), counted in elements. Schedules are pure
// data built by pure functions of (communicator size, rank, root, counts),
// tested without a transport against a reference model (sim_test.go).
//
// One Engine per PML runs them: Start posts a schedule's first round on the
// communicator's hidden collective context, and the PML's progress (every
// Progress call, through a hook) advances each running schedule to its next
// round once every send and receive of the current one has completed. The
// blocking collectives are Start then Wait; the nonblocking ones hand the
// same operation out as a request. No goroutine is ever started.
//
// Schedules are built once per Key and cached by the engine (Schedule);
// operations, their request slots and scratch are pooled, so a collective
// called in a loop allocates nothing. The small blocking collectives of a
// communicator on one machine bypass the schedules: see package coll/shm.
//
// Invariants: a round's local steps run in order, before the round's
// sends and receives that follow them are posted; a round's receives are
// posted only after the previous round completed, so two messages from one
// peer within one collective always match in order. Each collective on a
// communicator has its own tag (its sequence number on the communicator), so
// outstanding collectives never take each other's messages.
package coll
