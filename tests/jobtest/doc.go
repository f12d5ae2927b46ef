// Package jobtest runs real gorun jobs for the job-level tests: it builds
// the gorun command and the rank programs of tests/progs once (Setup, from
// TestMain), runs jobs with their own TMPDIR, and checks after each job
// that nothing is left behind.
//
// Invariant: every job started through this package is checked, from
// t.Cleanup, for leftovers: no process whose environment has
// GORUN_SESSION_DIR under the job's TMPDIR, no session directory
// ($TMPDIR/gorun-<uid>), and no /dev/shm/gorun-<uid>-<jobid>.seg of a job
// of that gorun (job ids start with gorun's pid).
package jobtest
