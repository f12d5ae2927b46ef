// Package tests holds gorun's job-level integration tests: each builds on
// the real gorun command and real rank programs (tests/progs), runs whole
// jobs in their own TMPDIR, and checks the contract's exit statuses,
// stderr lines and I/O rules, and that nothing is left behind (jobtest).
//
// Run: go test ./tests/  (about a minute on 2 cores).
package tests
