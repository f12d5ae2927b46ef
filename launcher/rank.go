package launcher

// Rank-side hooks, called by the root package inside rank processes.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/rndv"
)

// Environment variables gorun sets for every rank (besides mca.EnvResolved).
const (
	EnvRank       = "GORUN_RANK"
	EnvSize       = "GORUN_SIZE"
	EnvLocalRank  = "GORUN_LOCAL_RANK"
	EnvJobID      = "GORUN_JOBID"
	EnvSessionDir = "GORUN_SESSION_DIR"
	EnvLifelineFD = "GORUN_LIFELINE_FD"
)

// lifelineFD is the descriptor number of the lifeline in a rank.
const lifelineFD = 3

var rankInit struct {
	once sync.Once
	err  error
}

// RankInit is called once by gorun.Init in a rank started by gorun (GORUN_RANK
// set). It starts watching the launcher's lifeline so that the rank ends when
// gorun dies, even by SIGKILL: on end-of-file it removes the session
// directory and the job's shared-memory file, then exits with status 1.
// Later calls return the first call's result.
func RankInit() error {
	rankInit.once.Do(func() { rankInit.err = watchLifeline() })
	return rankInit.err
}

func watchLifeline() error {
	v, ok := os.LookupEnv(EnvLifelineFD)
	if !ok {
		return nil // not started by this gorun; Pdeathsig still covers us
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("launcher: %s=%q; want a descriptor number >= 3", EnvLifelineFD, v)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("launcher: %s=%d is not an open pipe (was the rank started by gorun?)", EnvLifelineFD, fd)
	}
	unix.CloseOnExec(fd) // the rank's own children must not hold it
	f := os.NewFile(uintptr(fd), "gorun-lifeline")
	dir, jobID := os.Getenv(EnvSessionDir), os.Getenv(EnvJobID)
	go func() {
		// gorun never writes: Read returns only when every write end is
		// closed, which is when gorun has exited.
		var b [1]byte
		for {
			if _, err := f.Read(b[:]); err != nil {
				break
			}
		}
		launcherGone(dir, jobID)
	}()
	return nil
}

// launcherGone cleans up after a dead launcher and ends the rank. Every rank
// does it; removing the same files twice is harmless.
func launcherGone(dir, jobID string) {
	if dir != "" && jobIDPattern.MatchString(jobID) && filepath.Base(dir) == jobID {
		removeJobFiles(dir, os.Getuid(), jobID, "")
		os.Remove(filepath.Dir(dir))
	}
	os.Exit(1)
}

// Abort ends the job from inside a rank: it records that this rank called
// Abort(code) so the launcher can say so, and exits the process with code
// when 1 ≤ code ≤ 255, 1 otherwise. Outside gorun it just exits by that rule.
func Abort(code int) {
	dir, rank := os.Getenv(EnvSessionDir), os.Getenv(EnvRank)
	if r, err := strconv.Atoi(rank); err == nil && r >= 0 && dir != "" {
		// Best effort: if the record cannot be written the launcher still
		// reports the exit status.
		rndv.WriteAtomic(abortPath(dir, r), []byte(strconv.Itoa(code)+"\n"))
	}
	os.Exit(abortStatus(code))
}

// abortStatus is the exit status of Abort(code).
func abortStatus(code int) int {
	if code < 1 || code > 255 {
		return 1
	}
	return code
}

func abortPath(dir string, rank int) string {
	return filepath.Join(dir, "abort."+strconv.Itoa(rank))
}

// readAbortRecord returns the code rank passed to Abort, or an error when
// it did not call Abort (or the record is malformed).
func readAbortRecord(dir string, rank int) (int, error) {
	f, err := os.Open(abortPath(dir, rank))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, err
	}
	return parseAbortRecord(data)
}

func parseAbortRecord(data []byte) (int, error) {
	s, ok := strings.CutSuffix(string(data), "\n")
	code, err := strconv.Atoi(s)
	if !ok || err != nil {
		return 0, errors.New("malformed abort record " + strconv.Quote(string(data)))
	}
	return code, nil
}
