package jobenv

import (
	"errors"
	"io"
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
