package sm

import (
	"sync/atomic"

	"github.com/gorun-mpi/gorun/internal/relaxed"
)

// storeSeq publishes a slot or a fast-box record with release order: a
// receiver that loads the new value (with an atomic Load) then sees every
// store the sender made before it (the contents). atomic.Store would give
// that too, but on amd64 it is an XCHG, which waits for the slot's cache
// lines to arrive from the receiver's core before the sender may go on;
// relaxed.Store64 is a plain store there (its package doc says which
// guarantees beyond the Go memory model that relies on).
//
// What it does not give (a store followed by a load of another word, the
// Dekker pattern of the sleep protocol) comes from the CAS in claim, a
// locked instruction and so a full fence (see publish), and for fast boxes
// from Sleep's second look (see boxOut.publish).
func storeSeq(w *atomic.Uint64, v uint64) { relaxed.Store64(w, v) }
