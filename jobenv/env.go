package jobenv

import (
	"fmt"
	"os"
	"strconv"
)

// Environment variables gorun sets for every rank (besides mca.EnvResolved).
const (
	EnvRank       = "GORUN_RANK"
	EnvSize       = "GORUN_SIZE"
	EnvLocalRank  = "GORUN_LOCAL_RANK"
	EnvLocalSize  = "GORUN_LOCAL_SIZE"
	EnvJobID      = "GORUN_JOBID"
	EnvSessionDir = "GORUN_SESSION_DIR"
	EnvLifelineFD = "GORUN_LIFELINE_FD"
)

// LocalSize is how many ranks of the job gorun started on this machine
// (EnvLocalSize), or ok false when it did not say or said something that
// is not a count.
func LocalSize() (n int, ok bool) {
	n, err := strconv.Atoi(os.Getenv(EnvLocalSize))
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// LifelineFD is the descriptor number of the lifeline in a rank.
const LifelineFD = 3

// Job is what gorun tells a rank through its environment.
type Job struct {
	Rank, Size, LocalRank int
	JobID, SessionDir     string
}

// Read returns the job of this process. inJob is false when GORUN_RANK is
// unset: a singleton, rank 0 of 1. A malformed variable is an error naming it.
func Read() (job Job, inJob bool, err error) {
	rs, ok := os.LookupEnv(EnvRank)
	if !ok {
		return Job{Rank: 0, Size: 1}, false, nil
	}
	num := func(name, v string, min int) int {
		n, perr := strconv.Atoi(v)
		if (perr != nil || n < min) && err == nil {
			err = fmt.Errorf("gorun: environment variable %s=%q is not an integer ≥ %d (is this process started by gorun?)", name, clip(v), min)
		}
		return n
	}
	job.Rank = num(EnvRank, rs, 0)
	job.Size = num(EnvSize, os.Getenv(EnvSize), 1)
	job.LocalRank = num(EnvLocalRank, os.Getenv(EnvLocalRank), 0)
	job.JobID = os.Getenv(EnvJobID)
	job.SessionDir = os.Getenv(EnvSessionDir)
	if err == nil && job.Rank >= job.Size {
		err = fmt.Errorf("gorun: %s=%d is not below %s=%d", EnvRank, job.Rank, EnvSize, job.Size)
	}
	if err == nil && (job.JobID == "" || job.SessionDir == "") {
		err = fmt.Errorf("gorun: %s and %s must be set with %s (is this process started by gorun?)", EnvJobID, EnvSessionDir, EnvRank)
	}
	return job, true, err
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
