package gorun

import (
	"time"

	"github.com/gorun-mpi/gorun/internal/node"
)

// epoch is Wtime's zero: the package's initialization. time.Now carries a
// monotonic reading, so time.Since(epoch) never goes backwards.
var epoch = time.Now()

// Wtime is the time in seconds on a monotonic clock, as MPI_Wtime: only
// differences between two calls mean anything (here, seconds since the
// process started its gorun package). Resolution: nanoseconds.
func Wtime() float64 { return time.Since(epoch).Seconds() }

// ProcessorName is this machine's name, the one SplitShared groups by:
// the hostname unless the job's wire-up names the machine otherwise.
func ProcessorName() string { return node.Name() }
