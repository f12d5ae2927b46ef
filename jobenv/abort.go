package jobenv

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gorun-mpi/gorun/rndv"
)

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

// ReadAbort returns the code rank passed to Abort, or an error when
// it did not call Abort (or the record is malformed).
func ReadAbort(dir string, rank int) (int, error) {
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

// RecordFinalize records, for the launcher, that this rank called
// gorun.Finalize: a rank that called Init and ends without Finalize is a
// failure of the job even with status 0 (as in Open MPI). Outside gorun it
// does nothing. Best effort, like Abort's record.
//
// The record is the rank's business card renamed to "finalized.<rank>":
// by then every rank has passed Init, so nobody reads the cards any more,
// and a rename makes no new file (with N ranks, creating N files in the
// session directory cost ext4 more for each as the job grew). A rank
// without a card (a PMI job, or a test program) writes an empty record.
func RecordFinalize() {
	dir, rank := os.Getenv(EnvSessionDir), os.Getenv(EnvRank)
	if r, err := strconv.Atoi(rank); err == nil && r >= 0 && dir != "" {
		if os.Rename(rndv.CardPath(dir, r), finalizePath(dir, r)) != nil {
			rndv.WriteAtomic(finalizePath(dir, r), nil)
		}
	}
}

func finalizePath(dir string, rank int) string {
	return filepath.Join(dir, "finalized."+strconv.Itoa(rank))
}

// Unfinalized reports whether rank, by the files in the session directory
// dir, called Init (it published its business card) but not Finalize.
func Unfinalized(dir string, rank int) bool {
	if _, err := os.Lstat(rndv.CardPath(dir, rank)); err != nil {
		return false
	}
	_, err := os.Lstat(finalizePath(dir, rank))
	return errors.Is(err, fs.ErrNotExist)
}

// Joined reports whether rank, by the files in the session directory dir,
// called Init: its business card is there, or its Finalize record.
func Joined(dir string, rank int) bool {
	for _, p := range []string{rndv.CardPath(dir, rank), finalizePath(dir, rank)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
