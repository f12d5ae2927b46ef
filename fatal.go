package gorun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorun-mpi/gorun/jobenv"
)

// Errors are fatal (MPI's default handler, MPI_ERRORS_ARE_FATAL) when
// mpi_base_errors_fatal is true, for programs ported from C that never look
// at an error: every error an API call would return, except ErrCanceled and
// a context's own error (which a program asks for), is printed on stderr
// with the call's name and the job is aborted. Every exported function
// returns its error through fatalCheck.

// errorsFatal is mpi_base_errors_fatal, set once the parameters are read.
var errorsFatal atomic.Bool

// peerExitWait bounds how long a rank whose error came from a peer's exit
// (ErrPeerLost) waits for the launcher to end the job, so that gorun's
// exit status is the peer's, as the launcher's rules say, and not this
// rank's 1. The launcher stops every rank as soon as it reaps a failed
// one; a peer that exited with status 0 ends nothing, and then this rank
// exits with 1 after the wait.
const peerExitWait = 5 * time.Second

// fatalCheck returns err, unless errors are fatal and err is one the
// program did not ask for: then it reports err with the name of the API
// call that returned it and aborts the job (it does not return).
func fatalCheck(err error) error {
	if err == nil || !errorsFatal.Load() || exempt(err) {
		return err
	}
	abortOnError(apiCall(), err)
	return err
}

// exempt reports whether err is the program's own doing: a cancelled
// receive or a context's end. A joined error (WaitAll) is exempt only if
// every part is.
func exempt(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != nil && !exempt(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, ErrCanceled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// pkgPrefix is the prefix of this package's function names in stack frames.
const pkgPrefix = "github.com/gorun-mpi/gorun."

// apiCall names the exported call of this package that the program made:
// the outermost frame of this package (typed helpers call the byte ones)
// below the first frame outside it. "Comm.Send", "SendSlice", "Init".
func apiCall() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	name := ""
	for {
		f, more := frames.Next()
		rest, ok := strings.CutPrefix(f.Function, pkgPrefix)
		if !ok || strings.Contains(rest, "/") {
			if name != "" {
				break
			}
		} else {
			name = rest
		}
		if !more {
			break
		}
	}
	return callName(name)
}

// callName turns a frame's function name into the call as a user writes
// it: "(*Comm).Send" → "Comm.Send", "SendSlice[...]" → "SendSlice".
func callName(fn string) string {
	if i := strings.Index(fn, "["); i >= 0 {
		fn = fn[:i]
	}
	fn = strings.NewReplacer("(*", "", ")", "").Replace(fn)
	if fn == "" {
		return "gorun call"
	}
	return "gorun." + fn
}

// abortOnce makes concurrent fatal errors report once.
var abortOnce sync.Once

// abortOnError reports err from call and aborts the job with status 1 (see
// peerExitWait for a peer's exit). It does not return.
func abortOnError(call string, err error) {
	abortOnce.Do(func() {
		rank := "singleton"
		if r, ok := os.LookupEnv(jobenv.EnvRank); ok {
			rank = "rank " + r
		}
		fmt.Fprintf(os.Stderr, "gorun: %s: %s failed: %v\n", rank, call, err)
		if errors.Is(err, ErrPeerLost) {
			fmt.Fprintf(os.Stderr, "gorun: %s: the error comes from a peer's exit (mpi_base_errors_fatal is true); waiting for the launcher to end the job\n", rank)
			time.Sleep(peerExitWait)
		}
		fmt.Fprintf(os.Stderr, "gorun: %s: aborting the job (mpi_base_errors_fatal is true; set it to false to have errors returned)\n", rank)
		jobenv.Abort(1) // as Comm.Abort(1)
	})
	select {} // another goroutine is aborting
}
