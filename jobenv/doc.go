// Package jobenv is the rank's side of what gorun and its ranks agree on:
// the environment variables gorun sets for every rank, the lifeline that
// ends a rank when gorun dies, the Abort and Finalize records, and where a job's files
// live (so that both the launcher and a rank whose launcher died can
// remove them).
//
// It is small on purpose: rank programs link it, and must not link the
// launcher.
//
// Invariants:
//   - Read never panics on a malformed environment; it returns an error
//     naming the variable.
//   - RemoveJobFiles removes only regular files named by the job's
//     convention or its segment descriptor, and the session directory.
package jobenv
